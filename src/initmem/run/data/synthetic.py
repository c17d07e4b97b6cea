"""A small learnable stand-in for CIFAR-10 (:func:`synthetic_cifar`), for tests and smoke runs.

``RunConfig(data="synthetic")`` selects it (:data:`SYNTHETIC`); :func:`check_synthetic_sizes` bounds its sizes by
CIFAR-10's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .decode import CifarArrays, _arrays_digest, _Decoded
from .sources import CIFAR10_CLASSES, DataError

if TYPE_CHECKING:
    from ..config import RunConfig

__all__ = ["SYNTHETIC", "SYNTHETIC_MAX_TRAIN", "SYNTHETIC_MAX_TEST", "check_synthetic_sizes", "synthetic_cifar"]

#: The value of ``RunConfig.data`` that selects :func:`synthetic_cifar`.
SYNTHETIC = "synthetic"

#: Synthetic data is bounded like CIFAR-10 (50,000 training + validation images, 10,000 test images), so that a
#: mistyped size fails at once instead of trying to allocate tens of gigabytes.
SYNTHETIC_MAX_TRAIN = 50_000
SYNTHETIC_MAX_TEST = 10_000


def check_synthetic_sizes(config: RunConfig) -> None:
    """Raise :class:`~initmem.run.data.sources.DataError` naming the field when synthetic sizes exceed CIFAR-10's."""
    n_train = (config.train_size or 2000) + config.val_size
    if n_train > SYNTHETIC_MAX_TRAIN:
        name = "train_size" if (config.train_size or 0) > config.val_size else "val_size"
        raise DataError(
            f"{name}: synthetic data has at most {SYNTHETIC_MAX_TRAIN} training + validation images "
            f"(as CIFAR-10), got train_size + val_size = {n_train}"
        )
    if (config.test_size or 0) > SYNTHETIC_MAX_TEST:
        raise DataError(
            f"test_size: synthetic data has at most {SYNTHETIC_MAX_TEST} test images (as CIFAR-10), "
            f"got {config.test_size}"
        )


def synthetic_cifar(n_train: int = 2000, n_test: int = 1000, seed: int = 0, image_size: int = 32) -> CifarArrays:
    """A small learnable stand-in for CIFAR-10, deterministic given ``seed``.

    Each of 10 classes has a template: a mean colour plus a low-frequency colour pattern (cosines
    of spatial frequency 1-2 cycles per image). An image of class ``y`` is
    ``128 + 48 * (c * T[y] + m * T[d]) + b + noise`` with contrast ``c ~ U(0.3, 1)``, a distractor
    class ``d`` mixed in with ``m ~ U(0, 0.8)``, a brightness shift ``b ~ N(0, 10)`` and pixel noise
    ``N(0, 24)``, clipped to uint8. About a fifth of the images are dominated by their distractor,
    so a good classifier reaches roughly 75-85 %, not 100 %.

    Labels are ``i % 10`` (balanced). Every quantity comes from its own stream, so the first
    images of a larger draw equal a smaller draw. Shapes: (n, image_size, image_size, 3).
    """
    for name, value in (("n_train", n_train), ("n_test", n_test), ("image_size", image_size)):
        if value <= 0:
            raise ValueError(f"{name}: must be a positive integer, got {value!r}")
    template_seed, train_seed, test_seed = np.random.SeedSequence(seed).spawn(3)
    templates = _synthetic_templates(np.random.default_rng(template_seed), image_size)
    train_images, train_labels = _synthetic_images(templates, n_train, train_seed)
    test_images, test_labels = _synthetic_images(templates, n_test, test_seed)
    decoded = _Decoded(train_images, train_labels, test_images, test_labels, list(CIFAR10_CLASSES))
    source = {
        "name": f"synthetic(n_train={n_train},n_test={n_test},seed={seed},image_size={image_size})",
        "format": SYNTHETIC,
        "sha256": _arrays_digest(decoded),
    }
    return CifarArrays(**decoded._asdict(), source=source)


def _synthetic_templates(rng: np.random.Generator, size: int) -> np.ndarray:
    """Float32 (10, size, size, 3) class templates with unit standard deviation each."""
    grid = np.arange(size) / size
    y, x = np.meshgrid(grid, grid, indexing="ij")
    templates = rng.normal(0.0, 0.7, size=(10, 1, 1, 3))  # mean colour per class
    for fy, fx in ((0, 1), (1, 0), (1, 1), (1, -1), (0, 2), (2, 0)):
        amplitude = rng.normal(size=(10, 1, 1, 3))
        phase = rng.uniform(0, 2 * np.pi, size=(10, 1, 1, 3))
        templates = templates + amplitude * np.cos(2 * np.pi * (fy * y + fx * x)[None, :, :, None] + phase)
    return (templates / templates.std(axis=(1, 2, 3), keepdims=True)).astype(np.float32)


def _synthetic_images(templates: np.ndarray, n: int, seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """uint8 (n, S, S, 3) images and int64 (n,) labels from the templates (see synthetic_cifar)."""
    contrast_rng, distractor_rng, mix_rng, brightness_rng, noise_rng = (np.random.default_rng(s) for s in seed.spawn(5))
    labels = np.arange(n, dtype=np.int64) % 10
    distractor = (labels + distractor_rng.integers(1, 10, size=n)) % 10
    contrast = contrast_rng.uniform(0.3, 1.0, size=(n, 1, 1, 1)).astype(np.float32)
    mix = mix_rng.uniform(0.0, 0.8, size=(n, 1, 1, 1)).astype(np.float32)
    brightness = brightness_rng.normal(0.0, 10.0, size=(n, 1, 1, 1)).astype(np.float32)
    images = noise_rng.standard_normal(size=(n, *templates.shape[1:]), dtype=np.float32)
    images *= 24.0
    images += 128.0 + brightness
    images += (48.0 * contrast) * templates[labels]
    images += (48.0 * mix) * templates[distractor]
    return np.clip(np.rint(images), 0, 255).astype(np.uint8), labels
