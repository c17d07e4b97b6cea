"""Toy models and exact laws behind the theory chapters (notebooks ``T1`` ... ``T7``, the book's Theory part).

numpy (scipy where a solver is needed), float64, seconds on a laptop CPU; used as ``from initmem import theory``.
It may import :mod:`initmem.base` only; its independent BatchNorm check imports torch inside the function.

Conventions: a *batch of runs* has a leading run axis ``R``, parameters ``(R, *shape)`` (``(d,)`` for vectors,
``(k, d)`` for matrices), and runs in one call share the minibatch sequence; ``eta`` is the learning rate per step
(a float or a ``(steps,)`` schedule), ``b`` the batch size, ``lam`` the decay per unit learning rate (as in
PyTorch); ``sigma`` multiplies a fixed direction drawn N(0, 1/fan_in) per entry, so ``||w_0|| ~= sigma`` (per row
for a matrix); the clocks are those of :mod:`initmem.run.metrics`.

Modules, all re-exported here: ``helpers`` (schedules, clocks, minibatch indices, slopes), ``toys``
(:class:`NormalizedLogistic`, :class:`NormalizedSoftmax`, :class:`LinearLoss`), ``optimizers`` (:func:`sgd`,
:func:`adam`, :func:`adamw`, :func:`muon`, :func:`ns5` and their laws), ``diagonal``, ``backward_error`` and
``checks`` (:func:`fd_gradient_error`, :func:`bn_mlp`, :func:`bn_mlp_sgd_record`: tests independent of the toys).
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
