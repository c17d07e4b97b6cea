"""Shared fixtures: tiny synthetic configurations and the location of the shared CIFAR-10 archive."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_ARCHIVE = REPO.parent / "shared" / "data" / "cifar10-jpeg.tar.gz"


@pytest.fixture(scope="session")
def cifar_archive() -> Path:
    """The shared CIFAR-10 JPEG archive; skips the test where ../shared is absent."""
    if not SHARED_ARCHIVE.exists():
        pytest.skip(f"CIFAR-10 archive not found at {SHARED_ARCHIVE} (../shared is absent on this machine)")
    return SHARED_ARCHIVE


@pytest.fixture
def tiny_config():
    """A run that trains in about a second on synthetic data."""
    from initmem import RunConfig

    return RunConfig(
        model="resnet9", width=4, data="synthetic", train_size=200, val_size=100, test_size=100,
        train_eval_size=100, batch_size=50, epochs=3, image_size=16, lr=0.05, progress=False,
        device="cpu", num_threads=1,
    )  # fmt: skip
