"""The tiny run that the tests which train share: a width-4 ResNet-9 on 200 synthetic 16-px images in batches of 50,
one thread on the CPU (about a second an epoch), as config fields (:data:`TINY_RUN`) and as the ``train`` command's
flags (:data:`TINY_FLAGS`). Each test adds what it varies (epochs, lr, optimizer...)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The data: 200 training images and 100 of each evaluation split, synthetic, 16 px.
TINY_DATA: dict[str, Any] = dict(
    data="synthetic", image_size=16, train_size=200, val_size=100, test_size=100, train_eval_size=100
)
#: The run's fields besides what a test varies.
TINY_RUN: dict[str, Any] = dict(
    model="resnet9", width=4, **TINY_DATA, batch_size=50, progress=False, num_threads=1, device="cpu"
)


def as_flags(fields: Mapping[str, Any]) -> list[str]:
    """``{"train_size": 200, "progress": False}`` -> ``["--train-size", "200", "--no-progress"]``."""
    flags: list[str] = []
    for name, value in fields.items():
        flag = name.replace("_", "-")
        if isinstance(value, bool):
            flags.append(f"--{flag}" if value else f"--no-{flag}")
        else:
            flags += [f"--{flag}", str(value)]
    return flags


#: :data:`TINY_RUN` as the flags of ``initmem train``.
TINY_FLAGS: list[str] = as_flags(TINY_RUN)
