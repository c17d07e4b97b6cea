"""What a run trains and measures on: the split (:func:`make_split`) and the device datasets
(:class:`PreparedData`) of CIFAR-10 or synthetic data (:func:`prepare_data`), of your own tensors
(:func:`prepare_tensors`), and shuffled, class-balanced CIFAR-10 tensors for your own model (:func:`cifar10_tensors`).

Every split is class-balanced and a function of ``data_seed`` and the sizes only; the indices are drawn from
independent streams of ``data_seed`` (numbered in :mod:`initmem.run.data.batches`).
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .batches import _STREAM_ORDER, _STREAM_SPLIT, _STREAM_TEST, _STREAM_TRAIN_EVAL, DeviceDataset
from .decode import load_cifar10
from .sources import DataError
from .synthetic import SYNTHETIC, check_synthetic_sizes, synthetic_cifar

if TYPE_CHECKING:
    from ..config import RunConfig

__all__ = [
    "Split",
    "PreparedData",
    "SplitData",
    "TensorPair",
    "make_split",
    "prepare_data",
    "prepare_tensors",
    "tensor_fingerprint",
    "cifar10_tensors",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Split:
    """Sorted int64 index arrays: ``train`` and ``val`` into the 50,000 training images
    (disjoint), ``test`` into the 10,000 test images."""

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray

    @property
    def sizes(self) -> dict[str, int]:
        return {"train": len(self.train), "val": len(self.val), "test": len(self.test)}


@dataclass
class PreparedData:
    """Everything a run needs from the data: four device datasets, the split and the provenance.

    ``train_eval`` is a fixed sample of ``train`` on which training loss/accuracy are measured.
    """

    train: DeviceDataset
    train_eval: DeviceDataset
    val: DeviceDataset
    test: DeviceDataset
    split: Split
    source: dict[str, str]

    @property
    def sizes(self) -> dict[str, int]:
        """Image counts: ``train``, ``val``, ``test``, ``train_eval``."""
        return {**self.split.sizes, "train_eval": len(self.train_eval)}


def _rng(data_seed: int, stream: int) -> np.random.Generator:
    """A numpy generator for one named stream of ``data_seed``."""
    return np.random.default_rng(np.random.SeedSequence([data_seed, stream]))


def _balanced_counts(total: int, available: np.ndarray) -> np.ndarray:
    """Per-class counts summing to ``total`` (<= available.sum()), as equal as possible.

    Each class gets ``total // k`` and the remainder goes one each to the lowest-numbered classes;
    a class with fewer images than its share gives all it has and the others share the rest.
    """
    counts = np.zeros_like(available)
    remaining = total
    while remaining > 0:
        open_classes = np.flatnonzero(counts < available)
        share = remaining // len(open_classes)
        if share == 0:
            counts[open_classes[:remaining]] += 1
            break
        give = np.minimum(share, available[open_classes] - counts[open_classes])
        counts[open_classes] += give
        remaining -= int(give.sum())
    return counts


def _class_permutations(labels: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """For each class 0..k-1 (k = labels.max() + 1), its indices in a random order."""
    return [rng.permutation(np.flatnonzero(labels == c)) for c in range(int(labels.max()) + 1)]


def _take_balanced(perms: list[np.ndarray], start: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Take ``total`` class-balanced indices from ``perms[c][start[c]:]``; return them sorted and
    the new start offsets."""
    available = np.array([len(p) for p in perms]) - start
    counts = _balanced_counts(total, available)
    chosen = [p[s : s + n] for p, s, n in zip(perms, start, counts)]
    return np.sort(np.concatenate(chosen)).astype(np.int64), start + counts


def _check_size(name: str, size: int, maximum: int, what: str) -> None:
    if size < 0 or size > maximum:
        raise DataError(f"{name}: must be between 0 and {maximum} ({what}), got {size}")


def make_split(
    labels_train: np.ndarray,
    labels_test: np.ndarray,
    train_size: int | None,
    val_size: int,
    test_size: int | None,
    data_seed: int,
) -> Split:
    """Class-balanced train/val/test indices, a function of ``data_seed`` and the sizes only.

    Each class's training images are permuted once (by ``data_seed``); validation takes the first
    of them, training the next. So the validation set does not depend on ``train_size``, and
    smaller training sets are subsets of larger ones. ``train_size=None`` means every training
    image not in validation; ``test_size=None`` means all test images. When a size is not a
    multiple of the number of classes the remainder goes one each to the lowest-numbered classes.
    Raises :class:`~initmem.run.data.sources.DataError` naming the parameter and its maximum when a size is too large.
    """
    labels_train = np.asarray(labels_train)
    labels_test = np.asarray(labels_test)
    n_train, n_test = len(labels_train), len(labels_test)
    _check_size("val_size", val_size, n_train, f"the training images available, {n_train}")
    perms = _class_permutations(labels_train, _rng(data_seed, _STREAM_SPLIT))
    val, start = _take_balanced(perms, np.zeros(len(perms), dtype=np.int64), val_size)
    if train_size is None:
        train_size = n_train - val_size
    _check_size("train_size", train_size, n_train - val_size, f"{n_train} training images minus val_size={val_size}")
    train, _ = _take_balanced(perms, start, train_size)
    if test_size is None:
        test = np.arange(n_test, dtype=np.int64)
    else:
        _check_size("test_size", test_size, n_test, f"the test images available, {n_test}")
        test_perms = _class_permutations(labels_test, _rng(data_seed, _STREAM_TEST))
        test, _ = _take_balanced(test_perms, np.zeros(len(test_perms), dtype=np.int64), test_size)
    return Split(train=train, val=val, test=test)


def _train_eval_positions(train_labels: np.ndarray, size: int, data_seed: int) -> np.ndarray:
    """Positions (into the training subset) of a fixed class-balanced sample of ``size`` images;
    all positions when the subset is not larger than ``size``."""
    if size >= len(train_labels):
        return np.arange(len(train_labels), dtype=np.int64)
    perms = _class_permutations(train_labels, _rng(data_seed, _STREAM_TRAIN_EVAL))
    positions, _ = _take_balanced(perms, np.zeros(len(perms), dtype=np.int64), size)
    return positions


def prepare_data(config: RunConfig, device: torch.device | str) -> PreparedData:
    """Load (or synthesise) the data of ``config``, split it, and put it on ``device``.

    Uses ``config.data`` (a path, ``"synthetic"`` or None to search), ``data_seed``,
    ``train_size``, ``val_size``, ``test_size``, ``train_eval_size`` and ``image_size``. For ``"synthetic"``,
    :func:`~initmem.run.data.synthetic.synthetic_cifar` (seed 0) makes ``(train_size or 2000) + val_size`` training
    and ``test_size or 1000`` test images, each rounded up to a multiple of 10, at most as many as CIFAR-10 has
    (:func:`~initmem.run.data.synthetic.check_synthetic_sizes`).
    """
    if config.data == SYNTHETIC:
        check_synthetic_sizes(config)
        n_train = _round_up((config.train_size or 2000) + config.val_size, 10)
        arrays = synthetic_cifar(n_train=n_train, n_test=_round_up(config.test_size or 1000, 10))
    else:
        arrays = load_cifar10(config.data)
    split = make_split(
        arrays.train_labels,
        arrays.test_labels,
        config.train_size,
        config.val_size,
        config.test_size,
        config.effective_data_seed,
    )

    def on_device(images: np.ndarray, labels: np.ndarray, index: np.ndarray) -> DeviceDataset:
        return DeviceDataset.from_uint8(images[index], labels[index], device, config.image_size)

    train = on_device(arrays.train_images, arrays.train_labels, split.train)
    positions = _train_eval_positions(
        arrays.train_labels[split.train], config.train_eval_size, config.effective_data_seed
    )
    prepared = PreparedData(
        train=train,
        train_eval=train.subset(positions),
        val=on_device(arrays.train_images, arrays.train_labels, split.val),
        test=on_device(arrays.test_images, arrays.test_labels, split.test),
        split=split,
        source=arrays.source,
    )
    logger.info("data %s (%s) on %s: %s", arrays.source["name"], arrays.source["format"], device, prepared.sizes)
    return prepared


#: What :func:`prepare_tensors` accepts for one split.
SplitData = Any  # tuple[torch.Tensor, torch.Tensor] | torch.utils.data.Dataset


def _as_pair(name: str, split: SplitData) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, targets) of one split given as a pair of tensors/arrays or as a map-style Dataset of pairs."""
    if isinstance(split, (tuple, list)) and len(split) == 2:
        inputs, targets = (torch.as_tensor(np.asarray(v)) if not isinstance(v, torch.Tensor) else v for v in split)
    elif hasattr(split, "__getitem__") and hasattr(split, "__len__"):
        if len(split) == 0:
            raise DataError(f"{name}: the dataset is empty")
        items = [split[i] for i in range(len(split))]
        inputs = torch.stack([torch.as_tensor(x) for x, _ in items])
        targets = torch.as_tensor([int(y) for _, y in items])
    else:
        raise DataError(
            f"{name}: expected an (inputs, targets) pair of tensors or a torch Dataset, got {type(split).__name__}"
        )
    if targets.ndim != 1 or targets.dtype.is_floating_point or targets.dtype == torch.bool:
        raise DataError(
            f"{name}: targets must be a 1-D tensor of integer class indices, got {targets.dtype} of shape {tuple(targets.shape)}"
        )
    if inputs.shape[0] != targets.shape[0] or inputs.shape[0] == 0:
        raise DataError(
            f"{name}: inputs have {inputs.shape[0]} rows and targets {targets.shape[0]}; they must match and be > 0"
        )
    return inputs, targets.long()


def tensor_fingerprint(*tensors: torch.Tensor) -> str:
    """sha256 of the tensors' shapes, dtypes and values (in order): a key for data given as tensors."""
    digest = hashlib.sha256()
    for tensor in tensors:
        t = tensor.detach().cpu().contiguous()
        digest.update(f"{tuple(t.shape)}{t.dtype}".encode())
        digest.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


def prepare_tensors(
    train: SplitData, val: SplitData, test: SplitData, device: torch.device | str, train_eval_size: int, data_seed: int
) -> PreparedData:
    """Your own data as a :class:`PreparedData`, for :func:`initmem.run.training.train`.

    Each split is an ``(inputs, targets)`` pair (tensors or arrays; inputs (N, ...) of any trailing shape and
    dtype, e.g. (N, D) vectors, (N, T) token ids or (N, C, H, W) images; targets (N,) integer class indices) or a
    map-style Dataset yielding such pairs. Nothing is normalised or reordered. ``train_eval`` is the same fixed
    class-balanced sample of ``train_eval_size`` training examples (by ``data_seed``) that :func:`prepare_data`
    takes; the split indices are ``arange`` of each size; ``source`` records the format ``tensors`` and a
    :func:`tensor_fingerprint` of everything.

    Raises:
        DataError: a split that is not a pair or Dataset, inputs and targets of different lengths, non-integer
            targets, or splits whose inputs differ in trailing shape or dtype.
    """
    pairs = {name: _as_pair(name, split) for name, split in (("train", train), ("val", val), ("test", test))}
    shape, dtype = pairs["train"][0].shape[1:], pairs["train"][0].dtype
    for name in ("val", "test"):
        inputs = pairs[name][0]
        if inputs.shape[1:] != shape or inputs.dtype != dtype:
            raise DataError(
                f"{name}: inputs are {inputs.dtype} (N, {', '.join(map(str, inputs.shape[1:]))}) but train's are "
                f"{dtype} (N, {', '.join(map(str, shape))}); every split needs the same example shape and dtype"
            )
    sets = {name: DeviceDataset(images=x.to(device), labels=y.to(device)) for name, (x, y) in pairs.items()}
    positions = _train_eval_positions(pairs["train"][1].cpu().numpy(), train_eval_size, data_seed)
    sizes = {name: np.arange(len(sets[name]), dtype=np.int64) for name in sets}
    fingerprint = tensor_fingerprint(*(t for pair in pairs.values() for t in pair))
    return PreparedData(
        train=sets["train"],
        train_eval=sets["train"].subset(positions),
        val=sets["val"],
        test=sets["test"],
        split=Split(**sizes),
        source={"name": "tensors", "format": "tensors", "sha256": fingerprint},
    )


#: An ``(x, y)`` pair of one split: float32 images (N, 3, H, W) and int64 labels (N,).
TensorPair = tuple[torch.Tensor, torch.Tensor]


def cifar10_tensors(
    train_size: int,
    val_size: int,
    test_size: int,
    seed: int = 0,
    path: str | os.PathLike | None = None,
    image_size: int = 32,
) -> tuple[TensorPair, TensorPair, TensorPair]:
    """Shuffled, class-balanced CIFAR-10 splits as CPU tensors, ready for
    :func:`initmem.sweeps.measure.measure_init_memory`::

        train, val, test = cifar10_tensors(5000, 1000, 1000, seed=0)
        ds = measure_init_memory(model_fn, train, val, test, sigma_ws=[0.5, 1.0, 2.0], seeds=[0, 1, 2])

    Returns ``(train, val, test)``, each an ``(x, y)`` pair: ``x`` float32 (n, 3, image_size, image_size), scaled
    to [0, 1] and normalised with :data:`~initmem.run.data.batches.CIFAR10_MEAN` /
    :data:`~initmem.run.data.batches.CIFAR10_STD` (as every built-in run), ``y`` int64 (n,) class indices in
    [0, 10). ``train`` and ``val`` are disjoint subsets of the 50,000 training images, ``test`` of the 10,000 test
    images. Each is class-balanced (:func:`make_split` with ``data_seed=seed``: ``n // 10`` images per class, the
    remainder one each to the lowest classes) and in an order drawn from ``seed``, so that its first images are
    not one class, as they would be from :func:`~initmem.run.data.decode.load_cifar10` (sorted by class for the
    JPEG archive). The same sizes and ``seed`` give the same tensors; the validation and test tensors do not depend
    on ``train_size``. ``path`` is a CIFAR-10 source as for :func:`~initmem.run.data.decode.load_cifar10` (None
    searches); ``image_size`` below 32 area-downsamples.

    Raises:
        DataError: a size larger than the images available, naming it (``train_size``, ``val_size`` or
            ``test_size``), or data that cannot be found or read.
    """
    arrays = load_cifar10(path)
    split = make_split(arrays.train_labels, arrays.test_labels, train_size, val_size, test_size, seed)
    pairs = []
    for k, (index, images, labels) in enumerate(
        (
            (split.train, arrays.train_images, arrays.train_labels),
            (split.val, arrays.train_images, arrays.train_labels),
            (split.test, arrays.test_images, arrays.test_labels),
        )
    ):
        order = np.random.default_rng(np.random.SeedSequence([seed, _STREAM_ORDER, k]))  # one stream per split
        shuffled = order.permutation(index)
        on_cpu = DeviceDataset.from_uint8(images[shuffled], labels[shuffled], "cpu", image_size)
        pairs.append((on_cpu.images, on_cpu.labels))
    return pairs[0], pairs[1], pairs[2]


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple
