"""Decoding CIFAR-10 once: :func:`load_cifar10` turns any source of :mod:`initmem.run.data.sources` into uint8
host arrays (:class:`CifarArrays`) and caches them.

The batch files are pickles; they are read with an unpickler that builds only numpy arrays and plain containers
(:func:`_unpickle`), so a planted batch file is refused instead of running code. Archive members are read directly,
nothing is extracted. An image whose header claims more pixels than Pillow's decompression-bomb limit, or any size
other than 32x32, is refused before it is decoded.

Decoding happens once: the uint8 arrays are cached as an uncompressed ``.npz`` in ``$INITMEM_CACHE`` (default
``~/.cache/initmem``), named by the source's digest and :data:`DATA_FORMAT_VERSION`. Archive checksums are
themselves cached, keyed by (path, size, mtime), so a second load reads one file and hashes nothing.

Validation: every image must be 32x32 RGB (other modes are converted), labels must lie in [0, 10) and there must be
exactly 10 classes; anything else raises :class:`~initmem.run.data.sources.DataError`. The totals are *not*
enforced, so tiny fixtures are valid sources: totals other than 50,000/10,000 only log a warning.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import pickle
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from PIL import Image, UnidentifiedImageError

from ...base.files import atomic_write
from .sources import BATCH_FILES, BATCHES_DIR, CIFAR10_CLASSES, DataError, _cache_dir, _detect_format, find_cifar10

__all__ = ["DATA_FORMAT_VERSION", "CifarArrays", "load_cifar10"]

logger = logging.getLogger(__name__)

#: Bumped whenever the decoded cache changes meaning; part of every cache file name.
DATA_FORMAT_VERSION = 1

IMAGE_SHAPE = (32, 32, 3)
EXPECTED_TOTALS = {"train": 50_000, "test": 10_000}
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


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


def load_cifar10(path: str | os.PathLike | None = None) -> CifarArrays:
    """Load CIFAR-10 from ``path`` (or :func:`~initmem.run.data.sources.find_cifar10`'s search) as uint8 host arrays.

    Order: the arrays keep the source's order, which is NOT shuffled for image folders and archives. An
    ``image-folder`` or ``image-folder-tar.gz`` source (the shared JPEG archive among them) comes **sorted by class,
    then by file name**: ``train_images[:5000]`` of CIFAR-10 are all airplanes. ``torchvision-batches`` come in the
    batch files' order (``data_batch_1`` to ``_5``, then ``test_batch``), which CIFAR-10's authors shuffled. Take
    subsets through :func:`initmem.run.data.prepare.make_split` or
    :func:`~initmem.run.data.prepare.cifar10_tensors` (class-balanced and shuffled), never by slicing.

    The first load decodes the source and caches the arrays (a few seconds for the JPEG archive); later loads read
    the cache (well under 2 s). Raises :class:`~initmem.run.data.sources.DataError` on missing, corrupt or
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
    try:
        atomic_write(file, write)
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
_BATCH_GLOBALS = frozenset(
    {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
    }
)


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
    """One encoded image -> uint8 (32, 32, 3) RGB.

    The size in the header is checked before a pixel is decoded: an image claiming more pixels than Pillow's
    decompression-bomb limit (``Image.MAX_IMAGE_PIXELS``) is refused when opened, any other size than 32x32 right
    after, so a planted 40000x40000 header costs nothing.
    """
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            array = None
            if (height, width) == IMAGE_SHAPE[:2]:
                array = np.asarray(image.convert("RGB") if image.mode != "RGB" else image, dtype=np.uint8)
    except Image.DecompressionBombError as error:
        raise DataError(f"{where}: refused before decoding, not a 32x32 image ({error})") from error
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise DataError(f"{where}: not a readable image ({error})") from error
    if array is None or array.shape != IMAGE_SHAPE:
        shape = f"{width}x{height} pixels" if array is None else f"shape {array.shape}"
        raise DataError(f"{where}: expected a 32x32 RGB image, got {shape}")
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
                where,
                len(images),
                split,
                EXPECTED_TOTALS[split],
            )
