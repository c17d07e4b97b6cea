"""The package travels with the book: the wheel the book offers (initmem.book.dist), installed with the line the
pages give into a fresh virtual environment outside the repository, runs the own-model page's cells and a chapter to
download there, and computes what the repository computes.

The environments are new (``python -m venv`` in a temporary folder) and hold only the installed wheel. What it
requires is taken from this environment without downloading (``pip install --no-index``): each sees a folder of links
to the installed files of exactly the distributions the wheel requires (with what those require, and the extra it is
installed with), nothing else, so that a module the cells import from an undeclared dependency is missing there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest

jupytext = pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("papermill")
pytest.importorskip("build", reason="building the wheel needs the package build (the book extra)")
requirements = pytest.importorskip("packaging.requirements")
from packaging.utils import canonicalize_name  # noqa: E402

from initmem.book import dist, portable  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
OWN_MODEL = REPO / "notebooks" / "U1_own_model.py"
#: The chapter to download that the test runs at its default, the smoke preset (synthetic data, 4 runs).
CHAPTER = "04_batch_size"
#: The own-model page's cells a reader copies: not its parameters cell, not the book's hidden cells.
HIDDEN = {"remove-cell", "remove-input", "parameters"}
#: The parameters of the page's MLP, counted by hand: Linear(32, 64), BatchNorm1d(64), Linear(64, 64),
#: BatchNorm1d(64), Linear(64, 10), each Linear with a bias and each BatchNorm with a gain and a shift.
MLP_PARAMETERS = (32 * 64 + 64) + 2 * 64 + (64 * 64 + 64) + 2 * 64 + (64 * 10 + 10)
#: What a run's file records that is no result of training (its duration, wall and CPU).
NOT_RESULTS = {"wall_time_s", "cpu_time_s"}
#: The line before the JSON that the probe appended to the page's cells prints.
MARK = "-- initmem test_dist probe --"
#: Appended to the page's cells: what they computed (every result Dataset's spread per seed and parameter count)
#: and where initmem came from.
PROBE = f"""
import json as _json
import initmem as _initmem, xarray as _xr
_results = {{k: v for k, v in dict(globals()).items() if isinstance(v, _xr.Dataset) and "selected_test_acc" in v}}
print({MARK!r})
print(_json.dumps({{
    "initmem": _initmem.__file__,
    "results": {{k: {{"spread": [float(x) for x in spread(v).values.ravel()],
                     "n_parameters": int(v.attrs["n_parameters"])}} for k, v in _results.items()}},
}}))
"""


def _outside_env(venv: Path) -> dict[str, str]:
    """A session with no pointer to the checkout, Jupyter's kernels looked up in the venv first."""
    env = {k: v for k, v in os.environ.items() if k not in ("INITMEM_ROOT", "PYTHONPATH", "MPLBACKEND")}
    env["JUPYTER_PATH"] = str(venv / "share" / "jupyter")
    return env


def _required(wheel: Path, extra: str) -> set[str]:
    """The distributions the wheel requires (with ``extra``, or none for ""), and what they require in turn (with the
    extras each requirement names), as installed here."""
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    todo = [(line.split(":", 1)[1].strip(), extra) for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    names: set[str] = set()
    followed: set[tuple[str, str]] = set()
    while todo:
        text, wanted = todo.pop()
        req = requirements.Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": wanted}):
            continue
        name = canonicalize_name(req.name)
        names.add(name)
        for with_extra in {"", *req.extras} - {e for n, e in followed if n == name}:
            followed.add((name, with_extra))
            try:
                todo.extend((r, with_extra) for r in metadata.requires(req.name) or [])
            except metadata.PackageNotFoundError:
                pass
    return names


def _view(folder: Path, names: set[str]) -> Path:
    """A folder of links to the installed files of the distributions ``names`` (their top-level packages, modules and
    ``.dist-info``), for a ``.pth`` line of a new environment."""
    folder.mkdir()
    for name in names:
        try:
            found = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for top in {Path(str(f)).parts[0] for f in found.files or []}:
            source = Path(found.locate_file(top))
            if top != ".." and source.exists() and not (folder / top).exists():
                (folder / top).symlink_to(source)
    return folder


def _environment(root: Path, wheel: Path, extra: str) -> SimpleNamespace:
    """A fresh virtual environment under ``root`` with the wheel installed by the pages' line (``pip install
    <wheel>`` or ``pip install "<wheel>[book]"``, in the folder that holds it), what it requires seen through a
    :func:`_view`, and a ``python3`` Jupyter kernel of its own."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    view = _view(root / "required", _required(wheel, extra))
    Path(purelib, "required.pth").write_text(f"{view}\n")
    line = f"{wheel.name}[{extra}]" if extra else wheel.name
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "--quiet", line]
    proc = subprocess.run(install, cwd=wheel.parent, env=_outside_env(venv), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    kernel = venv / "share" / "jupyter" / "kernels" / "python3"
    kernel.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (kernel / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "Python 3", "language": "python"}))
    return SimpleNamespace(python=python, venv=venv, wheel=wheel, purelib=Path(purelib))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel the book offers, built as the book builds it, in a download folder."""
    unmet = dist.missing_build_requirements(REPO)
    if unmet:
        pytest.skip(f"building the wheel without downloading needs {unmet} installed")
    return dist.build_wheel(tmp_path_factory.mktemp("download"), root=REPO)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> SimpleNamespace:
    """The wheel installed as the own-model page says (``pip install <wheel>``): the package alone."""
    return _environment(tmp_path_factory.mktemp("package"), wheel, "")


@pytest.fixture(scope="module")
def installed_book(wheel, tmp_path_factory) -> SimpleNamespace:
    """The wheel installed as a chapter's notebook to run says (``pip install "<wheel>[book]"``)."""
    return _environment(tmp_path_factory.mktemp("book"), wheel, "book")


def test_the_wheel_installs_outside_the_repository(installed):
    proc = subprocess.run(
        [str(installed.python), "-c", "import initmem; print(initmem.__file__, initmem.__version__)"],
        cwd=installed.venv,
        env=_outside_env(installed.venv),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    where, version = proc.stdout.split()
    assert Path(where).is_relative_to(installed.purelib) and version == dist.__version__
    assert installed.wheel.name == dist.wheel_name()
    hidden = subprocess.run(
        [str(installed.python), "-c", "import papermill"], env=_outside_env(installed.venv), capture_output=True
    )
    assert hidden.returncode != 0, "the package alone sees the book's toolchain: the environment is not its own"


def test_the_own_model_example_runs_from_the_installed_wheel(installed, tmp_path):
    """The page's cells, pasted in order into one script in an empty folder: they run from the installed wheel, every
    spread is a number of percentage points in [0, 100] and the model has the parameters counted by hand. The
    environment holds only what the wheel requires: a module imported from anything else is missing there."""
    nb = jupytext.read(OWN_MODEL)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and not HIDDEN & set(c.metadata.get("tags", []))]
    script = tmp_path / "own_model.py"
    script.write_text("\n\n".join(cells) + "\n" + PROBE)
    env = {**_outside_env(installed.venv), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [str(installed.python), script.name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed, rest = proc.stdout.split(MARK, 1)
    lines = printed.splitlines()  # what a reader sees: sentences, no raw repr, no six-decimal table
    assert lines[0].startswith("spread of each seed: ") and lines[0].endswith(" pp"), printed
    assert sum(line.startswith(("SGD: spread ", "Adam: spread ")) for line in lines) == 2, printed
    assert "<xarray" not in printed and not re.search(r"\d\.\d{6}", printed), printed  # a p-value shows 2 digits
    probe = json.loads(rest)
    assert Path(probe["initmem"]).is_relative_to(installed.purelib)
    results = probe["results"]
    assert {"sgd", "adam"} <= set(results), sorted(results)
    for name, result in results.items():
        assert result["n_parameters"] == MLP_PARAMETERS, name
        assert result["spread"] and all(0 <= s <= 100 for s in result["spread"]), (name, result["spread"])


def test_a_downloaded_chapter_runs_from_the_installed_wheel_and_computes_what_the_repository_does(
    installed_book, tmp_path
):
    """Chapter 04 as a reader downloads it, executed with papermill by the environment's own kernel in an empty
    folder: it trains its smoke runs into results/ beside it, and a run it trained, replayed by the repository's
    ``initmem train --config``, gives the same numbers."""
    import numpy as np
    import xarray as xr

    nbformat.write(portable.portable_notebook(REPO / "notebooks" / f"{CHAPTER}.py"), str(tmp_path / "chapter.ipynb"))
    code = (
        "import papermill; papermill.execute_notebook('chapter.ipynb', 'out.ipynb', kernel_name='python3', "
        "progress_bar=False)"
    )
    proc = subprocess.run(
        [str(installed_book.python), "-c", code],
        cwd=tmp_path,
        env=_outside_env(installed_book.venv),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    combined = tmp_path / "results" / "smoke" / f"{CHAPTER}.nc"
    with xr.open_dataset(combined, engine="h5netcdf") as ds:
        assert ds.attrs["preset"] == "smoke" and ds.attrs["experiment"] == CHAPTER
        acc = ds["selected_test_acc"].values
    assert acc.size and np.all((acc >= 0) & (acc <= 100))
    run = sorted((tmp_path / "results" / "smoke" / CHAPTER / "runs").glob("*.nc"))[0]
    again = tmp_path / "again.nc"
    repo_env = {**_outside_env(installed_book.venv), "PYTHONPATH": str(REPO / "src")}
    replay = [sys.executable, "-m", "initmem", "train", "--config", str(run), "--out", str(again)]
    proc = subprocess.run(replay, cwd=tmp_path, env=repo_env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with xr.open_dataset(run, engine="h5netcdf") as a, xr.open_dataset(again, engine="h5netcdf") as b:
        assert set(a.data_vars) == set(b.data_vars)
        differ = [
            v
            for v in a.data_vars
            if v not in NOT_RESULTS and not np.array_equal(a[v].values, b[v].values, equal_nan=True)
        ]
    assert not differ, f"the wheel's run and the repository's replay differ in {differ}"
