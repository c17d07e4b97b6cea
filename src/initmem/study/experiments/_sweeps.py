"""What the experiments' sweep specs share: the parameters every run takes from its notebook, and their checks."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from ...base.messages import shown

__all__ = ["NETWORK", "STEP_SCHEDULE", "base", "positive_int", "positive_ints"]

_DATA = ("data", "image_size", "train_size", "val_size", "test_size", "train_eval_size", "augment")
_RUN = ("eval_every", "warmup_epochs", "num_threads")

#: The network and its training length, which most experiments take from their parameters as they are.
NETWORK = ("model", "width", "logit_scale", "batch_size", "epochs")
#: A step schedule's settings.
STEP_SCHEDULE = ("schedule", "schedule_milestones", "schedule_gamma")


def base(p: Mapping[str, Any], *names: str, **fixed: Any) -> dict[str, Any]:
    """The spec's ``base``: the named parameters, the data and execution ones, and ``fixed`` values."""
    values = {name: p[name] for name in (*names, *_DATA, *_RUN)}
    return {**values, **fixed, "progress": False}


def positive_ints(p: Mapping[str, Any], name: str) -> list[int]:
    """Parameter ``name``, which must be a non-empty list of positive integers (horizons, batch sizes, epochs).

    Raises:
        ValueError: ``"<name>: must be a list of positive integers, e.g. [32, 512]; got <value>"``.
    """
    values = p[name]
    if not (isinstance(values, (list, tuple)) and values and all(positive_int(v) for v in values)):
        raise ValueError(f"{name}: must be a list of positive integers, e.g. [32, 512]; got {shown(values)}")
    return [int(v) for v in values]


def positive_int(value: Any) -> bool:
    """Whether ``value`` is an integer (numpy's too; not a bool, a float or a string) above 0."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0
