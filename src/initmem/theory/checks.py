"""Independent checks: finite-difference gradients (:func:`fd_gradient_error`) and a small PyTorch BatchNorm MLP
trained by ``torch.optim.SGD`` (:func:`bn_mlp`, :func:`bn_mlp_sgd_record`), against which the toys' laws are
tested without relying on the toys' closed-form gradients.

Conventions: :mod:`initmem.theory`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

import numpy as np

from .helpers import batch_indices

logger = logging.getLogger(__name__)

Array = np.ndarray


def fd_gradient(loss: Callable[[Array], float], w: Array, h: float = 1e-6) -> Array:
    """Central finite-difference gradient ``(L(w + h e_j) - L(w - h e_j)) / 2h`` of a scalar loss, every coordinate.

    ``w``: any shape (one run, not a batch of runs); returns an array of the same shape. Error: ``O(h^2)``
    truncation plus ``O(eps_machine |L| / h)`` rounding.
    """
    w = np.asarray(w, dtype=np.float64)
    out = np.empty(w.shape)
    for j in np.ndindex(w.shape):
        e = np.zeros(w.shape)
        e[j] = h
        out[j] = (float(loss(w + e)) - float(loss(w - e))) / (2 * h)
    return out


def fd_gradient_error(problem, w: Array, idx: Array | None = None, h: float = 1e-6) -> float:
    """``||g_fd - g|| / ||g||``: the toy's closed-form minibatch gradient ``problem.grad(w, idx)`` against central
    differences of its loss ``problem.loss(., idx)`` (:func:`fd_gradient`). ``w``: one run, shape ``problem.shape``.

    An independent check of the gradient code: the identities of a scale-invariant loss (orthogonality,
    ``-1``-homogeneity, ``H w = -g``) hold for the closed-form gradient by construction, and they are statements
    about the loss only if that gradient is the loss's gradient.
    """
    g = np.asarray(problem.grad(w, idx), dtype=np.float64)
    fd = fd_gradient(lambda v: problem.loss(v, idx), w, h)
    return float(np.linalg.norm(fd - g) / np.linalg.norm(g))


def bn_mlp(n_in: int = 16, width: int = 32, n_cls: int = 4, bn_eps: float = 1e-12):
    """A float64 PyTorch MLP ``Linear -> BN -> ReLU -> Linear -> BN -> ReLU -> Linear(head)``.

    The two hidden kernels (``"0.weight"``, ``"3.weight"``) have no bias and feed a BatchNorm, so in training
    mode the loss is invariant to scaling each of their rows (up to BatchNorm's ``bn_eps``; the PyTorch default
    ``1e-5`` is a small non-invariance). The head (``"6.weight"``, with a bias) is not scale invariant.
    Initialize it with :func:`initmem.run.sigma_w.init_sigma_w_`.
    """
    from torch import nn

    return nn.Sequential(
        nn.Linear(n_in, width, bias=False),
        nn.BatchNorm1d(width, eps=bn_eps),
        nn.ReLU(),
        nn.Linear(width, width, bias=False),
        nn.BatchNorm1d(width, eps=bn_eps),
        nn.ReLU(),
        nn.Linear(width, n_cls),
    ).double()


def bn_mlp_data(n: int = 256, n_in: int = 16, n_cls: int = 4, seed: int = 0):
    """Teacher data for :func:`bn_mlp`: ``X ~ N(0, I)`` of shape ``(n, n_in)`` (float64 tensor) and labels
    ``argmax(tanh(X T) + 0.3 noise)`` in ``0 .. n_cls-1`` (int64 tensor), for a Gaussian teacher ``T``."""
    import torch

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_in))
    teacher = rng.standard_normal((n_in, n_cls))
    y = np.argmax(np.tanh(X @ teacher) + 0.3 * rng.standard_normal((n, n_cls)), 1)
    return torch.tensor(X), torch.tensor(y)


def bn_mlp_sgd_record(
    model, X, y, eta: float, b: int, steps: int, seed: int = 0, lrs: Mapping[str, float] | None = None
) -> dict[str, dict[str, Array]]:
    """Train ``model`` (training mode) with ``torch.optim.SGD(lr=eta)`` (no momentum, no decay) on cross-entropy over
    the minibatches :func:`~initmem.theory.helpers.batch_indices` ``(len(X), b, steps, seed)``; record every 2-d weight (the kernels).

    ``lrs``: learning rates of named parameters that do not train at ``eta`` (``{"0.weight": eta / sigma**2}``: a
    twin whose hidden kernels train at the rate that a scale sigma gives them, as in T1).

    Returns ``{name: {"sq_norm": ||W_k||^2 (steps+1,), "inner": <W_k, g_k> (steps,), "grad_sq": ||g_k||^2 (steps,)}}``
    with ``g_k`` the autograd gradient at step ``k`` (Frobenius norms and inner products). Nothing here uses the
    toys' formulas: the norm law is tested on what PyTorch computes (:func:`~initmem.theory.optimizers.norm_step_residual`).
    """
    import torch

    model.train()
    named = dict(model.named_parameters())
    lrs = dict(lrs or {})
    if set(lrs) - set(named):
        raise ValueError(f"lrs: {sorted(set(lrs) - set(named))} are not parameters of the model; it has {list(named)}")
    kernels = {name: p for name, p in named.items() if p.ndim == 2}
    groups = [{"params": [p for name, p in named.items() if name not in lrs], "lr": eta}]
    groups += [{"params": [named[name]], "lr": lr} for name, lr in lrs.items()]
    opt = torch.optim.SGD([g for g in groups if g["params"]], lr=eta)
    order = batch_indices(len(X), b, steps, seed)
    rec = {
        name: {"sq_norm": [float(p.detach().pow(2).sum())], "inner": [], "grad_sq": []} for name, p in kernels.items()
    }
    for k in range(steps):
        idx = torch.as_tensor(order[k])
        loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        with torch.no_grad():
            for name, p in kernels.items():
                rec[name]["inner"].append(float((p * p.grad).sum()))
                rec[name]["grad_sq"].append(float(p.grad.pow(2).sum()))
        opt.step()
        with torch.no_grad():
            for name, p in kernels.items():
                rec[name]["sq_norm"].append(float(p.pow(2).sum()))
    return {name: {key: np.array(v) for key, v in r.items()} for name, r in rec.items()}
