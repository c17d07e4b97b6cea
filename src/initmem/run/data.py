"""CIFAR-10 on the device: find, decode once, split, normalise, batch and augment.

Sources (one loader for all of them, see :func:`load_cifar10`):

* ``torchvision-batches``: torchvision's ``cifar-10-batches-py`` folder (the folder itself or its
  parent, e.g. the ``root`` given to :func:`download_cifar10`). The batch files are pickles; they are
  read with an unpickler that builds only numpy arrays and plain containers (:func:`_unpickle`), so a
  planted batch file is refused instead of running code.
* ``image-folder``: ``train/<class>/*.jpg`` and ``test/<class>/*.jpg`` (``.jpeg``/``.png`` too);
  the sorted class names give the labels (the standard CIFAR-10 order).
* ``image-folder-tar.gz``: the same tree inside a ``.tar.gz`` (members read directly, nothing is
  extracted), e.g. ``../shared/data/cifar10-jpeg.tar.gz``.
* ``synthetic``: :func:`synthetic_cifar`, a small learnable stand-in for tests and smoke runs.

Decoding happens once: the uint8 arrays are cached as an uncompressed ``.npz`` in ``$INITMEM_CACHE``
(default ``~/.cache/initmem``), named by the source's digest and :data:`DATA_FORMAT_VERSION`.
Archive checksums are themselves cached, keyed by (path, size, mtime), so a second load reads one
file and hashes nothing.

Validation: every image must be 32x32 RGB (other modes are converted), labels must lie in
[0, 10) and there must be exactly 10 classes; anything else raises :class:`DataError`. The totals
are *not* enforced, so tiny fixtures are valid sources: totals other than 50,000/10,000 only log a
warning.

On the device (:class:`DeviceDataset`): float32 images (N, 3, H, W), normalised with the published
CIFAR-10 per-channel constants :data:`CIFAR10_MEAN` / :data:`CIFAR10_STD` (the same for every
split, subset, source and ``train_size``), optionally area-downsampled to ``image_size``.

Batches (:func:`train_batches`): the order and the augmentation depend on (``data_seed``, epoch)
only, drawn on CPU generators and then moved to the device, so runs that differ in ``sigma_w``,
``seed`` or optimiser see bit-identical batches on any device. The last incomplete batch is dropped
(:func:`steps_per_epoch`). Augmentation is a random crop with reflect padding (4 px at 32x32,
``image_size // 8`` in general) and a horizontal flip with probability 1/2, vectorised over the batch.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import pickle
import tarfile
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image, UnidentifiedImageError

from ..base.files import atomic_write
from ..base.paths import default_root

if TYPE_CHECKING:
    from initmem.run.config import RunConfig

__all__ = [
    "CIFAR10_CLASSES",
    "CIFAR10_MEAN",
    "CIFAR10_STD",
    "DATA_FORMAT_VERSION",
    "DataError",
    "CifarArrays",
    "Split",
    "DeviceDataset",
    "PreparedData",
    "find_cifar10",
    "load_cifar10",
    "download_cifar10",
    "synthetic_cifar",
    "make_split",
    "prepare_data",
    "prepare_tensors",
    "tensor_fingerprint",
    "steps_per_epoch",
    "train_batches",
    "eval_batches",
    "augment_batch",
]

logger = logging.getLogger("initmem.run.data")

CIFAR10_CLASSES = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)
#: Published per-channel mean and std of the CIFAR-10 training images (pixel values in [0, 1]).
CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2470, 0.2435, 0.2616)
#: Bumped whenever the decoded cache changes meaning; part of every cache file name.
DATA_FORMAT_VERSION = 1

IMAGE_SHAPE = (32, 32, 3)
EXPECTED_TOTALS = {"train": 50_000, "test": 10_000}
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
BATCH_FILES = ("data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5", "test_batch")
BATCHES_DIR = "cifar-10-batches-py"
ARCHIVE_NAME = "cifar10-jpeg.tar.gz"
SYNTHETIC = "synthetic"
#: Used by :func:`find_cifar10`: the repository found from the working directory (:mod:`initmem.base.paths`), never
#: the folder the package is installed in.
_REPO_ROOT = default_root()
_HOW_TO_GET = (
    "Get CIFAR-10 with `initmem download-data DIR` (needs internet; then pass --data DIR or set "
    "INITMEM_DATA=DIR), or pass --data PATH to a cifar-10-batches-py folder, an image folder "
    "(train/<class>/*.jpg, test/<class>/*.jpg) or its .tar.gz."
)

# Independent random streams derived from data_seed (see _rng / _torch_generator).
_STREAM_SPLIT, _STREAM_TEST, _STREAM_TRAIN_EVAL, _STREAM_SHUFFLE, _STREAM_AUGMENT = range(5)


class DataError(ValueError):
    """The data is missing, unreadable or not CIFAR-10-shaped.

    A :class:`ValueError` (like :class:`initmem.run.config.ConfigError`): the message says what was
    expected and where the loader looked, so the CLI can print it as is.
    """


# ----------------------------------------------------------------------------------------------
# Containers
# ----------------------------------------------------------------------------------------------
@dataclass
class CifarArrays:
    """Decoded CIFAR-10 (or a stand-in) as host arrays.

    Images are uint8 (N, 32, 32, 3) in RGB order, values 0-255; labels are int64 in [0, 10).
    ``source`` is ``{"name": str, "format": str, "sha256": str}`` with format one of
    ``torchvision-batches``, ``image-folder``, ``image-folder-tar.gz``, ``synthetic``; sha256 is the
    archive's checksum, the checksum of the concatenated batch files, or (image folders and
    synthetic data) a digest of the decoded arrays.
    """

    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    classes: list[str]
    source: dict[str, str]


class _Decoded(NamedTuple):
    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    classes: list[str]


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


# ----------------------------------------------------------------------------------------------
# Finding the data
# ----------------------------------------------------------------------------------------------
def _cache_dir() -> Path:
    """``$INITMEM_CACHE`` or ``~/.cache/initmem``."""
    return Path(os.environ.get("INITMEM_CACHE") or Path.home() / ".cache" / "initmem").expanduser()


def _search_paths() -> list[Path]:
    """The places :func:`find_cifar10` looks, in order, without duplicates."""
    candidates = []
    if os.environ.get("INITMEM_DATA"):
        candidates.append(Path(os.environ["INITMEM_DATA"]).expanduser())
    for base in (Path.cwd(), _REPO_ROOT, _REPO_ROOT.parent):
        candidates.append(base.parent / "shared" / "data" / ARCHIVE_NAME)
    candidates.append(Path.home() / ".cache" / "initmem" / BATCHES_DIR)
    candidates.append(_cache_dir() / BATCHES_DIR)
    candidates.append(Path.cwd() / "data" / BATCHES_DIR)
    unique: dict[Path, None] = {}
    for candidate in candidates:
        unique.setdefault(candidate.resolve(), None)
    return list(unique)


def find_cifar10(path: str | os.PathLike | None = None) -> Path:
    """Locate CIFAR-10.

    With ``path``: check that it exists and return it. Without: return the first existing of
    ``$INITMEM_DATA``; ``../shared/data/cifar10-jpeg.tar.gz`` relative to the current directory, the
    repository root and its parent; ``~/.cache/initmem/cifar-10-batches-py`` (and the same under
    ``$INITMEM_CACHE``); ``./data/cifar-10-batches-py``.

    Raises :class:`DataError` listing every place looked at and how to get the data.
    """
    if path is not None:
        given = Path(path).expanduser()
        if given.exists():
            return given.resolve()
        raise DataError(f"CIFAR-10 not found: {given} does not exist. {_HOW_TO_GET}")
    env = os.environ.get("INITMEM_DATA")
    if env and not Path(env).expanduser().exists():
        logger.warning("INITMEM_DATA=%s does not exist; searching the default places", env)
    places = _search_paths()
    for place in places:
        if place.exists():
            logger.info("found CIFAR-10 at %s", place)
            return place
    listing = "\n".join(f"  - {place}" for place in places)
    raise DataError(f"CIFAR-10 not found. Looked in, in order:\n{listing}\n{_HOW_TO_GET}")


def download_cifar10(root: str | os.PathLike) -> Path:
    """Download the original CIFAR-10 with torchvision into ``root`` (needs internet).

    Returns ``root/cifar-10-batches-py``, which :func:`load_cifar10` accepts (as does ``root``).
    """
    from torchvision.datasets import CIFAR10

    root = Path(root).expanduser()
    try:
        for train in (True, False):
            CIFAR10(str(root), train=train, download=True)
    except (OSError, RuntimeError) as error:  # urllib's URLError is an OSError
        raise DataError(
            f"Could not download CIFAR-10 into {root}: {error}. Without internet, pass --data with "
            f"a copy of the data (e.g. ../shared/data/{ARCHIVE_NAME})."
        ) from error
    return root / BATCHES_DIR


def _detect_format(path: Path) -> tuple[str, Path]:
    """(format, root) of a source: the batches folder, the image-folder root or the archive."""
    if path.is_dir():
        if (path / BATCH_FILES[0]).is_file():
            return "torchvision-batches", path
        if (path / BATCHES_DIR / BATCH_FILES[0]).is_file():
            return "torchvision-batches", path / BATCHES_DIR
        if (path / "train").is_dir() and (path / "test").is_dir():
            return "image-folder", path
        raise DataError(
            f"{path} is not a CIFAR-10 folder: expected {BATCHES_DIR}/{BATCH_FILES[0]} (torchvision) "
            f"or train/<class>/*.jpg and test/<class>/*.jpg (image folder). {_HOW_TO_GET}"
        )
    if path.name.endswith((".tar.gz", ".tgz")):
        return "image-folder-tar.gz", path
    raise DataError(
        f"{path} is not a CIFAR-10 source: expected a folder or a .tar.gz of train/<class>/*.jpg, "
        f"test/<class>/*.jpg. {_HOW_TO_GET}"
    )


# ----------------------------------------------------------------------------------------------
# Loading with a decoded cache
# ----------------------------------------------------------------------------------------------
def load_cifar10(path: str | os.PathLike | None = None) -> CifarArrays:
    """Load CIFAR-10 from ``path`` (or :func:`find_cifar10`'s search) as uint8 host arrays.

    The first load decodes the source and caches the arrays (a few seconds for the JPEG archive);
    later loads read the cache (well under 2 s). Raises :class:`DataError` on missing, corrupt or
    mis-shaped data.
    """
    fmt, root = _detect_format(find_cifar10(path))
    digest = _source_digest(fmt, root)
    cache_file = _cache_dir() / f"cifar10-{fmt}-{digest[:24]}-v{DATA_FORMAT_VERSION}.npz"
    cached = _read_cache(cache_file)
    if cached is None:
        logger.info("decoding CIFAR-10 (%s) from %s; caching it at %s", fmt, root, cache_file)
        decoded = _decode(fmt, root)
        _validate(decoded, root)
        sha256 = _arrays_digest(decoded) if fmt == "image-folder" else digest
        _write_cache(cache_file, decoded, sha256)
    else:
        decoded, sha256 = cached
        logger.debug("read decoded CIFAR-10 from %s", cache_file)
        _validate(decoded, root)
    # The source's file or folder name, not its absolute path: run files record where the data came from without
    # naming the machine's directories (the sha256 identifies it).
    source = {"name": root.name, "format": fmt, "sha256": sha256}
    return CifarArrays(**decoded._asdict(), source=source)


def _source_digest(fmt: str, root: Path) -> str:
    """sha256 of the archive or of the concatenated batch files; for an image folder, a digest of
    its listing (names, sizes, mtimes), which is cheap and changes whenever a file does."""
    if fmt == "image-folder-tar.gz":
        return _files_sha256([root])
    if fmt == "torchvision-batches":
        missing = [name for name in BATCH_FILES if not (root / name).is_file()]
        if missing:
            raise DataError(
                f"{root}: missing torchvision batch files {', '.join(missing)}; expected {', '.join(BATCH_FILES)}"
            )
        return _files_sha256([root / name for name in BATCH_FILES])
    listing = hashlib.sha256()
    for file in sorted(p for split in ("train", "test") for p in (root / split).rglob("*") if p.is_file()):
        stat = file.stat()
        listing.update(f"{file.relative_to(root)}\t{stat.st_size}\t{stat.st_mtime_ns}\n".encode())
    return listing.hexdigest()


def _files_sha256(files: Sequence[Path]) -> str:
    """sha256 of the concatenated files, remembered in the cache keyed by (path, size, mtime)."""
    key = json.dumps([[str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns] for f in files])
    index_file = _cache_dir() / "sha256-index.json"
    index = _read_json(index_file)
    if key in index:
        return index[key]
    digest = hashlib.sha256()
    for file in files:
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    index[key] = digest.hexdigest()
    _atomic_write(index_file, lambda handle: handle.write(json.dumps(index, indent=1).encode()))
    return index[key]


def _read_json(file: Path) -> dict[str, str]:
    try:
        return json.loads(file.read_text())
    except (OSError, ValueError):
        return {}


def _atomic_write(file: Path, write: Callable[[Any], Any]) -> None:
    """Write a cache file through :func:`initmem.base.files.atomic_write` (``write`` gets an open binary handle),
    so concurrent readers never see half a file. An unwritable cache only logs a warning."""

    def into(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            write(handle)

    try:
        atomic_write(file, into)
    except OSError as error:
        logger.warning("could not write the cache file %s: %s", file, error)


def _read_cache(file: Path) -> tuple[_Decoded, str] | None:
    """(arrays, sha256) from a cache file, or None if it is absent or unreadable."""
    if not file.is_file():
        return None
    try:
        with np.load(file, allow_pickle=False) as npz:
            decoded = _Decoded(
                train_images=npz["train_images"],
                train_labels=npz["train_labels"],
                test_images=npz["test_images"],
                test_labels=npz["test_labels"],
                classes=[str(c) for c in npz["classes"]],
            )
            return decoded, str(npz["sha256"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        logger.warning("ignoring the unreadable cache file %s: %s", file, error)
        return None


def _write_cache(file: Path, decoded: _Decoded, sha256: str) -> None:
    arrays = {**decoded._asdict(), "classes": np.array(decoded.classes), "sha256": np.array(sha256)}
    _atomic_write(file, lambda handle: np.savez(handle, **arrays))


def _arrays_digest(decoded: _Decoded) -> str:
    """sha256 over the decoded arrays and class names."""
    digest = hashlib.sha256()
    for array in (decoded.train_images, decoded.train_labels, decoded.test_images, decoded.test_labels):
        digest.update(np.ascontiguousarray(array).tobytes())
    digest.update("\n".join(decoded.classes).encode())
    return digest.hexdigest()


# ----------------------------------------------------------------------------------------------
# Decoders
# ----------------------------------------------------------------------------------------------
def _decode(fmt: str, root: Path) -> _Decoded:
    """Decode a source into uint8 arrays (no validation beyond what decoding needs)."""
    if fmt == "torchvision-batches":
        return _decode_batches(root)
    if fmt == "image-folder":
        return _decode_images(_folder_members(root), root)
    return _decode_archive(root)


def _decode_batches(root: Path) -> _Decoded:
    """torchvision's pickled batches: ``data`` (N, 3072) uint8 in CHW order, ``labels``."""
    parts = {"train": [], "test": []}
    for name in BATCH_FILES:
        entry = _unpickle(root / name)
        data = np.asarray(_field(entry, "data", root / name), dtype=np.uint8)
        labels = np.asarray(_field(entry, "labels", root / name), dtype=np.int64)
        if data.ndim != 2 or data.shape[1] != 3 * 32 * 32 or len(data) != len(labels):
            raise DataError(
                f"{root / name}: expected 'data' of shape (N, 3072) and N labels, got data "
                f"{data.shape} and {len(labels)} labels"
            )
        images = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        parts["test" if name == "test_batch" else "train"].append((images, labels))
    meta = root / "batches.meta"
    classes = list(CIFAR10_CLASSES)
    if meta.is_file():
        classes = [n.decode() if isinstance(n, bytes) else str(n) for n in _field(_unpickle(meta), "label_names", meta)]
    return _Decoded(
        train_images=np.ascontiguousarray(np.concatenate([p[0] for p in parts["train"]])),
        train_labels=np.concatenate([p[1] for p in parts["train"]]),
        test_images=np.ascontiguousarray(np.concatenate([p[0] for p in parts["test"]])),
        test_labels=np.concatenate([p[1] for p in parts["test"]]),
        classes=classes,
    )


#: The only globals a CIFAR-10 batch pickle may reference (numpy arrays; numpy 1 and 2 module paths).
_BATCH_GLOBALS = frozenset({
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
})  # fmt: skip


class _BatchUnpickler(pickle.Unpickler):
    """An unpickler that refuses every global outside :data:`_BATCH_GLOBALS`: nothing in the file is executed."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _BATCH_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused to load {module}.{name}: a CIFAR-10 batch holds only arrays")


def _unpickle(file: Path) -> dict:
    try:
        with open(file, "rb") as handle:
            return _BatchUnpickler(handle, encoding="latin1").load()
    except (OSError, EOFError, pickle.UnpicklingError, ValueError) as error:
        raise DataError(f"{file}: not a readable CIFAR-10 batch file ({error})") from error


def _field(entry: dict, name: str, file: Path) -> Any:
    """``entry[name]`` whether the pickle's keys are str or bytes."""
    for key in (name, name.encode()):
        if key in entry:
            return entry[key]
    raise DataError(f"{file}: expected a dict with key {name!r}, found keys {sorted(map(str, entry))}")


class _Member(NamedTuple):
    """One image file of an image-folder tree: split ('train'/'test'), class name, file name."""

    split: str
    label_name: str
    name: str
    read: Callable[[], bytes]


def _member_of(parts: Sequence[str]) -> tuple[str, str, str] | None:
    """(split, class, file) if ``parts`` ends in ``train|test / <class> / <image file>``."""
    if len(parts) < 3 or parts[-3] not in ("train", "test"):
        return None
    name = parts[-1]
    if name.startswith(".") or not name.lower().endswith(IMAGE_SUFFIXES):
        return None
    return parts[-3], parts[-2], name


def _folder_members(root: Path) -> list[_Member]:
    members = []
    for split in ("train", "test"):
        for file in (root / split).glob("*/*"):
            parsed = _member_of(file.parts)
            if parsed is not None:
                members.append(_Member(*parsed, read=file.read_bytes))
    return members


def _decode_archive(archive: Path) -> _Decoded:
    """Decode the images of a ``.tar.gz`` image-folder tree, streaming its members."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = []
            for info in tar:
                parsed = _member_of(info.name.split("/")) if info.isfile() else None
                if parsed is not None:
                    data = tar.extractfile(info).read()
                    members.append(_Member(*parsed, read=lambda data=data: data))
    except (tarfile.TarError, EOFError, zlib.error, OSError) as error:
        raise DataError(
            f"{archive}: not a readable .tar.gz ({error}); expected a gzip'd tar of "
            f"train/<class>/*.jpg and test/<class>/*.jpg (re-copy it, e.g. from ../shared/data/)"
        ) from error
    return _decode_images(members, archive)


def _decode_images(members: list[_Member], where: Path) -> _Decoded:
    """Decode image members into arrays; labels from the sorted class names of ``train``."""
    classes = sorted({m.label_name for m in members if m.split == "train"})
    test_classes = sorted({m.label_name for m in members if m.split == "test"})
    if not members:
        raise DataError(
            f"{where}: no images found; expected train/<class>/*.jpg and test/<class>/*.jpg. "
            f"(For torchvision's cifar-10-python.tar.gz, extract it and pass the {BATCHES_DIR} folder.)"
        )
    if test_classes != classes:
        raise DataError(f"{where}: the class folders of test/ {test_classes} differ from those of train/ {classes}")
    label_of = {name: index for index, name in enumerate(classes)}
    out = {}
    for split in ("train", "test"):
        chosen = sorted((m for m in members if m.split == split), key=lambda m: (m.label_name, m.name))
        images = np.stack([_decode_image(m.read(), f"{where}: {split}/{m.label_name}/{m.name}") for m in chosen])
        out[split] = (images, np.array([label_of[m.label_name] for m in chosen], dtype=np.int64))
    return _Decoded(out["train"][0], out["train"][1], out["test"][0], out["test"][1], classes)


def _decode_image(data: bytes, where: str) -> np.ndarray:
    """One encoded image -> uint8 (32, 32, 3) RGB. Its size is checked from the header, before any pixel is
    decoded: an image that claims a huge size (a decompression bomb) is refused without allocating it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                if image.size != IMAGE_SHAPE[1::-1]:
                    raise DataError(f"{where}: expected a 32x32 RGB image, got {image.size[0]}x{image.size[1]}")
                array = np.asarray(image.convert("RGB") if image.mode != "RGB" else image, dtype=np.uint8)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise DataError(f"{where}: refused an oversized image ({error})") from None
    except (UnidentifiedImageError, OSError, ValueError) as error:
        if isinstance(error, DataError):
            raise
        raise DataError(f"{where}: not a readable image ({error})") from error
    if array.shape != IMAGE_SHAPE:
        raise DataError(f"{where}: expected a 32x32 RGB image, got shape {array.shape}")
    return array


def _validate(decoded: _Decoded, where: Path) -> None:
    """Shapes, dtypes, label range and class count; totals other than CIFAR-10's only warn."""
    if len(decoded.classes) != len(CIFAR10_CLASSES):
        raise DataError(f"{where}: expected 10 classes (CIFAR-10), found {len(decoded.classes)}: {decoded.classes}")
    for split in ("train", "test"):
        images = getattr(decoded, f"{split}_images")
        labels = getattr(decoded, f"{split}_labels")
        if images.dtype != np.uint8 or images.ndim != 4 or images.shape[1:] != IMAGE_SHAPE:
            raise DataError(f"{where}: expected {split} images uint8 (N, 32, 32, 3), got {images.dtype} {images.shape}")
        if len(images) == 0 or len(labels) != len(images):
            raise DataError(
                f"{where}: expected N > 0 {split} images and as many labels, got {len(images)} and {len(labels)}"
            )
        if labels.min() < 0 or labels.max() >= len(decoded.classes):
            raise DataError(f"{where}: {split} labels must lie in [0, 10), got [{labels.min()}, {labels.max()}]")
        if len(images) != EXPECTED_TOTALS[split]:
            logger.warning(
                "%s: %d %s images (CIFAR-10 has %d); using them as they are",
                where, len(images), split, EXPECTED_TOTALS[split],
            )


# ----------------------------------------------------------------------------------------------
# Synthetic stand-in
# ----------------------------------------------------------------------------------------------
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


# ----------------------------------------------------------------------------------------------
# Split
# ----------------------------------------------------------------------------------------------
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
    Raises :class:`DataError` naming the parameter and its maximum when a size is too large.
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


# ----------------------------------------------------------------------------------------------
# Device tensors
# ----------------------------------------------------------------------------------------------
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


#: Synthetic data is bounded like CIFAR-10 (50,000 training + validation images, 10,000 test images), so that a
#: mistyped size fails at once instead of trying to allocate tens of gigabytes.
SYNTHETIC_MAX_TRAIN = 50_000
SYNTHETIC_MAX_TEST = 10_000


def check_synthetic_sizes(config: RunConfig) -> None:
    """Raise :class:`DataError` naming the field when synthetic sizes exceed CIFAR-10's."""
    n_train = (config.train_size or 2000) + config.val_size
    if n_train > SYNTHETIC_MAX_TRAIN:
        name = "train_size" if (config.train_size or 0) > config.val_size else "val_size"
        raise DataError(f"{name}: synthetic data has at most {SYNTHETIC_MAX_TRAIN} training + validation images "
                        f"(as CIFAR-10), got train_size + val_size = {n_train}")  # fmt: skip
    if (config.test_size or 0) > SYNTHETIC_MAX_TEST:
        raise DataError(f"test_size: synthetic data has at most {SYNTHETIC_MAX_TEST} test images (as CIFAR-10), "
                        f"got {config.test_size}")  # fmt: skip


def prepare_data(config: RunConfig, device: torch.device | str) -> PreparedData:
    """Load (or synthesise) the data of ``config``, split it, and put it on ``device``.

    Uses ``config.data`` (a path, ``"synthetic"`` or None to search), ``data_seed``,
    ``train_size``, ``val_size``, ``test_size``, ``train_eval_size`` and ``image_size``. For
    ``"synthetic"``, :func:`synthetic_cifar` (seed 0) makes ``(train_size or 2000) + val_size``
    training and ``test_size or 1000`` test images, each rounded up to a multiple of 10, at most as many as
    CIFAR-10 has (:func:`check_synthetic_sizes`).
    """
    if config.data == SYNTHETIC:
        check_synthetic_sizes(config)
        n_train = _round_up((config.train_size or 2000) + config.val_size, 10)
        arrays = synthetic_cifar(n_train=n_train, n_test=_round_up(config.test_size or 1000, 10))
    else:
        arrays = load_cifar10(config.data)
    split = make_split(
        arrays.train_labels, arrays.test_labels, config.train_size, config.val_size, config.test_size, config.effective_data_seed
    )

    def on_device(images: np.ndarray, labels: np.ndarray, index: np.ndarray) -> DeviceDataset:
        return DeviceDataset.from_uint8(images[index], labels[index], device, config.image_size)

    train = on_device(arrays.train_images, arrays.train_labels, split.train)
    positions = _train_eval_positions(arrays.train_labels[split.train], config.train_eval_size, config.effective_data_seed)
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
        raise DataError(f"{name}: expected an (inputs, targets) pair of tensors or a torch Dataset, got {type(split).__name__}")
    if targets.ndim != 1 or targets.dtype.is_floating_point or targets.dtype == torch.bool:
        raise DataError(f"{name}: targets must be a 1-D tensor of integer class indices, got {targets.dtype} of shape {tuple(targets.shape)}")
    if inputs.shape[0] != targets.shape[0] or inputs.shape[0] == 0:
        raise DataError(f"{name}: inputs have {inputs.shape[0]} rows and targets {targets.shape[0]}; they must match and be > 0")
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
        train=sets["train"], train_eval=sets["train"].subset(positions), val=sets["val"], test=sets["test"],
        split=Split(**sizes), source={"name": "tensors", "format": "tensors", "sha256": fingerprint},
    )  # fmt: skip


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


# ----------------------------------------------------------------------------------------------
# Batches
# ----------------------------------------------------------------------------------------------
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
