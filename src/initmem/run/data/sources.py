"""Where CIFAR-10 is: :func:`find_cifar10` searches the usual places, :func:`download_cifar10` fetches it, and
:func:`_detect_format` tells the three on-disk layouts apart.

* ``torchvision-batches``: torchvision's ``cifar-10-batches-py`` folder (the folder itself or its parent, e.g. the
  ``root`` given to :func:`download_cifar10`);
* ``image-folder``: ``train/<class>/*.jpg`` and ``test/<class>/*.jpg`` (``.jpeg``/``.png`` too);
* ``image-folder-tar.gz``: the same tree inside a ``.tar.gz``, e.g. ``../shared/data/cifar10-jpeg.tar.gz``.

Decoding them is :mod:`initmem.run.data.decode`'s job. :class:`DataError`, the one error of the data layer, is
defined here. Nothing in this module imports torch (``download_cifar10`` imports torchvision when called).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ...base.paths import default_root

__all__ = [
    "CIFAR10_CLASSES",
    "BATCH_FILES",
    "BATCHES_DIR",
    "ARCHIVE_NAME",
    "DataError",
    "find_cifar10",
    "download_cifar10",
]

logger = logging.getLogger(__name__)

#: The ten class names in CIFAR-10's label order (label ``i`` is ``CIFAR10_CLASSES[i]``).
CIFAR10_CLASSES = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)

BATCH_FILES = ("data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5", "test_batch")
BATCHES_DIR = "cifar-10-batches-py"
ARCHIVE_NAME = "cifar10-jpeg.tar.gz"

#: Used by :func:`find_cifar10`: the repository found from the working directory (:mod:`initmem.base.paths`), never
#: the folder the package is installed in.
_REPO_ROOT = default_root()
_HOW_TO_GET = (
    "Get CIFAR-10 with `initmem download-data DIR` (needs internet; then pass --data DIR or set "
    "INITMEM_DATA=DIR), or pass --data PATH to a cifar-10-batches-py folder, an image folder "
    "(train/<class>/*.jpg, test/<class>/*.jpg) or its .tar.gz."
)


class DataError(ValueError):
    """The data is missing, unreadable or not CIFAR-10-shaped.

    A :class:`ValueError` (like :class:`initmem.run.config.ConfigError`): the message says what was
    expected and where the loader looked, so the CLI can print it as is.
    """


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

    Returns ``root/cifar-10-batches-py``, which :func:`~initmem.run.data.decode.load_cifar10` accepts (as does
    ``root``).
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
