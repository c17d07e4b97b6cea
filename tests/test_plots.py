"""initmem.study.plots on small synthetic sweep Datasets (no training): every function returns a Figure whose
caption names the preset, the model, the data size and the seeds."""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")  # tests only; the notebooks keep the inline backend

from matplotlib.figure import Figure  # noqa: E402

from initmem.study import analysis, plots  # noqa: E402

from sweep_fakes import fake_sweep  # noqa: E402  (tests/ is on sys.path under pytest)


@pytest.fixture(scope="module")
def optim_ds():
    return fake_sweep(
        {"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]},
        {"optimizer": ["sgd", "sgd_momentum", "adam", "adamw", "muon"], "lr": [0.02, 0.002, 0.005, 0.005, 0.02]},
    )


def _check(fig, *words):
    assert isinstance(fig, Figure)
    assert fig.axes
    text = fig._supxlabel.get_text() if fig._supxlabel is not None else ""
    for word in ("preset test", "ResNet-9", "width 8", "500 train images", *words):
        assert word in text.replace("\n", " "), (word, text)
    fig.canvas.draw()  # layout and rendering work
    matplotlib.pyplot.close(fig)


def test_caption_names_everything(optim_ds):
    text = plots.caption(optim_ds)
    assert text.startswith("preset test | ResNet-9, width 8 | 500 train images (16 px, synthetic data)")
    assert "b = 50" in text and "10 epochs" in text and "seeds 0/1" in text


def test_acc_vs_sigma(optim_ds):
    _check(plots.acc_vs_sigma(optim_ds, hue="optimizer"), "seeds 0/1")


def test_spread_bars(optim_ds):
    _check(plots.spread_bars(optim_ds, by="optimizer", paper={"sgd": 26.5, "muon": 4.0}))


def test_training_curves(optim_ds):
    _check(plots.training_curves(optim_ds, var="test_acc", col="optimizer"))
    _check(plots.norm_trajectories(optim_ds, x="T_adapt"))


def test_spread_vs_horizon():
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]})
    h = analysis.within_horizons(ds, [2, 6, 10])
    _check(plots.spread_vs_horizon(h, paper_epochs=5000))


def test_spread_heatmap():
    ds = fake_sweep({"lr": [0.01, 0.1], "weight_decay": [0.0, 1e-3, 1e-2], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    _check(plots.spread_heatmap(ds))


def test_spread_vs_batch_size():
    ds = fake_sweep({"batch_size": [16, 32, 64], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    fig = plots.spread_vs(ds, dim="batch_size")
    text = fig._supxlabel.get_text()
    assert "b = " not in text  # the swept field is not in the caption
    _check(fig)


def test_depth_panels():
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0]}, {"model": ["resnet9", "resnet20", "resnet56"]})
    fig = plots.depth_panels(ds)
    assert "ResNet-9/ResNet-20/ResNet-56" in fig._supxlabel.get_text()
    matplotlib.pyplot.close(fig)


def test_norm_scatter(optim_ds):
    _check(plots.norm_scatter(optim_ds))


def test_spread_vs_clocks(optim_ds):
    other = fake_sweep({"lr": [0.01, 0.1], "weight_decay": [0.0, 1e-3], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    results = {"01_optimizers": optim_ds, "03_lr_and_l2": other}
    table = analysis.clock_table(results)
    assert set(table["family"]) == {"SGD", "SGD+L2", "adaptive"}
    assert len(table) == 5 + 4
    fig = plots.spread_vs_clocks(table, source=results)
    assert "experiments 01, 03" in fig._supxlabel.get_text().replace("\n", " ")
    _check(fig)


def test_missing_dimension_is_a_clear_error(optim_ds):
    with pytest.raises(ValueError, match="expected dimension"):
        plots.spread_heatmap(optim_ds)
