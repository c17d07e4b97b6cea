"""The notebook runner (initmem.book.runner) on tiny temporary notebooks."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import pytest

from initmem.sweeps.spec import SweepSpec

pytest.importorskip("papermill")
pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")

from initmem.book import exploration, kernel
from initmem.book import runner as experiments
from initmem.book.parameters import ParameterError
from initmem.book.runner import run_notebooks
from initmem.cli import main
from initmem.cli.experiments import parse_parameter_value
from initmem.study.design import presets
from initmem.study.design.layout import PRESETS

GOOD = """\
# %% [markdown]
# # A tiny notebook

# %% tags=["parameters"]
scale = 2
items = [1, 2]
preset = "none"
results_dir = "none"

# %%
from pathlib import Path
from initmem.base import reads
total = scale * sum(items)
found = reads.note(Path(results_dir) / preset / "input.txt")  # what a loader of the package does
given = found.read_text() if found.is_file() else "none"
print(f"TOTAL={total} PRESET={preset} INPUT={given}")
"""

FAILING = """\
# %% tags=["parameters"]
x = 1

# %%
y = x + 1

# %%
raise RuntimeError("boom")
"""

NO_PARAMS = """\
# %%
print("hello")
"""


def _write(d, name, text):
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.py").write_text(text)


@pytest.fixture()
def layout(tmp_path):
    nbs = tmp_path / "notebooks"
    _write(nbs, "01_good", GOOD)
    return {
        "notebooks_dir": nbs,
        "out_dir": tmp_path / "generated",
        "results_dir": tmp_path / "res",
        "cwd": tmp_path,
        "progress": False,
    }


def _stdout(path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_parse_parameter_value():
    assert parse_parameter_value("[32, 512]") == [32, 512]
    assert parse_parameter_value("0.5") == 0.5
    assert parse_parameter_value("1e-3") == pytest.approx(1e-3)
    assert parse_parameter_value("true") is True
    assert parse_parameter_value('{"a": [1, 2]}') == {"a": [1, 2]}
    assert parse_parameter_value("[sgd, adam]") == ["sgd", "adam"]  # YAML fallback
    assert parse_parameter_value("sgd") == "sgd"
    assert parse_parameter_value("2024-01-01") == "2024-01-01"  # YAML date -> raw string
    assert parse_parameter_value("[unclosed") == "[unclosed"


def test_select_notebooks():
    names = ["01_optimizers", "04_batch_size", "T1_scale_invariance", "T2_x"]
    assert experiments.select_notebooks("01,04", names) == ["01_optimizers", "04_batch_size"]
    assert experiments.select_notebooks("T", names) == ["T1_scale_invariance", "T2_x"]
    assert experiments.select_notebooks(None, names) == names
    with pytest.raises(ValueError, match="available notebooks"):
        experiments.select_notebooks("99", names)


def test_results_dir_outside_the_working_directory_stays_absolute(layout, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "results"
    res = run_notebooks(preset="cpu", **{**layout, "results_dir": elsewhere})
    meta = nbformat.read(res[0].output, as_version=4).metadata["initmem"]
    assert meta["parameters"]["results_dir"] == str(elsewhere.resolve())


def test_unknown_preset():
    with pytest.raises(ValueError, match="smoke, cpu, gpu, paper"):
        presets.notebook_parameters("laptop", "01_optimizers")
    assert presets.BOOK_PRESET in PRESETS


def test_parameters_injected_and_digest_reuse(layout):
    res = run_notebooks(preset="cpu", parameters={"scale": 3, "items": [4, 5]}, **layout)
    assert [r.status for r in res] == ["executed"]
    out = layout["out_dir"] / "01_good.ipynb"
    assert res[0].output == out
    assert "TOTAL=27 PRESET=cpu INPUT=none" in _stdout(out)
    meta = nbformat.read(out, as_version=4).metadata["initmem"]
    # inside the working directory the results folder is injected relative to it, so that executed
    # notebooks and their digests do not depend on where the repository is checked out
    assert meta["parameters"]["results_dir"] == "res"
    assert meta["parameters"]["scale"] == 3 and meta["digest"] == res[0].digest

    # Same inputs: reused, not executed.
    again = run_notebooks(preset="cpu", parameters={"scale": 3, "items": [4, 5]}, **layout)
    assert [r.status for r in again] == ["reused"]
    # A file the page looked for appears, then changes: executed each time; another file is not its business.
    rdir = layout["results_dir"] / "cpu"
    rdir.mkdir(parents=True)
    (rdir / "input.txt").write_text("one")
    assert run_notebooks(preset="cpu", parameters={"scale": 3, "items": [4, 5]}, **layout)[0].status == "executed"
    assert "INPUT=one" in _stdout(out)
    (rdir / "other.nc").write_text("x")
    assert run_notebooks(preset="cpu", parameters={"scale": 3, "items": [4, 5]}, **layout)[0].status == "reused"
    (rdir / "input.txt").write_text("two")
    assert run_notebooks(preset="cpu", parameters={"scale": 3, "items": [4, 5]}, **layout)[0].status == "executed"
    # Other parameters, and force, execute too.
    assert run_notebooks(preset="cpu", parameters={"scale": 4, "items": [4, 5]}, **layout)[0].status == "executed"
    assert (
        run_notebooks(preset="cpu", parameters={"scale": 4, "items": [4, 5]}, force=True, **layout)[0].status
        == "executed"
    )


def test_preset_registry_parameters(layout, monkeypatch):
    monkeypatch.setitem(presets.NOTEBOOK_PARAMETERS["smoke"], "01_good", {"scale": 10, "items": (1, 1)})
    res = run_notebooks(preset="smoke", **layout)
    assert res[0].parameters["items"] == [1, 1]  # tuple -> JSON list
    assert "TOTAL=20 PRESET=smoke" in _stdout(res[0].output)
    # the user's value wins over the preset's
    res = run_notebooks(preset="smoke", parameters={"scale": 1}, **layout)
    assert "TOTAL=2 PRESET=smoke" in _stdout(res[0].output)


def test_unknown_parameter_is_an_error_before_running(layout):
    _write(layout["notebooks_dir"], "02_noparams", NO_PARAMS)
    with pytest.raises(ParameterError) as info:
        run_notebooks(parameters={"scael": 3}, **layout)
    msg = str(info.value)
    assert "scael" in msg and "01_good" in msg and "scale, items" in msg
    assert not (layout["out_dir"] / "01_good.ipynb").exists()  # nothing ran
    with pytest.raises(ParameterError, match="no parameters cell"):
        run_notebooks(only="02", parameters={"scale": 3}, **layout)
    with pytest.raises(ParameterError, match="set by the runner"):
        run_notebooks(only="01", parameters={"preset": "paper"}, **layout)
    with pytest.raises(ParameterError, match="not JSON-like"):
        run_notebooks(only="01", parameters={"scale": object()}, **layout)


def test_failing_notebook_reported_and_next_still_runs(layout, caplog):
    _write(layout["notebooks_dir"], "00_fails", FAILING)
    with caplog.at_level(logging.ERROR, logger="initmem.book.runner"):
        res = run_notebooks(**layout)
    assert [r.name for r in res] == ["00_fails", "01_good"]
    bad, good = res
    assert not bad.ok and bad.status == "failed"
    assert bad.cell_index == 2 and bad.error.startswith("RuntimeError: boom")
    assert bad.output is not None and bad.output.exists()
    assert not (layout["out_dir"] / "00_fails.ipynb").exists()
    assert "00_fails" in caplog.text and "cell 2" in caplog.text
    assert good.ok and good.status == "executed"
    # a failure is never reused
    assert run_notebooks(only="00", **layout)[0].status == "failed"


def test_cli_main(layout, capsys):
    argv = [
        "--preset",
        "smoke",
        "--only",
        "01",
        "-p",
        "items",
        "[3, 4]",
        "--root",
        str(layout["cwd"]),
        "--out-dir",
        str(layout["out_dir"]),
        "--results-dir",
        str(layout["results_dir"]),
        "--no-render",
    ]
    assert main(["experiments", *argv]) == 0
    assert "01_good: executed" in capsys.readouterr().out
    assert "TOTAL=14" in _stdout(layout["out_dir"] / "01_good.ipynb")
    assert main(["experiments", *argv[:4], "-p", "nope", "1"]) == 2
    assert json.loads(json.dumps(parse_parameter_value("[32, 512]"))) == [32, 512]


def test_executed_notebooks_collapse_their_parameter_cells():
    """Prose first: the defaults cell is removed and the injected values are collapsed (hide-input); other cells keep
    their tags."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("a = 1"),
        nbformat.v4.new_code_cell("a = 2"),
        nbformat.v4.new_code_cell("print(a)"),
        nbformat.v4.new_markdown_cell("text"),
    ]
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.cells[1].metadata["tags"] = ["injected-parameters"]
    nb.cells[2].metadata["tags"] = ["remove-input"]
    exploration.collapse_parameter_cells(nb)
    assert [c.metadata.get("tags") for c in nb.cells] == [
        ["parameters", "remove-cell"],
        ["injected-parameters", "hide-input"],
        ["remove-input"],
        None,
    ]


# --- run-level progress of `initmem experiments` ---------------------------------------------------------------
def test_planned_runs_are_the_files_the_sweep_writes(tmp_path):
    from initmem.study.costs import results
    from initmem.study.costs.reuse import notebook_plan
    from initmem.study.design import registry

    p = {**presets.notebook_parameters("smoke", "05_depth"), "sigma_ws": [0.5], "epochs": 1}  # 2 runs: 2 models
    plan = notebook_plan("05_depth", p, tmp_path, "smoke", record=tmp_path / "no-record")
    assert plan.runs_dir == tmp_path / "smoke" / "05_depth" / "runs"
    hashes = [config.hash() for config in plan.to_train]
    assert len(hashes) == SweepSpec.from_dict(registry.experiment_spec("05_depth", p)).n_runs == len(set(hashes))
    assert plan.cached == plan.reused == [] and plan.seconds > 0
    results.run_experiment(
        "05_depth", registry.experiment_spec("05_depth", p), preset="smoke", results_dir=tmp_path, progress=False
    )
    assert sorted(f.name.split(".")[0] for f in plan.runs_dir.glob("*.nc")) == sorted(hashes)
    again = notebook_plan("05_depth", p, tmp_path, "smoke", record=tmp_path / "no-record")
    assert sorted(again.cached) == sorted(hashes) and again.to_train == [] and again.seconds == 0
    assert "0 to train" in again.summary()
    assert notebook_plan("06_norms", {}, tmp_path, "smoke") is None  # reads 01's results, trains nothing


def test_run_progress_counts_run_files_as_they_appear(tmp_path):
    from initmem.book.progress import RunProgress

    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    (runs_dir / "aaaa.nc").write_bytes(b"")
    (runs_dir / "zzzz.nc").write_bytes(b"")  # not a run of this sweep
    with RunProgress("01_optimizers", runs_dir, ["aaaa", "bbbb", "cccc"], poll_s=0.05) as watch:
        assert watch.bar.total == 3 and watch.bar.n == 1  # what was there already
        (runs_dir / "bbbb.stacked2.nc").write_bytes(b"")
        (runs_dir / ".cccc.nc.host.1.tmp").write_bytes(b"")  # a run being written does not count
        for _ in range(100):
            if watch.bar.n == 2:
                break
            time.sleep(0.05)
        assert watch.bar.n == 2
    assert watch.update() == 2
    assert not RunProgress("06_norms", runs_dir, []).enabled


@pytest.mark.skipif(os.name == "nt", reason="IPC kernels need Unix sockets; Windows keeps TCP")
def test_kernels_keep_their_sockets_out_of_the_working_directory(layout, monkeypatch):
    """The notebooks' kernels listen on IPC sockets (no "running over TCP" warning on every start) in a private
    temporary folder, removed with the kernel: jupyter_client's default, ``kernel-ipc-<port>`` relative to the working
    directory, left socket files in the repository root whenever a kernel's clean-up was skipped."""
    made, mkdtemp = [], kernel.tempfile.mkdtemp
    monkeypatch.setattr(kernel.tempfile, "mkdtemp", lambda **kw: made.append(mkdtemp(**kw)) or made[-1])
    res = run_notebooks(**layout)
    assert res[0].status == "executed"
    assert "without encryption" not in _stdout(res[0].output)
    assert kernel.IPCKernelManager(kernel_name="python3").ip.startswith(made[-1] + os.sep)  # absolute, private
    Path(made.pop()).rmdir()
    folder = Path(made[0])
    assert folder.name.startswith("initmem-kernel-") and folder not in (Path.cwd(), layout["cwd"])
    assert not folder.exists()  # removed with the kernel
