"""Images on the device and their batches: :class:`DeviceDataset`, :func:`train_batches`, :func:`eval_batches`.

On the device: float32 images (N, 3, H, W), normalised with the published CIFAR-10 per-channel constants
:data:`CIFAR10_MEAN` / :data:`CIFAR10_STD` (the same for every split, subset, source and ``train_size``),
optionally area-downsampled to ``image_size``.

Batches: the order and the augmentation depend on (``data_seed``, epoch) only, drawn on CPU generators and then
moved to the device, so runs that differ in ``sigma_w``, ``seed`` or optimiser see bit-identical batches on any
device. The last incomplete batch is dropped (:func:`steps_per_epoch`). Augmentation is a random crop with reflect
padding (4 px at 32x32, ``image_size // 8`` in general) and a horizontal flip with probability 1/2, vectorised over
the batch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

__all__ = [
    "CIFAR10_MEAN",
    "CIFAR10_STD",
    "DeviceDataset",
    "steps_per_epoch",
    "train_batches",
    "eval_batches",
    "augment_batch",
]

#: Published per-channel (R, G, B) mean of the CIFAR-10 training images (pixel values in [0, 1]).
CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
#: Published per-channel (R, G, B) standard deviation of the CIFAR-10 training images (pixel values in [0, 1]).
CIFAR10_STD = (0.2470, 0.2435, 0.2616)

#: Independent random streams derived from data_seed: the split's three and the order of
#: :func:`~initmem.run.data.prepare.cifar10_tensors` (:mod:`initmem.run.data.prepare`), and the batches' two
#: (:func:`_torch_generator`), numbered in one place so that no two share a stream.
_STREAM_SPLIT, _STREAM_TEST, _STREAM_TRAIN_EVAL, _STREAM_SHUFFLE, _STREAM_AUGMENT, _STREAM_ORDER = range(6)


@dataclass
class DeviceDataset:
    """Images and labels resident on one device.

    ``images``: float32 (N, 3, H, W), normalised per channel with :data:`CIFAR10_MEAN` /
    :data:`CIFAR10_STD`; ``labels``: int64 (N,).
    """

    images: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return self.labels.shape[0]

    @property
    def device(self) -> torch.device:
        return self.images.device

    @classmethod
    def from_uint8(
        cls,
        images: np.ndarray,
        labels: np.ndarray,
        device: torch.device | str = "cpu",
        image_size: int = 32,
    ) -> DeviceDataset:
        """Move uint8 (N, H, W, 3) images to ``device`` (as uint8, then converted there), scale to
        [0, 1], area-downsample to ``image_size`` x ``image_size`` if smaller, and normalise."""
        x = torch.from_numpy(np.ascontiguousarray(images)).to(device)
        x = x.permute(0, 3, 1, 2).float().div_(255.0)
        x = _downsample(x, image_size)
        x = _normalise_(x)
        y = torch.from_numpy(np.asarray(labels, dtype=np.int64)).to(device)
        return cls(images=x.contiguous(), labels=y)

    def subset(self, index: np.ndarray | torch.Tensor) -> DeviceDataset:
        """The images at ``index`` (a copy), in that order."""
        index = torch.as_tensor(index, dtype=torch.int64, device=self.device)
        return DeviceDataset(images=self.images[index], labels=self.labels[index])


def _downsample(images: torch.Tensor, image_size: int) -> torch.Tensor:
    """Area-downsample (N, C, H, W) to (N, C, image_size, image_size) (mean over pixel areas)."""
    if image_size == images.shape[-1]:
        return images
    if image_size > images.shape[-1]:
        raise ValueError(f"image_size: must be at most the images' size {images.shape[-1]}, got {image_size}")
    return F.interpolate(images, size=(image_size, image_size), mode="area")


def _normalise_(images: torch.Tensor) -> torch.Tensor:
    """In place: (x - CIFAR10_MEAN) / CIFAR10_STD per channel, for (N, 3, H, W) in [0, 1]."""
    mean = torch.tensor(CIFAR10_MEAN, device=images.device).view(1, 3, 1, 1)
    std = torch.tensor(CIFAR10_STD, device=images.device).view(1, 3, 1, 1)
    return images.sub_(mean).div_(std)


def steps_per_epoch(n: int, batch_size: int) -> int:
    """Optimizer steps per epoch: ``n // batch_size`` (the last incomplete batch is dropped)."""
    if batch_size <= 0 or batch_size > n:
        raise ValueError(f"batch_size: must be between 1 and the number of training images ({n}), got {batch_size}")
    return n // batch_size


def _torch_generator(data_seed: int, epoch: int, stream: int) -> torch.Generator:
    """A CPU generator seeded from (data_seed, epoch, stream) only."""
    seed = np.random.SeedSequence([data_seed, stream, epoch]).generate_state(1, dtype=np.uint64)[0]
    return torch.Generator(device="cpu").manual_seed(int(seed))


def _draw_augmentation(n: int, padding: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Crop offsets int64 (n, 2) in [0, 2 * padding] (row, column) and flips bool (n,)."""
    offsets = torch.randint(0, 2 * padding + 1, (n, 2), generator=generator)
    flip = torch.rand(n, generator=generator) < 0.5
    return offsets, flip


def augment_batch(images: torch.Tensor, offsets: torch.Tensor, flip: torch.Tensor, padding: int) -> torch.Tensor:
    """Random crop and horizontal flip of a batch, vectorised (no loop over images).

    ``images`` (B, C, H, W) are reflect-padded by ``padding`` pixels on each side, then image ``i``
    is cropped back to H x W starting at row ``offsets[i, 0]`` and column ``offsets[i, 1]``
    (offsets ``(padding, padding)`` leave it unchanged) and mirrored left-right where ``flip[i]``.
    ``offsets`` (B, 2) int64 and ``flip`` (B,) bool must be on the images' device.
    """
    batch, channels, height, width = images.shape
    padded = F.pad(images, (padding, padding, padding, padding), mode="reflect")
    rows = offsets[:, 0, None] + torch.arange(height, device=images.device)  # (B, H)
    cols = offsets[:, 1, None] + torch.arange(width, device=images.device)  # (B, W)
    cols = torch.where(flip[:, None], cols.flip(1), cols)
    padded = padded.gather(2, rows[:, None, :, None].expand(batch, channels, height, padded.shape[3]))
    return padded.gather(3, cols[:, None, None, :].expand(batch, channels, height, width))


def train_batches(
    data: DeviceDataset, batch_size: int, epoch: int, data_seed: int, augment: bool
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """The shuffled training batches of one epoch: ``steps_per_epoch(len(data), batch_size)`` pairs
    of images (batch_size, 3, H, W) and labels (batch_size,).

    The order comes from a generator seeded by (``data_seed``, ``epoch``) only, and the augmentation
    (if ``augment``) from another, so the batches are bit-identical across runs that share them,
    whatever else the runs do with torch's global random state; the order is the same with and
    without augmentation. Random numbers are drawn on the CPU and moved to the data's device.
    """
    n_steps = steps_per_epoch(len(data), batch_size)
    used = n_steps * batch_size
    order = torch.randperm(len(data), generator=_torch_generator(data_seed, epoch, _STREAM_SHUFFLE))[:used]
    order = order.to(data.device)
    if augment:
        padding = data.images.shape[-1] // 8
        offsets, flip = _draw_augmentation(used, padding, _torch_generator(data_seed, epoch, _STREAM_AUGMENT))
        offsets, flip = offsets.to(data.device), flip.to(data.device)
    for step in range(n_steps):
        window = slice(step * batch_size, (step + 1) * batch_size)
        index = order[window]
        images = data.images[index]
        if augment:
            images = augment_batch(images, offsets[window], flip[window], padding)
        yield images, data.labels[index]


def eval_batches(data: DeviceDataset, batch_size: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """All of ``data`` in order, in batches of ``batch_size`` (the last may be smaller)."""
    if batch_size <= 0:
        raise ValueError(f"batch_size: must be a positive integer, got {batch_size}")
    for start in range(0, len(data), batch_size):
        yield data.images[start : start + batch_size], data.labels[start : start + batch_size]
