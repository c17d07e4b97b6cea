"""Numbers that the trainer (torch, :mod:`initmem.run`) and the theory (numpy, :mod:`initmem.theory`) share, kept
here, free of torch, so that the theory imports nothing from ``run``.

* :data:`NS_COEFFICIENTS` -- Muon's quintic Newton-Schulz coefficients (a, b, c), used by
  :func:`initmem.run.optim.muon.zeropower_via_newtonschulz5` and :func:`initmem.theory.optimizers.ns5`.
"""

from __future__ import annotations

__all__ = ["NS_COEFFICIENTS"]

#: Jordan's quintic Newton-Schulz coefficients (a, b, c): ``X <- a X + (b A + c A^2) X`` with ``A = X X^T``.
NS_COEFFICIENTS: tuple[float, float, float] = (3.4445, -4.7750, 2.0315)
