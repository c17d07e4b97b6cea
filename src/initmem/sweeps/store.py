"""The run store: one netCDF file per run, named by the run's hash, verified when read; and the one checked read
of every file :func:`write_run` writes (:func:`read_checked`).

``<cache_dir>/<config.hash()>.nc`` (``<hash>.stacked<K>.nc`` for a run trained in a stack of K models: stacking
changes the floating-point path, so a stacked and a sequential run of one config never share a file). Each file
carries a checksum of its content (:data:`CHECKSUM_ATTR`) and is written atomically
(:func:`initmem.base.files.atomic_write`), so a killed sweep never leaves half a file. A file that cannot be read,
whose checksum does not match, or that belongs to another config is moved aside (``.rejected``) and the run is
trained again. Runs with ``checkpoint_every > 0`` keep ``<hash>.ckpt`` beside their file while they train.

:func:`write_run` also writes the combined files of a sweep (``results/<preset>/<experiment>.nc``) and the GPU
results, each large numeric array compressed (:data:`COMPRESSION`); whatever reads any of these goes through
:func:`read_checked`, which verifies the checksum (or says, in a logged line, that the file predates checksums) and
raises :class:`ChecksumError` on a mismatch.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..base.files import atomic_write, set_aside
from ..base.reads import note
from ..run.config import RunConfig

__all__ = [
    "CHECKSUM_ATTR",
    "COMPRESSION",
    "COMPRESSED_BYTES",
    "ChecksumError",
    "run_path",
    "checkpoint_path",
    "content_digest",
    "write_run",
    "read_checked",
    "load_run",
    "file_problem",
]

log = logging.getLogger(__name__)

#: The attribute of every file :func:`write_run` writes that holds the sha256 of its content (:func:`content_digest`).
CHECKSUM_ATTR = "content_sha256"

#: The HDF5 filters of every numeric array of at least :data:`COMPRESSED_BYTES` that :func:`write_run` writes: byte
#: shuffle and zlib level 4. A sweep's combined file is a dense grid over every factor of its design, mostly missing
#: cells, which these store in a few bytes.
COMPRESSION = {"zlib": True, "complevel": 4, "shuffle": True}
#: Smaller arrays are stored contiguous, unfiltered: a chunked array's index costs about 1 kB, more than zlib saves on
#: a run's per-epoch curves (a run's file would double).
COMPRESSED_BYTES = 4096


class ChecksumError(ValueError):
    """A stored Dataset whose content does not match its :data:`CHECKSUM_ATTR` (corrupt, truncated or changed after
    it was written), or that has none where one is required. The message (one line) names the file; ``reason``
    says what is wrong without it."""

    reason: str = ""


def run_path(cache_dir: str | os.PathLike, config: RunConfig, stacked: int = 0) -> Path:
    """Where a run's Dataset is cached: ``cache_dir/<config.hash()>.nc``, or ``<hash>.stacked<K>.nc`` for a run
    trained in a stack of K models (``stacked=K``): stacking changes the floating-point path, so a stacked and a
    sequential run of one config never share a file."""
    suffix = f".stacked{stacked}" if stacked > 1 else ""
    return Path(cache_dir) / f"{config.hash()}{suffix}.nc"


def checkpoint_path(cache_dir: str | os.PathLike, config: RunConfig) -> Path | None:
    """Where run ``config`` keeps its resumable checkpoint while it trains (None without ``checkpoint_every``)."""
    return Path(cache_dir) / f"{config.hash()}.ckpt" if config.checkpoint_every else None


def content_digest(ds: xr.Dataset) -> str:
    """SHA-256 of a Dataset's variables (names, dims, dtypes kinds, values) and attributes, except
    :data:`CHECKSUM_ATTR`; equal before writing and after reading back a netCDF file."""
    digest = hashlib.sha256()
    for name in sorted(map(str, ds.variables)):
        var = ds.variables[name]
        values = np.asarray(var.values)
        digest.update(f"{name}{tuple(var.dims)}{values.shape}".encode())
        if values.dtype.kind in "fiub":
            digest.update(np.ascontiguousarray(values, dtype=np.float64).tobytes())
        else:
            digest.update(json.dumps(values.astype(str).tolist()).encode())
    attrs = {str(k): _plain_value(v) for k, v in ds.attrs.items() if k != CHECKSUM_ATTR}
    digest.update(json.dumps(attrs, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def _plain_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_run(ds: xr.Dataset, path: str | os.PathLike) -> str:
    """Write ``ds`` to ``path`` atomically (:func:`initmem.base.files.atomic_write`), with its
    :func:`content_digest` in the attribute :data:`CHECKSUM_ATTR` and its attributes made ones netCDF accepts.

    Returns the checksum written (a Dask worker reports it, and the sweep checks the file it reads carries it)."""
    ds = ds.copy(deep=False)
    ds.attrs = _plain_attrs(ds.attrs)
    ds.attrs[CHECKSUM_ATTR] = content_digest(ds)
    content = _netcdf_bytes(ds)
    atomic_write(path, lambda handle: handle.write(content))
    return ds.attrs[CHECKSUM_ATTR]


def _netcdf_bytes(ds: xr.Dataset) -> bytes:
    """``ds`` as the bytes of a netCDF-4 file (h5netcdf), encoded in memory: HDF5 never opens a path (a link planted
    there is not followed) and never writes to a disk (a full disk crashed it, SIGSEGV). The write lock is this
    call's own: on a Dask worker xarray would take a distributed lock named after the buffer, which fails."""
    import h5netcdf
    from xarray.backends import H5NetCDFStore

    buffer = io.BytesIO()
    with h5netcdf.File(buffer, "w") as file:
        ds.dump_to_store(H5NetCDFStore(file, lock=threading.Lock()), encoding=_compressed_encoding(ds))
    return buffer.getvalue()


def _compressed_encoding(ds: xr.Dataset) -> dict[str, dict[str, Any]]:
    """The encoding of every variable of ``ds``: :data:`COMPRESSION` for a numeric array of at least
    :data:`COMPRESSED_BYTES`, xarray's defaults for the rest. It replaces whatever encoding a variable brought from the
    file it was read from, so equal content gives equal bytes."""
    return {
        str(name): dict(COMPRESSION) if var.ndim and var.dtype.kind in "fiub" and var.nbytes >= COMPRESSED_BYTES else {}
        for name, var in ds.variables.items()
    }


def _plain_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes netCDF accepts: str subclasses (e.g. ``torch.__version__``) as plain str, bools as
    ints, None as ''; anything else is kept."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, str):
            value = str(value)
        elif isinstance(value, (bool, np.bool_)):
            value = int(value)
        elif value is None:
            value = ""
        out[key] = value
    return out


def read_checked(path: str | os.PathLike, *, require_checksum: bool = False) -> xr.Dataset:
    """A file written by :func:`write_run` (a run, a combined sweep, the GPU results), fully in memory with the file
    closed, its checksum verified: the one way the package reads them.

    The content must match the file's :data:`CHECKSUM_ATTR` (:func:`content_digest`). A file without the attribute
    predates checksums: it is returned as read, after one warning line saying so, unless ``require_checksum``
    (what :func:`load_run` asks of a cached run), which refuses it.

    Raises:
        FileNotFoundError: there is no file at ``path``.
        ChecksumError: the content does not match its checksum, or there is none and ``require_checksum``.
        OSError, ValueError: not a readable netCDF file (the errors of h5netcdf and h5py).
    """
    path = note(path)  # a page that reads it depends on it (initmem.base.reads)
    ds = xr.load_dataset(path, engine="h5netcdf")
    stored = ds.attrs.get(CHECKSUM_ATTR)
    if stored is None and not require_checksum:
        log.warning("%s predates checksums (it has no %s attribute): read as it is, unverified", path, CHECKSUM_ATTR)
        return ds
    if stored is None:
        reason, remedy = "it has no checksum (not a file of this version)", "write it again"
    elif stored != content_digest(ds):
        reason = "its content does not match its checksum (corrupt, truncated or changed after it was written)"
        remedy = "restore it (a committed file: git checkout -- <file>) or write it again"
    else:
        return ds
    error = ChecksumError(f"{path}: refused, {reason}; {remedy}")
    error.reason = reason
    raise error


def load_run(
    path: str | os.PathLike,
    config: RunConfig | None = None,
    *,
    expected_hash: str | None = None,
    read_only: bool = False,
) -> xr.Dataset | None:
    """A cached run, fully in memory with the file closed; None if there is none.

    Read with :func:`read_checked` (a checksum required). A file that cannot be read, whose :data:`CHECKSUM_ATTR`
    is missing or does not match its content (corrupt, truncated or written by something else), or whose
    ``config_hash`` is not ``expected_hash`` (default: ``config.hash()``, when a config is given) is reported in one
    warning line and moved aside to ``<path>.rejected``, so that the run is trained again and the file can be
    inspected. With ``read_only`` (a run of the committed record, which an exploration reuses) such a file is only
    reported and left where it is.
    """
    if expected_hash is None and config is not None:
        expected_hash = config.hash()
    path = note(path)  # looked for: a page whose sweep finds it missing depends on its appearing
    if not path.exists():
        return None
    ds, reason = _read_run(path, expected_hash)
    if ds is not None:
        return ds
    if read_only:
        log.warning("not reusing the run %s: %s; it will be trained instead", path, reason)
    else:
        _reject(path, reason)
    return None


def file_problem(path: str | os.PathLike, expected_hash: str | None = None) -> str | None:
    """Why the file at ``path``, written by :func:`write_run` (a run, or a sweep's combined file), cannot be used, in
    words: missing, unreadable, without a checksum or with one its content does not match, or (``expected_hash``
    given) another run's ``config_hash``; None when it can. Nothing is moved or logged: what the book asks of the
    committed record before it executes anything."""
    path = Path(path)
    if not path.is_file():
        return "it is missing"
    return _read_run(path, expected_hash)[1] or None


def _read_run(path: Path, expected_hash: str | None) -> tuple[xr.Dataset | None, str]:
    """``(the run, "")`` when the file at ``path`` is a readable run of ``expected_hash`` (any run: None) with its
    checksum verified, else ``(None, why not)``."""
    try:
        ds = read_checked(path, require_checksum=True)
        if expected_hash is None or ds.attrs.get("config_hash") == expected_hash:
            return ds, ""
        return None, f"its config_hash {ds.attrs.get('config_hash')!r} is not the run's {expected_hash}"
    except ChecksumError as exc:
        return None, exc.reason
    except Exception as exc:  # noqa: BLE001 - a corrupt file of any kind is re-trained
        return None, f"it is unreadable ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"


def _reject(path: Path, reason: str) -> None:
    """Set a cached file that cannot be used aside (``<path>.rejected``), with one warning line."""
    log.warning("ignoring the cached run %s: %s; %s, it will be trained again", path, reason, set_aside(path))
