"""Every notebook (experiments 01-07, the reproduction ledger 99 and the theory notebooks T*) executes at the
``smoke`` preset through the runner, shows its figures and glues the values its text refers to.

One session-scoped execution of all notebooks (a few minutes on 2 cores) feeds most tests here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("papermill")
pytest.importorskip("myst_nb")
jupytext = pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")

from initmem.book import runner as experiments  # noqa: E402
from initmem.book.parameters import ParameterError  # noqa: E402
from initmem.study.costs import costs  # noqa: E402
from initmem.study.design import layout, preset_notes, presets, registry  # noqa: E402
from initmem.study.experiments import DISCOVERED, Note, e11_scale_ladder  # noqa: E402
from initmem.sweeps.spec import SweepSpec  # noqa: E402

pytestmark = pytest.mark.slow

NOTEBOOKS = experiments.discover_notebooks()
EXPERIMENTS = [n for n in NOTEBOOKS if n[:2].isdigit() and n != "00_presets"]  # 00 renders tables only
GLUE_PREFIX = "application/papermill.record/"
#: A {glue} reference to a name of the page itself; a paste from another page (``path::name``, whose name that page's
#: required glue lists) is left out.
GLUE_REF = re.compile(r"\{glue(?::\w+)?\}`(?![^`]*::)([^`:]+)(?::[^`]*)?`|```\{glue(?::\w+)?\}\s+([^\s`]+)")

#: Names each experiment notebook must glue (figures and the numbers the book and the ledger use): its module's.
REQUIRED_GLUE = {e.name: list(e.glue) for e in DISCOVERED if e.glue}
#: Notebooks that draw figures (00 and 99 are tables).
WITH_FIGURES = [n for n in NOTEBOOKS if n not in ("00_presets", "99_reproduction")]


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """Run every notebook once at the smoke preset; returns (results by name, results_dir)."""
    root = tmp_path_factory.mktemp("smoke")
    results = experiments.run_notebooks(
        preset="smoke", results_dir=root / "results", out_dir=root / "executed", force=True, progress=False
    )
    return {r.name: r for r in results}, root / "results"


def _outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            yield from cell.get("outputs", [])


def _glued(path: Path) -> dict[str, dict]:
    out = {}
    for output in _outputs(path):
        meta = output.get("metadata", {}).get("scrapbook")
        if meta:
            out[meta["name"]] = output.get("data", {})
    return out


#: The figures' format: SVG (initmem.study.presentation.plots.style.use_book_style), legible at any width.
FIGURE_MIME = "image/svg+xml"
#: The line under every figure (initmem.book.page.source_note).
SOURCE_NOTE = "reproduce: `initmem experiments"


def _images(path: Path, mime: str = FIGURE_MIME) -> int:
    """Outputs of type ``mime`` (shown or glued) of the executed notebook at ``path``."""
    return sum(1 for output in _outputs(path) for key in output.get("data", {}) if key.endswith(mime))


def _source_notes(path: Path) -> list[str]:
    """The Markdown outputs that say where a figure comes from."""
    texts = ("".join(output.get("data", {}).get("text/markdown", "")) for output in _outputs(path))
    return [text for text in texts if SOURCE_NOTE in text]


def _referenced(name: str) -> set[str]:
    nb = jupytext.read(experiments.NOTEBOOKS_DIR / f"{name}.py")
    names = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for a, b in GLUE_REF.findall(cell.source):
                names.add(a or b)
    return {n for n in names if "::" not in n}


def test_all_notebooks_are_discovered():
    for name in (
        "01_optimizers",
        "02_long_training",
        "03_lr_and_l2",
        "04_batch_size",
        "05_depth",
        "06_norms",
        "07_clocks",
        "99_reproduction",
    ):
        assert name in NOTEBOOKS


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes(smoke_run, name):
    result = smoke_run[0][name]
    assert result.ok, str(result)


@pytest.mark.parametrize("name", WITH_FIGURES)
def test_notebook_shows_figures(smoke_run, name):
    result = smoke_run[0][name]
    assert result.ok, str(result)
    assert _images(result.output) >= 1, f"{name} produced no {FIGURE_MIME} output"
    assert _images(result.output, "image/png") == 0, f"{name} shows a PNG figure"


@pytest.mark.parametrize("name", WITH_FIGURES)
def test_every_figure_says_where_it_comes_from(smoke_run, name):
    """Under each figure (every figure is glued) a line names its data and the command that reproduces it; a page
    that links result files renders its Markdown outputs as MyST (the {download} role)."""
    result = smoke_run[0][name]
    assert result.ok, str(result)
    figures = [key for key, data in _glued(result.output).items() if any(k.endswith(FIGURE_MIME) for k in data)]
    notes = _source_notes(result.output)
    assert figures and len(notes) == len(figures), (name, figures, notes)
    assert all("--only " in note and name[:2] in note for note in notes), notes
    if name in EXPERIMENTS:
        nb = nbformat.read(result.output, as_version=4)
        assert nb.metadata["mystnb"]["render_markdown_format"] == "myst", name


def test_the_ledgers_forest_plot_is_glued_and_not_also_drawn_by_its_cell(smoke_run):
    """99 pastes its forest plot by glue (under the answer, and on the landing page); the cell that makes it must not
    draw it as well (the inline backend shows every figure still open when a cell ends: the page showed it twice)."""
    result = smoke_run[0]["99_reproduction"]
    assert result.ok, str(result)
    figures = [key for key, data in _glued(result.output).items() if any(k.endswith(FIGURE_MIME) for k in data)]
    assert figures == ["r_forest"] and _images(result.output) == 1


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_referenced_glue_names_exist(smoke_run, name):
    """Every {glue:...}`name` in the notebook's markdown is glued by the notebook itself."""
    result = smoke_run[0][name]
    assert result.ok, str(result)
    missing = _referenced(name) - set(_glued(result.output))
    assert not missing, f"{name} refers to glue names it never glues: {sorted(missing)}"


def test_the_clocks_chapter_at_its_book_preset_pastes_no_nan(tmp_path):
    """07 at the cpu preset, from the committed results (it trains nothing, ~20 s): no value its prose pastes reads
    "nan" (it printed one for SGD with L2, a family of two configurations whose rank correlation is undefined)."""
    root = experiments.NOTEBOOKS_DIR.parent
    if presets.book_preset("07_clocks") != "cpu" or not (root / "results" / "cpu" / "01_optimizers.nc").is_file():
        pytest.skip("07 is not rendered from committed cpu results")
    [result] = experiments.run_notebooks(
        preset="cpu", only="07", out_dir=tmp_path, results_dir=root / "results", force=True, progress=False
    )
    assert result.ok, str(result)
    glued = _glued(result.output)
    pasted = {name: "".join(glued[name].get(f"{GLUE_PREFIX}text/plain", "")) for name in _referenced("07_clocks")}
    assert pasted and not {name: text for name, text in pasted.items() if re.search(r"\bnan\b", text, re.I)}


@pytest.mark.parametrize("name", sorted(REQUIRED_GLUE))
def test_required_glue(smoke_run, name):
    result = smoke_run[0][name]
    assert result.ok, str(result)
    glued = _glued(result.output)
    missing = [n for n in REQUIRED_GLUE[name] if n not in glued]
    assert not missing, f"{name} does not glue {missing}"
    for key, data in glued.items():
        assert data and all(k.startswith(GLUE_PREFIX) or k in ("text/plain", "text/html", FIGURE_MIME) for k in data)
        if "_fig_" in key:
            assert any(k.endswith(FIGURE_MIME) for k in data), f"{name}: figure glue {key} is not SVG"
    if name == "99_reproduction":
        assert any(k.endswith("text/html") for k in glued["r_table"]), "r_table is not a DataFrame"


def test_results_files_written(smoke_run):
    results, results_dir = smoke_run
    for name in ("01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth"):
        assert (results_dir / "smoke" / f"{name}.nc").is_file(), name
        assert any((results_dir / "smoke" / name / "runs").glob("*.nc")), name
    # 06 analyses 01's runs: it trains nothing and writes no results of its own
    assert not (results_dir / "smoke" / "06_norms").exists() and not (results_dir / "smoke" / "06_norms.nc").exists()


def test_ledger_has_every_claim(smoke_run):
    result = smoke_run[0]["99_reproduction"]
    data = _glued(result.output)["r_table"]
    html = data.get(GLUE_PREFIX + "text/html") or data["text/html"]  # glue(display=True) has no prefix
    for claim in (
        "C1",
        "C2 Adam",
        "C2 Muon",
        "C3 final predictor",
        "C4 larger lr",
        "C4 L2",
        "C4 both",
        "C5 equal steps",
        "C6",
        "C7",
        "B1",
    ):
        assert claim in html


def test_batch_size_override_as_documented(tmp_path):
    """`initmem experiments --only 04 -p batch_sizes "[32, 512]"` works at the smoke preset (the command line parses
    the text, the runner takes the value) ..."""
    from initmem.cli.experiments import parse_parameter_value

    results = experiments.run_notebooks(
        preset="smoke",
        only="04",
        parameters={"batch_sizes": parse_parameter_value("[32, 512]")},
        results_dir=tmp_path / "results",
        out_dir=tmp_path / "executed",
        force=True,
        progress=False,
    )
    assert results[0].ok, str(results[0])
    assert results[0].parameters["batch_sizes"] == [32, 512]


def test_batch_size_larger_than_train_size_is_a_clear_error(tmp_path):
    """... and a batch larger than the training set stops, before anything runs, with a message naming both."""
    with pytest.raises(ParameterError) as info:
        experiments.run_notebooks(
            preset="smoke",
            only="04",
            parameters={"batch_sizes": [32, 100000]},
            results_dir=tmp_path / "results",
            out_dir=tmp_path / "executed",
            force=True,
            progress=False,
        )
    assert "parameter 'batch_sizes'" in str(info.value)
    assert "exceed train_size" in str(info.value) and "100000" in str(info.value)
    assert not (tmp_path / "executed").exists()


# --------------------------------------------------------------------------- parameters vs presets (no execution)


def _defaults(name: str) -> dict:
    nb = jupytext.read(experiments.NOTEBOOKS_DIR / f"{name}.py")
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    scope: dict = {}
    exec(cell.source, scope)  # noqa: S102 - our own parameters cell: literals only
    return {k: v for k, v in scope.items() if not k.startswith("__")}


TRAINING_EXPERIMENTS = sorted(registry.EXPERIMENT_SPECS)
#: What every experiment notebook's parameters cell sets itself; the rest is None (the preset's value).
OWN_PARAMETERS = {"preset": "smoke", "results_dir": "results", "train_missing": None}


@pytest.mark.parametrize("name", TRAINING_EXPERIMENTS)
def test_parameters_cell_declares_the_preset_names_each_as_none(name):
    """The values of an experiment live once, in the presets: the cell names them and leaves each at None."""
    defaults = _defaults(name)
    assert {k: defaults.pop(k) for k in OWN_PARAMETERS} == OWN_PARAMETERS
    assert set(defaults) == set(presets.notebook_parameters("smoke", name)), name
    assert all(value is None for value in defaults.values()), {k: v for k, v in defaults.items() if v is not None}
    assert all(key in registry.PARAMETERS for key in defaults), sorted(set(defaults) - set(registry.PARAMETERS))


#: (preset, experiment) for every experiment a preset defines.
DEFINED = [(p, n) for p in layout.PRESETS for n in TRAINING_EXPERIMENTS if presets.notebook_parameters(p, n)]


@pytest.mark.parametrize("name", TRAINING_EXPERIMENTS)
def test_every_preset_gives_every_parameter_a_value(name):
    """A preset defines an experiment with every parameter, or not at all; smoke defines every one (an experiment may
    exist at smoke only: its module lists the presets it supports)."""
    names = {preset: set(presets.notebook_parameters(preset, name)) for preset in layout.PRESETS}
    defined = {preset: v for preset, v in names.items() if v}
    assert "smoke" in defined
    assert len({frozenset(v) for v in defined.values()}) == 1, names


def test_the_gpu_preset_defines_01_only_and_says_so():
    assert [n for p, n in DEFINED if p == "gpu"] == ["01_optimizers"]
    with pytest.raises(ValueError, match="02_long_training is not defined at preset 'gpu'.*smoke, cpu, paper"):
        presets.resolve_parameters("02_long_training", "gpu", {"preset": "gpu"})
    gpu, cpu = (presets.notebook_parameters(p, "01_optimizers") for p in ("gpu", "cpu"))
    lrs = dict(zip(gpu["optimizers"], gpu["lrs"]))
    # the cpu preset's rates at batch 128: SGD's twice (batch 64 -> 128), the adaptive optimizers' unchanged
    for name, lr in zip(cpu["optimizers"], cpu["lrs"]):
        assert lrs[name] == lr * (2 if name in ("sgd", "sgd_momentum") else 1), name
    assert gpu["optimizers"][:2] == ["sgd", "muon"] and gpu["seeds"] == [0] and gpu["train_size"] is None


@pytest.mark.parametrize("preset", layout.PRESETS)
@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_preset_parameter_is_declared(preset, name):
    declared = set(_defaults(name))
    unknown = set(presets.notebook_parameters(preset, name)) - declared
    assert not unknown, f"{preset}/{name}: {sorted(unknown)} are not parameters of the notebook"


@pytest.mark.parametrize("preset", [p for p, n in DEFINED if n == "04_batch_size"])
def test_batch_sizes_fit_the_training_set(preset):
    p = presets.notebook_parameters(preset, "04_batch_size")
    size = p.get("train_size") or 45_000
    assert max(p["batch_sizes"]) <= size and 512 <= size


@pytest.mark.parametrize(("preset", "name"), DEFINED)
def test_preset_sweeps_are_valid_specs(preset, name):
    """Every experiment's sweep at every preset builds valid RunConfigs through the registry (no training)."""
    p = {**_defaults(name), **presets.notebook_parameters(preset, name)}
    assert SweepSpec.from_dict(registry.experiment_spec(name, p)).n_runs >= 1
    if name == "02_long_training":
        assert p["reference_horizon"] in p["horizons"] and max(p["horizons"]) <= p["epochs"]


@pytest.mark.parametrize("preset", layout.PRESETS)
def test_every_preset_has_notes_with_reasons(preset):
    rows = preset_notes.notes_table(preset)
    assert rows and all(set(row) == {"setting", "value", "notebooks", "reason"} for row in rows)
    assert all(row["value"] and row["reason"] and row["notebooks"] for row in rows)


def test_the_notes_values_are_read_from_the_preset(monkeypatch):
    """The value column is generated: change a preset value and the table follows; only the reasons are prose."""
    row = next(r for r in preset_notes.notes_table("cpu") if r["setting"] == "epochs (01, 03)")
    assert row["value"] == "epochs: 40" and row["notebooks"] == "01, 03"
    monkeypatch.setitem(presets.NOTEBOOK_PARAMETERS["cpu"]["03_lr_and_l2"], "epochs", 60)
    row = next(r for r in preset_notes.notes_table("cpu") if r["setting"] == "epochs (01, 03)")
    assert row["value"] == "epochs: 40 (01); 60 (03)"
    monkeypatch.setitem(preset_notes.PRESET_NOTES, "cpu", [Note("gone", ("no_such_parameter",), "why")])
    with pytest.raises(ValueError, match="'gone' names no_such_parameter"):
        preset_notes.notes_table("cpu")


def test_cpu_preset_costs():
    # the fitted cost model (study/costs/cost_model.json, CPU time of an idle core, refitted 2026-12-05 to the 38 runs of
    # results/cpu/cost_replay): about 16.2 core-hours for the cpu preset without the ladder, of which 10's 330 runs
    # (grid and extra cells at five seeds, 7.5) and 01's 100 runs (2.3) are the largest parts.
    others = [n for n in presets.NOTEBOOK_PARAMETERS["cpu"] if n != "11_scale_ladder"]
    assert 15 < sum(costs.estimate_cost("cpu", n)["core_seconds"] for n in others) / 3600 < 18
    # 11 counts the rungs it has trained, not the 25.4 core-h its design declares for all five: per rung 8 seeds x
    # 2 sigma_w x (SGD, Adam, and the larger-lr SGD on a lever rung).
    ladder = presets.notebook_parameters("cpu", "11_scale_ladder")
    trained = e11_scale_ladder.rungs_of(ladder["rungs"])
    assert trained == list(e11_scale_ladder.DESIGN_RUNGS[: e11_scale_ladder.TRAINED_RUNGS])
    levers = e11_scale_ladder.lever_rungs_of(ladder["lever_rungs"], trained)
    per_rung = [8 * 2 * (2 + ((w, n) in levers)) for w, n, _ in trained]
    cost = costs.estimate_cost("cpu", "11_scale_ladder")
    assert cost["runs"] == sum(per_rung)
    full = dict(
        ladder,
        rungs=[list(r) for r in e11_scale_ladder.DESIGN_RUNGS],
        lever_rungs=[list(r) for r in e11_scale_ladder.LEVER_RUNGS],
    )
    design = costs.estimate_runs(
        [c for _, c in SweepSpec.from_dict(registry.experiment_spec("11_scale_ladder", full)).configs()]
    )
    assert cost["core_seconds"] <= design["core_seconds"]
    assert 24 < design["core_seconds"] / 3600 < 27


def test_run_images_counts_full_batches_and_every_evaluation():
    # 5,000 images at b = 64: 78 full batches (4,992 images) an epoch; 21 recorded epochs (0, 2, ..., 40) of 5,000
    # evaluation images (1,000 train-eval + 2,000 val + 2,000 test), plus the epoch-0 recalibration over the 1,000
    # train-eval images.
    assert costs.run_images(40, 5000, 64, 21, 5000, 1000) == (199_680, 106_000)
    cost = costs.estimate_cost("cpu", "01_optimizers")  # 100 runs of exactly that shape (5 seeds)
    assert (cost["runs"], cost["train_images"], cost["eval_images"]) == (100, 100 * 199_680, 100 * 106_000)


def test_the_documented_papermill_one_liner_runs_from_anywhere_in_the_checkout(tmp_path):
    """book/reproduce.md: jupytext | papermill from a subfolder, with a YAML override, into the reader's folder;
    nothing of the record changes."""
    import os
    import subprocess
    import sys

    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "jupytext").exists() or not (bin_dir / "papermill").exists():
        pytest.skip("the jupytext and papermill commands are not installed beside this Python")
    root = experiments.NOTEBOOKS_DIR.parent

    def record_status() -> str:
        return subprocess.run(
            ["git", "status", "--porcelain", "--", "results", "book/generated"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout

    before = record_status()
    out, mine = tmp_path / "04.ipynb", tmp_path / "my-results"
    command = (
        f"{bin_dir / 'jupytext'} --to ipynb -o - {root / 'notebooks' / '04_batch_size.py'} | "
        f"{bin_dir / 'papermill'} - {out} -k python3 -p preset smoke -p results_dir {mine} "
        f"-y 'sigma_ws: [0.25, 2.0]' --log-level ERROR"
    )
    proc = subprocess.run(
        command,
        shell=True,
        cwd=root / "book",
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    import xarray as xr

    with xr.open_dataset(mine / "smoke" / "04_batch_size.nc", engine="h5netcdf") as ds:
        assert list(ds["sigma_w"].values) == [0.25, 2.0]  # the override reached the sweep
    assert out.is_file() and record_status() == before
