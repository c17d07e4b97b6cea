"""Scale-invariant toys: :class:`NormalizedLogistic` (Appendix A of the theory notes), :class:`NormalizedSoftmax`
(per-row normalized, the matrix analogue of a BatchNorm-fed layer) and :class:`LinearLoss` (a constant gradient
plus minibatch noise, for the adaptive-optimizer regimes).

Conventions: :mod:`initmem.theory`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from .helpers import unit_rows

logger = logging.getLogger(__name__)

Array = np.ndarray


@dataclass(frozen=True)
class NormalizedLogistic:
    """Logistic regression on the *direction* of ``w``: ``L(w) = mean_i log(1 + exp(-s y_i <x_i, w/||w||>))``.

    ``L(c w) = L(w)`` for every ``c > 0`` -- the one-vector model of a BatchNorm-fed layer (Appendix A of
    the theory notes). Shapes: ``X`` (N, d), ``y`` (N,) in {-1, +1}; ``s`` is a fixed logit temperature.
    Parameters passed to the methods have shape ``(d,)`` or ``(R, d)`` (a batch of runs).
    """

    X: Array
    y: Array
    s: float = 5.0

    @property
    def N(self) -> int:
        return self.X.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.X.shape[1],)

    def _margins(self, w: Array, idx: Array | None) -> tuple[Array, Array, Array, Array]:
        X = self.X if idx is None else self.X[idx]
        y = self.y if idx is None else self.y[idx]
        u = unit_rows(w, (-1,))
        z = self.s * y * (u @ X.T)  # (..., b)
        return X, y, u, z

    def loss(self, w: Array, idx: Array | None = None) -> Array:
        """Mean loss over ``idx`` (all samples if None); shape ``w.shape[:-1]``."""
        _, _, _, z = self._margins(w, idx)
        return np.logaddexp(0.0, -z).mean(-1)

    def grad(self, w: Array, idx: Array | None = None) -> Array:
        """Minibatch gradient, same shape as ``w``; tangential (``<w, g> = 0``) and of size ``1/||w||``."""
        X, y, u, z = self._margins(w, idx)
        coef = -(self.s * y) * expit(-z)  # d loss_i / d <x_i, u>
        gu = coef @ X / X.shape[0]
        r = np.linalg.norm(w, axis=-1, keepdims=True)
        return (gu - u * np.sum(u * gu, axis=-1, keepdims=True)) / r

    def accuracy(self, w: Array, X: Array | None = None, y: Array | None = None) -> Array:
        """Fraction of samples with ``sign <x, w> == y`` (default: the training set)."""
        X = self.X if X is None else X
        y = self.y if y is None else y
        return np.mean(np.sign(w @ X.T) == y, axis=-1)

    def unit_sample_grads(self, w: Array) -> Array:
        """Per-sample gradients at the unit vector ``w/||w||``: shape ``(*w.shape[:-1], N, d)``."""
        X, y, u, z = self._margins(w, None)
        coef = -(self.s * y) * expit(-z)  # (..., N)
        gi = coef[..., None] * X  # (..., N, d)
        return gi - u[..., None, :] * np.sum(gi * u[..., None, :], axis=-1, keepdims=True)

    def unit_grad_stats(self, w: Array) -> tuple[Array, Array]:
        """``(||grad L(w_hat)||^2, tr Sigma(w_hat))`` at the unit vector, each of shape ``w.shape[:-1]``.

        ``Sigma`` is the per-sample gradient covariance (normalized by N). The expected squared minibatch
        gradient at unit norm is ``E G = ||grad L||^2 + (N-b)/(N-1) * tr Sigma / b``.
        """
        gi = self.unit_sample_grads(w)
        gbar = gi.mean(-2)
        tr = np.mean(np.sum((gi - gbar[..., None, :]) ** 2, axis=-1), axis=-1)
        return np.sum(gbar**2, axis=-1), tr


def make_normalized_logistic(
    N: int = 512, d: int = 50, s: float = 5.0, label_noise: float = 0.5, seed: int = 0
) -> NormalizedLogistic:
    """Appendix A's toy: Gaussian inputs, labels ``sign(<x, w_teacher> + label_noise * noise)``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    wt = rng.standard_normal(d)
    y = np.sign(X @ wt + label_noise * rng.standard_normal(N))
    y[y == 0] = 1.0
    return NormalizedLogistic(X=X, y=y, s=s)


@dataclass(frozen=True)
class NormalizedSoftmax:
    """Softmax regression whose logits use unit rows: ``logit_ij = s <x_i, w_j / ||w_j||>``.

    Parameters ``W`` have shape ``(k, d)`` or ``(R, k, d)``. Each row is scale invariant on its own, like
    a linear layer followed by a per-channel normalization; so ``L(c W) = L(W)`` and
    ``grad L(c W) = grad L(W) / c``. ``X`` (N, d), integer labels ``y`` (N,) in ``0 .. k-1``.
    """

    X: Array
    y: Array
    k: int
    s: float = 4.0

    @property
    def N(self) -> int:
        return self.X.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.k, self.X.shape[1])

    def _probs(self, W: Array, X: Array) -> tuple[Array, Array]:
        U = unit_rows(W, (-1,))
        logits = self.s * np.einsum("nd,...kd->...nk", X, U)
        logits = logits - logits.max(-1, keepdims=True)
        P = np.exp(logits)
        return U, P / P.sum(-1, keepdims=True)

    def predict_proba(self, W: Array, X: Array | None = None) -> Array:
        """Class probabilities, shape ``(..., N, k)``."""
        return self._probs(W, self.X if X is None else X)[1]

    def loss(self, W: Array, idx: Array | None = None) -> Array:
        """Mean cross-entropy over ``idx`` (all samples if None); shape ``W.shape[:-2]``."""
        X = self.X if idx is None else self.X[idx]
        y = self.y if idx is None else self.y[idx]
        P = self._probs(W, X)[1]
        return -np.log(np.take_along_axis(P, np.broadcast_to(y[:, None], P.shape[:-1] + (1,)), -1)[..., 0]).mean(-1)

    def grad(self, W: Array, idx: Array | None = None) -> Array:
        """Minibatch gradient, same shape as ``W``; each row is orthogonal to its weight row."""
        X = self.X if idx is None else self.X[idx]
        y = self.y if idx is None else self.y[idx]
        U, P = self._probs(W, X)
        P[..., np.arange(len(y)), y] -= 1.0
        gU = self.s * np.einsum("...nk,nd->...kd", P, X) / len(y)
        r = np.linalg.norm(W, axis=-1, keepdims=True)
        return (gU - U * np.sum(U * gU, axis=-1, keepdims=True)) / r

    def accuracy(self, W: Array, X: Array | None = None, y: Array | None = None) -> Array:
        """Fraction of samples whose largest logit is the label (default: the training set)."""
        X = self.X if X is None else X
        y = self.y if y is None else y
        return np.mean(np.argmax(self.predict_proba(W, X), -1) == y, axis=-1)


def make_normalized_softmax(
    N: int = 512,
    N_test: int = 2000,
    d: int = 20,
    k: int = 5,
    s: float = 4.0,
    label_noise: float = 1.0,
    seed: int = 0,
) -> tuple[NormalizedSoftmax, Array, Array]:
    """A teacher-labelled k-class problem: returns ``(problem, X_test, y_test)``.

    Inputs N(0, I_d); labels ``argmax_j (<x, w*_j> + label_noise * noise_j)`` with a Gaussian teacher.
    """
    rng = np.random.default_rng(seed)
    Wt = rng.standard_normal((k, d))

    def draw(n: int) -> tuple[Array, Array]:
        X = rng.standard_normal((n, d))
        return X, np.argmax(X @ Wt.T + label_noise * rng.standard_normal((n, k)), -1)

    X, y = draw(N)
    X_test, y_test = draw(N_test)
    return NormalizedSoftmax(X=X, y=y, k=k, s=s), X_test, y_test


@dataclass(frozen=True)
class LinearLoss:
    """``L(w) = mean_i <a_i, w>``: a gradient that does not depend on ``w`` (a stationary signal plus noise).

    The minibatch gradient is the mean of ``b`` rows of ``A`` (N, d): its mean is ``a_bar = A.mean(0)`` and each
    coordinate's variance is ``(N-b)/(N-1) * var_j / b``. With ``a_bar = 0`` every update is pure noise (the
    random-walk regime of an adaptive optimizer); with ``|a_bar_j|`` large against the noise, updates are coherent.
    """

    A: Array

    @property
    def N(self) -> int:
        return self.A.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.A.shape[1],)

    def grad(self, w: Array, idx: Array | None = None) -> Array:
        """Minibatch gradient broadcast to the shape of ``w``."""
        rows = self.A if idx is None else self.A[idx]
        return np.broadcast_to(rows.mean(0), w.shape).copy()


def make_linear_loss(N: int = 512, d: int = 50, mean: float = 0.0, seed: int = 0) -> LinearLoss:
    """Rows ``a_i = mean * 1 + xi_i`` with ``xi_i`` standard normal, centred so that ``A.mean(0) = mean * 1``
    exactly."""
    xi = np.random.default_rng(seed).standard_normal((N, d))
    return LinearLoss(A=mean + xi - xi.mean(0))
