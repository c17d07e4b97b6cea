"""Toy models and exact laws behind the theory chapter (notebooks ``T1`` ... ``T7``).

Everything here is numpy (scipy where a solver is needed), float64, and small enough to run on a
laptop CPU in seconds. The notebooks import it as ``from initmem import theory`` and use every name from here.

The theory layer sits beside the study: it may import :mod:`initmem.base` only (the constants it shares with the
optimizers are in :mod:`initmem.base.constants`), never :mod:`initmem.run` (torch), :mod:`initmem.study` or
:mod:`initmem.book`; its independent BatchNorm check imports torch itself, inside the function.

Conventions
-----------
* A *batch of runs* is an array with a leading run axis ``R``: parameters have shape ``(R, *shape)``
  (``shape = (d,)`` for vectors, ``(k, d)`` for matrices). Runs in one call share the minibatch
  sequence, so runs that differ only in ``sigma`` see exactly the same data order.
* ``eta`` is the learning rate per step (a float, or an array of shape ``(steps,)`` for a schedule),
  ``b`` the batch size, ``lam`` the weight-decay coefficient (per unit learning rate, as in PyTorch).
* The three forgetting clocks of the paper (also in :mod:`initmem.run.metrics`), accumulated over steps::

      T_SGD = (1/b) sum_k eta_k^2,   T_L2 = lam * sum_k eta_k,   T_adapt = sum_k eta_k .

* ``sigma`` (the init scale) multiplies a fixed standard direction drawn as N(0, 1/fan_in) per entry,
  so ``||w_0|| ~= sigma`` for vectors and each row of a matrix has norm ~= sigma.

Modules (their names are all re-exported here)
-------------------------------------------------
1. ``initmem.theory.helpers``: schedules, clocks, minibatch indices, log-log slopes
2. ``initmem.theory.toys``: :class:`NormalizedLogistic` (scale invariant; Appendix A of the theory notes),
   :class:`NormalizedSoftmax` (per-row normalized, the matrix analogue of a BN-fed layer) and
   :class:`LinearLoss` (a constant gradient plus minibatch noise, for adaptive-optimizer regimes)
3. ``initmem.theory.optimizers``, on those toys: :func:`sgd`, :func:`adam`, :func:`adamw`, :func:`muon`, :func:`ns5`, and the
   laws they are checked against (norm law, equilibria, Adam's step bound)
4. ``initmem.theory.diagonal``: diagonal linear networks and Woodworth et al.'s ``Q_alpha``
5. ``initmem.theory.backward_error``: modified flows, the Smith et al. SGD modified loss, heavy-ball roots
6. ``initmem.theory.checks``, independent checks: finite-difference gradients (:func:`fd_gradient_error`) and a small PyTorch
   BatchNorm MLP trained by ``torch.optim.SGD`` (:func:`bn_mlp`, :func:`bn_mlp_sgd_record`), against which the
   toys' laws are tested without relying on the toys' closed-form gradients
"""

from __future__ import annotations

import types as _types

from .backward_error import (  # noqa: F401
    LinearRegression,
    TwoParamToy,
    flow_endpoint,
    gd_endpoint,
    heavy_ball_rate_prediction,
    heavy_ball_slow_root,
    igr_field,
    linear_flow_endpoint,
    make_linear_regression,
    sgd_epoch_mean,
)
from .checks import (  # noqa: F401
    bn_mlp,
    bn_mlp_data,
    bn_mlp_sgd_record,
    fd_gradient,
    fd_gradient_error,
)
from .diagonal import (  # noqa: F401
    diag_net_gd,
    make_sparse_regression,
    min_l1_interpolant,
    min_l2_interpolant,
    q_alpha,
    solve_q_alpha,
)
from .helpers import (  # noqa: F401
    as_schedule,
    batch_indices,
    clocks,
    direction_difference,
    init_scaled,
    log_record_steps,
    loglog_slope,
    time_average,
    unit_rows,
)
from .optimizers import (  # noqa: F401
    NS5_COEFFS,
    Trajectory,
    adam,
    adam_step_bound,
    adamw,
    adamw_equilibrium_norm,
    forgetting_step,
    muon,
    norm4_law_rhs,
    norm_step_residual,
    ns5,
    ns5_gain_bound,
    operator_norm,
    sgd,
    sgd_equilibrium_norm4,
)
from .toys import (  # noqa: F401
    LinearLoss,
    NormalizedLogistic,
    NormalizedSoftmax,
    make_linear_loss,
    make_normalized_logistic,
    make_normalized_softmax,
)

#: Every name imported above from the modules (not the modules themselves), in import order.
__all__ = [
    name
    for name, value in globals().items()
    if not name.startswith("_") and name != "annotations" and not isinstance(value, _types.ModuleType)
]
