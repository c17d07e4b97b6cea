"""Explorations stay out of the committed record; the repository root comes from the working directory;
sweeps are validated before anything runs; kernels start quietly."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("papermill")
nbformat = pytest.importorskip("nbformat")

from documented import EXPLORATION, EXPLORATION_REUSE  # tests/ is on sys.path under pytest
from initmem.base.paths import RootError, find_repo_root
from initmem.book import build as book
from initmem.book import exploration
from initmem.book import runner as experiments
from initmem.book.parameters import ParameterError
from initmem.book.runner import run_notebooks
from initmem.cli import main
from initmem.study.design import registry

SRC = Path(experiments.__file__).resolve().parents[2]  # src/
GOOD = """\
# %% [markdown]
# # A tiny notebook

# %% tags=["parameters"]
scale = 2
items = [1, 2]
preset = "none"
results_dir = "none"

# %%
print(f"TOTAL={scale * sum(items)} PRESET={preset} RESULTS={results_dir}")
"""


def _project(root: Path, name: str = "initmem") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(f'[build-system]\nrequires = []\n\n[project]\nname = "{name}"\n')
    return root


@pytest.fixture()
def repo(tmp_path):
    root = _project(tmp_path / "repo")
    (root / "notebooks").mkdir()
    (root / "notebooks" / "01_good.py").write_text(GOOD)
    return root


# --------------------------------------------------------------------------- the root


def test_root_is_found_from_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("INITMEM_ROOT", raising=False)
    root = _project(tmp_path / "checkout")
    _project(root / "vendor" / "other", name="other")  # another project inside is skipped
    deep = root / "vendor" / "other" / "a" / "b"
    deep.mkdir(parents=True)
    assert find_repo_root(start=deep) == root.resolve()
    assert find_repo_root(tmp_path, start=deep) == tmp_path.resolve()  # --root wins
    monkeypatch.setenv("INITMEM_ROOT", str(deep))
    assert find_repo_root(start=root) == deep.resolve()  # then $INITMEM_ROOT
    monkeypatch.delenv("INITMEM_ROOT")
    with pytest.raises(RootError, match="--root DIR or set INITMEM_ROOT"):
        find_repo_root(start=tmp_path)
    with pytest.raises(RootError, match="not a folder"):
        find_repo_root(tmp_path / "missing")


def test_the_installed_package_does_not_decide_the_root(tmp_path):
    """The package imported from this checkout's src/ works on the checkout that contains the working directory."""
    root = _project(tmp_path / "elsewhere")
    (root / "sub").mkdir()
    code = "from initmem.run.data import sources; from initmem.book import runner; print(runner.REPO_ROOT); print(sources._REPO_ROOT)"
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root / "sub", env=env, capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    assert out == [str(root.resolve())] * 2


def test_no_root_lookup_uses_the_package_location():
    offenders = [
        p.name for p in SRC.joinpath("initmem").glob("*.py") if "parents[2]" in p.read_text() and p.name != "records.py"
    ]
    assert offenders == []  # records.git_commit records the commit of the code that ran: the package's own


# --------------------------------------------------------------------------- exploration vs record


def test_overrides_go_to_their_own_folder_with_a_banner(repo):
    res = run_notebooks(preset="smoke", parameters={"scale": 3}, cwd=repo, progress=False)
    assert res[0].ok, str(res[0])
    tag = exploration.exploration_tag("smoke", {"scale": 3})
    folder = repo / "results" / "explore" / tag
    assert res[0].output == folder / "notebooks" / "01_good.ipynb"
    assert not (repo / "book").exists()  # the record is untouched
    nb = nbformat.read(res[0].output, as_version=4)
    assert nb.metadata["initmem"]["exploration"] is True
    assert nb.metadata["initmem"]["parameters"]["results_dir"] == f"results/explore/{tag}"
    banner = nb.cells[1]
    assert banner.cell_type == "markdown" and "Exploration, not the committed record" in banner.source
    assert "| **`scale`** (set by you) | **`2`** | **`3`** |" in banner.source and "`items`" not in banner.source
    assert "**You set** **`scale` = `3`**" in banner.source
    assert "Reproduce this page: `initmem experiments --preset smoke --only 01 -p scale 3`" in banner.source
    assert nb.cells[0].source.startswith("# A tiny notebook")  # the title stays the page title
    # the same exploration is reused; another one gets another folder
    assert run_notebooks(preset="smoke", parameters={"scale": 3}, cwd=repo, progress=False)[0].status == "reused"
    assert exploration.exploration_tag("smoke", {"scale": 4}) != tag


def test_another_preset_is_an_exploration_and_the_book_preset_is_the_record(repo):
    res = run_notebooks(preset="cpu", cwd=repo, progress=False)
    assert res[0].output == repo / "results" / "explore" / "cpu-defaults" / "notebooks" / "01_good.ipynb"
    assert '| `preset` | `"smoke"` | `"cpu"` |' in nbformat.read(res[0].output, as_version=4).cells[1].source
    res = run_notebooks(preset="smoke", cwd=repo, progress=False)
    assert res[0].output == repo / "book" / "generated" / "01_good.ipynb"
    nb = nbformat.read(res[0].output, as_version=4)
    assert not any("Exploration" in c.source for c in nb.cells)
    assert nb.metadata["initmem"]["exploration"] is False


def test_the_banner_lists_what_the_user_set_first_and_highlighted(repo):
    """At another preset with -p, the parameter set by hand comes first, in bold; the preset, which differs too, after
    it, in plain text; the re-run command has both."""
    res = run_notebooks(preset="cpu", parameters={"items": [5]}, cwd=repo, progress=False)
    source = nbformat.read(res[0].output, as_version=4).cells[1].source
    rows = [line for line in source.splitlines() if line.startswith("| ") and "parameter" not in line]
    assert rows == ["| **`items`** (set by you) | **`[1, 2]`** | **`[5]`** |", '| `preset` | `"smoke"` | `"cpu"` |']
    assert "`initmem experiments --preset cpu --only 01 -p items '[5]'`" in source


def test_an_exploration_may_not_write_into_the_record(repo):
    for option in ({"out_dir": repo / "book" / "generated"}, {"results_dir": repo / "results"}):
        with pytest.raises(ParameterError, match="committed record"):
            run_notebooks(preset="smoke", parameters={"scale": 3}, cwd=repo, progress=False, **option)
    assert not (repo / "book").exists()


def test_cli_prints_where_an_exploration_went_and_how_to_render_it(repo, capsys):
    assert main(["experiments", "--root", str(repo), "-p", "scale", "5", "--no-render"]) == 0
    out = capsys.readouterr().out
    assert "initmem book --from" in out and "results/explore/smoke-" in out


def test_book_from_an_exploration_builds_a_small_site_of_its_pages(repo, monkeypatch):
    """`initmem book --from FOLDER` writes a site of the exploration's pages alone into _build/explore/<tag>/: the
    explored chapter, the book's pages that paste from it (with the glued outputs of the committed pages they paste
    from beside it), a landing page and banner linking back to the committed build, and no wheel; the record's files
    are not touched (jupyter-book itself is faked)."""
    (repo / "_config.yml").write_text("title: t\nsphinx:\n  config: {}\n")
    (repo / "_toc.yml").write_text("format: jb-book\nroot: book/intro\n")
    generated = repo / "book" / "generated"
    generated.mkdir(parents=True)
    (repo / "book" / "intro.md").write_text("# Intro\n\n```{glue} k\n:doc: generated/01_good.ipynb\n```\n")
    (repo / "book" / "reproduction.md").write_text("```{glue} k\n:doc: generated/02_other.ipynb\n```\n")
    (repo / "book" / "both.md").write_text(
        ":::{glue} a\n:doc: generated/01_good\n:::\n:::{glue} b\n:doc: generated/02_other.ipynb\n:::\n"
    )
    (repo / "book" / "references.bib").write_text("")
    glued = nbformat.v4.new_output("display_data", data={"text/plain": "'42'"}, metadata={"scrapbook": {"name": "b"}})
    other = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("glue('b', 42)", outputs=[glued])])
    nbformat.write(other, generated / "02_other.ipynb")
    (repo / "results" / "smoke").mkdir(parents=True)
    (repo / "results" / "smoke" / "02_other.nc").write_text("the record's results")
    (repo / "notebooks" / "02_other.py").write_text(GOOD)
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    res = run_notebooks(preset="smoke", only="01", parameters={"scale": 7}, cwd=repo, progress=False)
    calls = []

    def fake_build(root, **kwargs):
        calls.append((root, kwargs["strict"]))
        return root / "_build" / "html" / "index.html"

    monkeypatch.setattr(book, "_jupyter_book_build", fake_build)
    monkeypatch.setattr(book, "ensure_mathjax", lambda static: static)
    folder = res[0].output.parent.parent
    index = book.build_book(root=repo, from_dir=folder)
    site = repo / "_build" / "explore" / folder.name
    assert calls == [(site, False)] and index == site / "_build" / "html" / "index.html"
    toc = yaml.safe_load((site / "_toc.yml").read_text())
    assert toc == {
        "format": "jb-book",
        "root": "index",
        "chapters": [{"file": "book/generated/01_good"}, {"file": "book/both"}, {"file": "book/intro"}],
    }
    assert sorted(p.name for p in (site / "book").glob("*.md")) == ["both.md", "intro.md"]  # not reproduction.md
    assert sorted(p.name for p in (site / "book" / "generated").iterdir()) == ["01_good.ipynb"]
    banner = nbformat.read(site / "book" / "generated" / "01_good.ipynb", as_version=4).cells[1].source
    assert "Exploration" in banner and banner.endswith("```")
    assert 'href="../../../../../../html/book/generated/01_good.html"' in banner  # its committed page
    landing = (site / "index.md").read_text()
    assert 'href="../../../../html/index.html">the committed book</a>' in landing and "It is not built yet" in landing
    config = yaml.safe_load((site / "_config.yml").read_text())["sphinx"]["config"]
    assert config["initmem_wheel"] is False and config["initmem_record_html"] == "../../../../html"
    glue = json.loads((site / "_build" / "jupyter_execute" / "book" / "generated" / "02_other.glue.json").read_text())
    assert glue["b"]["data"] == {"text/plain": "'42'"}  # what both.md pastes from the page the site lacks
    # the record's results beside its pages, which link to them (initmem.book.page.source_note); no exploration's results
    assert (site / "results" / "smoke" / "02_other.nc").read_text() == "the record's results"
    assert not (site / "results" / "explore").exists()
    assert all(p.read_bytes() == data for p, data in before.items())
    with pytest.raises(ValueError, match="--from: .* holds no executed notebook"):
        book.build_book(root=repo, from_dir=repo / "book")


def test_an_exploration_in_a_folder_of_its_own_keeps_its_site_there(repo, tmp_path, monkeypatch):
    """An exploration written to folders the user named (--out-dir, --results-dir) is rendered in the exploration's
    folder, ``_site/``: nothing is written under the repository."""
    (repo / "_config.yml").write_text("title: t\n")
    out = tmp_path / "mine" / "notebooks"
    res = run_notebooks(
        preset="smoke", parameters={"scale": 7}, cwd=repo, progress=False, out_dir=out, results_dir=tmp_path / "mine"
    )
    monkeypatch.setattr(book, "_jupyter_book_build", lambda root, **kwargs: root / "_build" / "html" / "index.html")
    monkeypatch.setattr(book, "ensure_mathjax", lambda static: static)
    index = book.build_book(root=repo, from_dir=res[0].output.parent)
    site = tmp_path / "mine" / "_site"  # beside the notebooks/ folder, as in an exploration folder
    assert index == site / "_build" / "html" / "index.html"
    assert (site / "book" / "generated" / "01_good.ipynb").is_file()
    assert not (repo / "_build").exists() and not (repo / "results").exists()


@pytest.mark.slow
def test_an_exploration_renders_its_page_alone_linking_back_to_the_committed_book(tmp_path, capsys):
    """The Done-means exploration, `initmem experiments --preset cpu --only 04 -p batch_sizes "[64, 256]"` (it reuses
    the record's runs: nothing trains), executed afresh into a temporary folder: its page is rendered in a site of its
    own (the chapter alone, no wheel) whose banner links the chapter's committed page and whose links to other pages
    lead into the committed build; the command ends with the time of each phase."""
    import urllib.parse

    root = find_repo_root(start=SRC)
    if not (root / "results" / "cpu" / "04_batch_size" / "runs").is_dir():
        pytest.skip("no committed record of 04 at the cpu preset")
    folders = ["--results-dir", str(tmp_path), "--out-dir", str(tmp_path / "notebooks")]
    assert main([*EXPLORATION, "--root", str(root), "--force", *folders]) == 0
    out = capsys.readouterr().out
    assert EXPLORATION_REUSE in out
    assert re.search(r"^phases: plan [\d.]+ s, notebook [\d.]+ s, render [\d.]+ s \([\d.]+ s in all\)$", out, re.M)
    line = next(line for line in out.splitlines() if line.startswith("04_batch_size: file://"))
    page = Path(urllib.parse.unquote(urllib.parse.urlsplit(line.split(": ", 1)[1]).path))
    site = tmp_path / "_site"
    assert page == site / "_build" / "html" / "book" / "generated" / "04_batch_size.html"
    assert [entry["file"] for entry in yaml.safe_load((site / "_toc.yml").read_text())["chapters"]] == [
        "book/generated/04_batch_size"
    ]
    assert not (site / "_build" / "html" / "_dist").exists()  # no wheel
    text = page.read_text(encoding="utf-8")
    assert "Exploration, not the committed record" in text
    committed = (root / "_build" / "html").resolve()
    record_link = re.search(r'class="initmem-record-link" href="([^"]+)"', text).group(1)
    assert (page.parent / record_link).resolve() == committed / "book" / "generated" / "04_batch_size.html"
    hrefs = set(re.findall(r'(?:href|src)="([^"#?:]+)', text))
    outside = {h for h in hrefs if not (page.parent / h).resolve().is_relative_to(site)}
    assert outside and all((page.parent / h).resolve().is_relative_to(committed) for h in outside), outside


# --------------------------------------------------------------------------- early validation


def test_every_grid_value_is_validated_before_anything_runs(repo, monkeypatch):
    def spec(p):
        return {"base": {"data": "synthetic", "epochs": 1}, "grid": {"sigma_w": p["items"]}}

    monkeypatch.setitem(registry.EXPERIMENT_SPECS, "01_good", spec)
    with pytest.raises(ParameterError) as info:
        run_notebooks(preset="smoke", parameters={"items": [0.5, -1]}, cwd=repo, progress=False)
    message = str(info.value)
    assert "notebook '01_good', parameter 'items'" in message and "sigma_w: must be > 0" in message
    assert len(message.splitlines()) == 1
    assert not (repo / "results").exists() and not (repo / "book").exists()


def test_cli_names_the_parameter_of_a_real_notebook_in_one_line(capsys):
    root = find_repo_root(start=SRC)
    assert main(["experiments", "--root", str(root), "--only", "01", "-p", "sigma_ws", "[0.5, -1]"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("initmem experiments: error: notebook '01_optimizers', parameter 'sigma_ws'")
    assert "sigma_w: must be > 0, got -1.0" in err


def test_batch_larger_than_the_training_set_is_caught_before_running(capsys):
    root = find_repo_root(start=SRC)
    assert main(["experiments", "--root", str(root), "--only", "04", "-p", "batch_sizes", "[32, 100000]"]) == 2
    err = capsys.readouterr().err
    assert "parameter 'batch_sizes'" in err and "exceed train_size" in err


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("batch_sizes", '"abc"', "batch_sizes: must be a list of positive integers, e.g. [32, 512]; got 'abc'"),
        ("batch_sizes", "[32, 0.5]", "batch_sizes: must be a list of positive integers, e.g. [32, 512]; got [32, 0.5]"),
        ("steps", "[10]", "steps: must be a positive integer; got [10]"),
    ],
    ids=["a string", "a float among ints", "a list for a number"],
)
def test_a_parameter_of_the_wrong_type_is_one_line_naming_it_and_what_it_takes(
    capsys, monkeypatch, name, value, expected
):
    def refuse(*args, **kwargs):
        raise AssertionError("a notebook ran although a parameter was invalid")

    monkeypatch.setattr(experiments, "_execute", refuse)
    root = find_repo_root(start=SRC)
    assert main(["experiments", "--root", str(root), "--preset", "smoke", "--only", "04", "-p", name, value]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"initmem experiments: error: notebook '04_batch_size', parameter '{name}': {expected}"


# --------------------------------------------------------------------------- quiet kernels


def test_kernels_do_not_warn_about_tcp(repo, capfd):
    res = run_notebooks(preset="smoke", cwd=repo, progress=False, force=True)
    assert res[0].ok, str(res[0])
    captured = capfd.readouterr()
    assert "without encryption" not in captured.err + captured.out
    assert not list(repo.glob("kernel-*"))  # IPC sockets live next to the connection file, not in the cwd
    assert "TOTAL=6" in json.dumps(nbformat.read(res[0].output, as_version=4).cells[-1].outputs)


# --------------------------------------------------------------------------- zipped lists follow what the user set


def test_optimizers_alone_take_each_optimizers_own_settings_from_the_preset(monkeypatch):
    """`-p optimizers "[adam, sgd]"` at smoke: the zipped lrs, weight_decays and aux_lrs are each optimizer's entry of
    the preset's lists (in the order given), and the banner lists them as differing from the record."""
    executed = []

    def capture(plan, *args, **kwargs):
        executed.append(plan)
        return experiments.NotebookResult(plan.name, "executed", None, plan.final, plan.digest)

    monkeypatch.setattr(experiments, "_execute", capture)
    root = find_repo_root(start=SRC)
    run_notebooks(preset="smoke", only="01", parameters={"optimizers": ["adam", "sgd"]}, cwd=root, progress=False)
    (plan,) = executed
    assert plan.final["optimizers"] == ["adam", "sgd"]
    assert (plan.final["lrs"], plan.final["weight_decays"], plan.final["aux_lrs"]) == (
        [0.005, 0.05],
        [0.0, 0.0],
        [0.001, 0.001],
    )
    banner = plan.nb.cells[1].source
    assert "| `lrs` | `[0.02, 0.002, 0.008, 0.008, 0.02]` | `[0.005, 0.05]` |" in banner


def test_a_list_the_user_sets_beside_it_is_kept_and_an_unknown_entry_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr(experiments, "_execute", lambda *a, **k: pytest.fail("nothing may execute"))
    final = experiments.final_parameters(
        "01_optimizers",
        ["optimizers", "lrs", "weight_decays", "aux_lrs"],
        "smoke",
        {},
        {"optimizers": ["sgd", "adam"], "lrs": [0.1, 0.2]},
        Path("results"),
    )
    assert final["lrs"] == [0.1, 0.2] and final["aux_lrs"] == [0.001, 0.001]
    root = find_repo_root(start=SRC)
    # the cpu preset trains no Lion (the smoke preset does), so nothing there says Lion's learning rate
    line = ["experiments", "--root", str(root), "--preset", "cpu", "--only", "01", "-p", "optimizers", "[sgd, lion]"]
    assert main(line) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "initmem experiments: error: notebook '01_optimizers', parameter 'optimizers': optimizers: 'lion' has no "
        "entry in lrs at preset 'cpu' (it has sgd, sgd_momentum, adam, adamw, muon); give lrs too, one entry per "
        "entry of optimizers"
    )


def test_a_notebook_given_optimizers_alone_resolves_the_other_lists():
    """The same rule where a reader sets `optimizers = ["muon"]` in the notebook's parameters cell (09 takes sgd's
    decay and aux lr from 01's lists, which 09's lack)."""
    from initmem.study.design.presets import resolve_parameters

    p = resolve_parameters("01_optimizers", "cpu", {"optimizers": ["muon"], "lrs": None})
    assert (p["lrs"], p["weight_decays"], p["aux_lrs"]) == ([0.02], [0.0], [0.008])
    p = resolve_parameters("09_adaptive_lr", "smoke", {"optimizers": ["sgd", "adamw"]})
    assert (p["weight_decays"], p["aux_lrs"], p["lrs"]) == ([0.0, 0.05], [0.001, 0.001], [0.005, 0.02])


@pytest.mark.slow
def test_optimizers_alone_run_at_smoke(tmp_path, capsys):
    """`initmem experiments --preset smoke --only 01 -p optimizers "[sgd, adam]"` executes (4 synthetic runs)."""
    root = find_repo_root(start=SRC)
    argv = ["--root", str(root), "--only", "01", "-p", "optimizers", "[sgd, adam]", "--no-render"]
    argv += ["--results-dir", str(tmp_path), "--out-dir", str(tmp_path / "notebooks")]
    assert main(["experiments", *argv]) == 0, capsys.readouterr()
    nb = nbformat.read(tmp_path / "notebooks" / "01_optimizers.ipynb", as_version=4)
    assert nb.metadata["initmem"]["parameters"]["lrs"] == [0.05, 0.005]


# --------------------------------------------------------------------------- an unchanged exploration executes nothing

WRITES_ITS_RESULTS = """\
# %% tags=["parameters"]
scale = 2
preset = "none"
results_dir = "none"

# %%
import os
from pathlib import Path

from initmem.base.reads import note

out = note(Path(results_dir) / preset / "01_writes.nc")  # what the project's loaders record of a file they read
out.parent.mkdir(parents=True, exist_ok=True)
if not out.exists():  # like a sweep: written when missing, its bytes new each time
    out.write_bytes(os.urandom(16))
print(scale)
"""


def test_an_unchanged_exploration_that_wrote_its_results_executes_nothing_again(repo):
    """The first execution writes the results the page reads; the copy's digest covers them as they were left, so
    the same command again reuses the page; a changed result file executes it again."""
    (repo / "notebooks" / "01_good.py").unlink()
    (repo / "notebooks" / "01_writes.py").write_text(WRITES_ITS_RESULTS)
    first = run_notebooks(preset="smoke", parameters={"scale": 3}, cwd=repo, progress=False)[0]
    assert first.status == "executed", str(first)
    again = run_notebooks(preset="smoke", parameters={"scale": 3}, cwd=repo, progress=False)[0]
    assert again.status == "reused" and again.digest == first.digest
    (first.output.parent.parent / "smoke" / "01_writes.nc").write_bytes(b"other results")
    assert run_notebooks(preset="smoke", parameters={"scale": 3}, cwd=repo, progress=False)[0].status == "executed"


def test_the_banner_of_an_exploration_at_another_preset_says_the_record_is_not_drawn():
    smoke = exploration.exploration_banner("01_optimizers", {}, "results/explore/x", {"seeds": [0]}, "smoke")
    assert "The committed record is at preset `cpu`, another scale than `smoke`" in smoke
    assert "does not draw or tabulate it" in smoke
    cpu = exploration.exploration_banner("01_optimizers", {}, "results/explore/x", {"seeds": [0]}, "cpu")
    assert "another scale" not in cpu


# --------------------------------------------------------------------------- --fresh: a replication check

#: A chapter that writes its combined results (the record's numbers: its runs replicate them) and says whether its
#: kernel was asked for fresh runs.
FRESH_BODY = """\
import os
from pathlib import Path

import numpy as np
import xarray as xr

from initmem.sweeps.store import write_run

acc = 40 + 10 * np.arange(12.0).reshape(2, 2, 3) ** 0.5
coords = {"optimizer": ["sgd", "adam"], "sigma_w": [0.5, 2.0], "seed": [0, 1, 2]}
ds = xr.Dataset({"selected_test_acc": (("optimizer", "sigma_w", "seed"), acc)}, coords=coords)
write_run(ds, Path(results_dir) / preset / "01_tiny.nc")
print("FRESH=" + os.environ.get("INITMEM_FRESH", "unset"))
"""
FRESH_NOTEBOOK = '# %% tags=["parameters"]\npreset = "none"\nresults_dir = "none"\n\n# %%\n' + FRESH_BODY


def test_fresh_retrains_into_its_own_folder_and_prints_how_it_agrees_with_the_record(repo, capsys, monkeypatch):
    """`initmem experiments --fresh` at the record's preset: an exploration in results/explore/<tag>-fresh whose
    notebook sees no record to reuse (the kernel has INITMEM_FRESH=1), then per configuration the record's and the
    fresh spread side by side, and how many runs are identical."""
    (repo / "notebooks" / "01_good.py").unlink()
    (repo / "notebooks" / "01_tiny.py").write_text(FRESH_NOTEBOOK)
    monkeypatch.setitem(registry.EXPERIMENT_SPECS, "01_tiny", lambda p: {"base": {"data": "synthetic", "epochs": 1}})
    exec(FRESH_BODY, {"preset": "smoke", "results_dir": str(repo / "results")})  # the committed record
    assert main(["experiments", "--root", str(repo), "--fresh", "--no-render"]) == 0
    out = capsys.readouterr().out
    folder = repo / "results" / "explore" / "smoke-defaults-fresh"
    assert (folder / "smoke" / "01_tiny.nc").is_file()
    nb = nbformat.read(folder / "notebooks" / "01_tiny.ipynb", as_version=4)
    assert "FRESH=1" in json.dumps(nb.cells[-1].outputs)
    assert "**Fresh runs**" in nb.cells[0].source and "--fresh" in nb.cells[0].source
    lines = out[out.index("01_tiny: fresh runs against the committed record") :].splitlines()
    assert lines[1].startswith("  optimizer sgd: record ") and lines[1].endswith(": agree (the intervals overlap)")
    runs = lines[lines.index("each run's selected_test_acc, committed and fresh:") + 1 :]
    assert sum(line.endswith(" identical") for line in runs) == 12  # each run, side by side
    assert "01_tiny: no verdict of its own to replicate (12 of 12 runs both have identical, bit for bit)" in lines


def test_fresh_runs_reuse_no_run_of_the_record(tmp_path, monkeypatch):
    from initmem.study.costs.reuse import record_stores

    (tmp_path / "results" / "smoke" / "01_tiny" / "runs").mkdir(parents=True)
    assert record_stores(tmp_path / "elsewhere", "smoke", tmp_path / "results") != []
    monkeypatch.setenv("INITMEM_FRESH", "1")
    assert record_stores(tmp_path / "elsewhere", "smoke", tmp_path / "results") == []
    assert exploration.is_exploration("01_optimizers", "cpu", {})  # even at the record's preset and parameters
    assert exploration.exploration_tag("cpu", {}) == "cpu-defaults-fresh"


def test_the_replication_table_shows_each_run_and_the_pages_numbers_side_by_side():
    """Against the committed smoke record of chapter 10: a run changed in the fresh sweep shows by how much, a run of
    one sweep only says so, the verdict rows stand side by side, and the closing line says whether they replicate."""
    import xarray as xr

    from initmem.study.verdicts.replication import replication_sentence, run_table, verdict_table

    path = find_repo_root(start=SRC) / "results" / "smoke" / "10_phase_diagram.nc"
    if not path.is_file():
        pytest.skip(f"{path} is not committed here")
    record = xr.load_dataset(path)
    fresh = record.copy(deep=True)
    fresh["selected_test_acc"][0, 0, 0, 0] += 1.5
    fresh["run_hash"][0, 0, 1, 0] = ""  # a run the fresh sweep lacks
    runs = run_table(fresh, record)
    assert list(runs["same"].iloc[:2]) == ["fresh - committed = +1.5", "only committed"]
    assert (runs["same"].iloc[2:] == "identical").all()
    verdicts = verdict_table("10_phase_diagram", fresh, record)
    assert list(verdicts.columns) == ["committed effect", "committed verdict", "fresh effect", "fresh verdict"]
    assert len(verdicts) >= 1 and (verdicts["committed verdict"] == verdicts["fresh verdict"]).all()
    assert replication_sentence("10_phase_diagram", verdicts, runs) == (
        f"10_phase_diagram: the chapter's verdicts replicate: {len(verdicts)} of {len(verdicts)} the same "
        f"({len(runs) - 2} of {len(runs) - 1} runs both have identical, bit for bit; 1 run(s) in one sweep only)"
    )
    other = verdicts.assign(**{"fresh verdict": "inconclusive"})
    assert replication_sentence("10", other, runs).startswith(
        f"10: the chapter's verdicts do NOT replicate: {', '.join(verdicts.index)} differ ("
    )
