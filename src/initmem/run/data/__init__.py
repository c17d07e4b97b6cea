"""CIFAR-10 on the device: find, decode once, split, normalise, batch and augment.

One module per step, each importing only the ones before it:

* :mod:`~initmem.run.data.sources` -- where the data is (:func:`find_cifar10`, :func:`download_cifar10`) and
  :class:`DataError`, the one error of the data layer;
* :mod:`~initmem.run.data.decode` -- :func:`load_cifar10`: torchvision's batches (an unpickler that builds only
  arrays), an image folder or its ``.tar.gz``, decoded once into uint8 arrays and cached;
* :mod:`~initmem.run.data.synthetic` -- :func:`synthetic_cifar`, a small learnable stand-in (``data="synthetic"``);
* :mod:`~initmem.run.data.batches` -- :class:`DeviceDataset` and the training batches, a function of
  (``data_seed``, epoch) only;
* :mod:`~initmem.run.data.prepare` -- the class-balanced split (:func:`make_split`), a run's :class:`PreparedData`
  (:func:`prepare_data`, :func:`prepare_tensors`) and CIFAR-10 tensors for your own model (:func:`cifar10_tensors`).

Every public name is importable from here; the book's Setup chapter describes the data and its split.
"""

from .batches import (
    CIFAR10_MEAN,
    CIFAR10_STD,
    DeviceDataset,
    augment_batch,
    eval_batches,
    steps_per_epoch,
    train_batches,
)
from .decode import DATA_FORMAT_VERSION, CifarArrays, load_cifar10
from .prepare import (
    PreparedData,
    Split,
    SplitData,
    TensorPair,
    cifar10_tensors,
    make_split,
    prepare_data,
    prepare_tensors,
    tensor_fingerprint,
)
from .sources import ARCHIVE_NAME, BATCH_FILES, BATCHES_DIR, CIFAR10_CLASSES, DataError, download_cifar10, find_cifar10
from .synthetic import SYNTHETIC, SYNTHETIC_MAX_TEST, SYNTHETIC_MAX_TRAIN, check_synthetic_sizes, synthetic_cifar

__all__ = [
    "CIFAR10_CLASSES",
    "CIFAR10_MEAN",
    "CIFAR10_STD",
    "DATA_FORMAT_VERSION",
    "DataError",
    "CifarArrays",
    "Split",
    "SplitData",
    "TensorPair",
    "DeviceDataset",
    "PreparedData",
    "find_cifar10",
    "load_cifar10",
    "download_cifar10",
    "synthetic_cifar",
    "check_synthetic_sizes",
    "make_split",
    "prepare_data",
    "prepare_tensors",
    "cifar10_tensors",
    "tensor_fingerprint",
    "steps_per_epoch",
    "train_batches",
    "eval_batches",
    "augment_batch",
    "ARCHIVE_NAME",
    "BATCH_FILES",
    "BATCHES_DIR",
    "SYNTHETIC",
    "SYNTHETIC_MAX_TRAIN",
    "SYNTHETIC_MAX_TEST",
]
