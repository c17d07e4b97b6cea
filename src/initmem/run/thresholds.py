"""The declared thresholds that turn a run's numbers into yes/no facts: interpolation and divergence.

Plain Python (no torch), so that the analysis of committed results reads them without importing the trainer.

* :data:`INTERPOLATION_THRESHOLD` -- a run interpolates when its training accuracy reaches 99.5 %.
* :data:`DIVERGENCE_FACTOR` -- a run has diverged when a loss or its kernel norm is not finite, or exceeds this
  factor times its value at initialisation (epoch 0), anywhere in the run: a training batch's loss, the recorded
  train/validation/test losses, or the recorded kernel norm. A run at ``lr = 1e6`` whose losses reach 1e29 and whose
  norms reach 1e17 while its accuracy sits at chance is such a run, though each number is finite.
"""

from __future__ import annotations

import math

__all__ = ["INTERPOLATION_THRESHOLD", "DIVERGENCE_FACTOR", "exploded"]

#: Training accuracy (percent) at which a run counts as interpolating.
INTERPOLATION_THRESHOLD = 99.5
#: A loss or kernel norm above this factor times its epoch-0 value means the run diverged.
DIVERGENCE_FACTOR = 1e6


def exploded(value: float, initial: float, factor: float = DIVERGENCE_FACTOR) -> bool:
    """Whether ``value`` (a loss or a norm) is not finite, or its magnitude exceeds ``factor`` times that of
    ``initial`` (its value at initialisation; a non-finite or zero ``initial`` only checks finiteness).

    >>> exploded(2.0e7, 2.3), exploded(1.0e3, 2.3), exploded(float("nan"), 2.3)
    (True, False, True)
    """
    if not math.isfinite(value):
        return True
    if not math.isfinite(initial) or initial == 0:
        return False
    return abs(value) > factor * abs(initial)
