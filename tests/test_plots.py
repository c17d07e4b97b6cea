"""initmem.study.presentation.plots on small synthetic sweep Datasets (no training): every function returns a Figure whose
caption names the preset, the model, the data size and the seeds."""

from __future__ import annotations

import re

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")  # tests only; the notebooks keep the inline backend

from matplotlib.figure import Figure  # noqa: E402

from initmem.study.presentation.plots import captions, figures, spreads, style  # noqa: E402
from initmem.study.statistics import analysis  # noqa: E402
from sweep_fakes import fake_sweep  # noqa: E402  (tests/ is on sys.path under pytest)


@pytest.fixture(scope="module", autouse=True)
def _figures_open_for_the_module():
    """The module's figure fixtures keep their figures open on purpose (many tests inspect one figure): no warning
    about open figures here, and all of them closed when the module ends."""
    with matplotlib.rc_context({"figure.max_open_warning": 0}):
        yield
    matplotlib.pyplot.close("all")


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
    text = captions.caption(optim_ds)
    assert text.startswith("preset test | ResNet-9, width 8 | 500 train images (16 px, synthetic data)")
    assert "b = 50" in text and "10 epochs" in text and "seeds 0/1" in text


def test_acc_vs_sigma(optim_ds):
    _check(figures.acc_vs_sigma(optim_ds, hue="optimizer"), "seeds 0/1")


def test_spread_bars(optim_ds):
    _check(figures.spread_bars(optim_ds, by="optimizer", paper={"sgd": 26.5, "muon": 4.0}))


def test_training_curves(optim_ds):
    _check(figures.training_curves(optim_ds, var="test_acc", col="optimizer"))
    _check(figures.norm_trajectories(optim_ds, x="T_adapt"))


def test_spread_vs_horizon():
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]})
    h = analysis.within_horizons(ds, [2, 6, 10])
    _check(spreads.spread_vs_horizon(h, paper_epochs=5000))


def test_spread_heatmap():
    ds = fake_sweep({"lr": [0.01, 0.1], "weight_decay": [0.0, 1e-3, 1e-2], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    _check(spreads.spread_heatmap(ds))


def test_spread_vs_batch_size():
    ds = fake_sweep({"batch_size": [16, 32, 64], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    fig = spreads.spread_vs(ds, dim="batch_size")
    text = fig._supxlabel.get_text()
    assert "b = " not in text  # the swept field is not in the caption
    _check(fig)


def test_depth_panels():
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0]}, {"model": ["resnet9", "resnet20", "resnet56"]})
    fig = figures.depth_panels(ds)
    assert "ResNet-9/ResNet-20/ResNet-56" in fig._supxlabel.get_text()
    matplotlib.pyplot.close(fig)


def test_norm_scatter(optim_ds):
    _check(figures.norm_scatter(optim_ds))


def test_spread_vs_clocks(optim_ds):
    other = fake_sweep({"lr": [0.01, 0.1], "weight_decay": [0.0, 1e-3], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    results = {"01_optimizers": optim_ds, "03_lr_and_l2": other}
    table = analysis.clock_table(results)
    assert set(table["family"]) == {"SGD", "SGD+L2", "adaptive"}
    assert len(table) == 5 + 4
    fig = spreads.spread_vs_clocks(table, source=results)
    assert "experiments 01, 03" in fig._supxlabel.get_text().replace("\n", " ")
    _check(fig)


def test_missing_dimension_is_a_clear_error(optim_ds):
    with pytest.raises(ValueError, match="expected dimension"):
        spreads.spread_heatmap(optim_ds)


# --------------------------------------------------------------------------- legible in the book
# Every figure function, drawn on small fakes with a given number of seeds.
def _figures(seeds: int) -> dict:
    s = list(range(seeds))
    opt = fake_sweep(
        {"sigma_w": [0.25, 1.0, 2.5], "seed": s},
        {"optimizer": ["sgd", "sgd_momentum", "adam", "adamw", "muon"], "lr": [0.02, 0.002, 0.005, 0.005, 0.02]},
    )
    lr = fake_sweep({"lr": [0.01, 0.1], "weight_decay": [0.0, 1e-3], "sigma_w": [0.25, 2.5], "seed": s})
    bs = fake_sweep({"batch_size": [16, 32, 64], "sigma_w": [0.25, 2.5], "seed": s})
    depth = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": s}, {"model": ["resnet9", "resnet20", "resnet56"]})
    long = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": s})
    logit = fake_sweep({"logit_scale": [0.125, 1.0], "sigma_w": [0.25, 2.5], "seed": s})
    return {
        "acc_vs_sigma": lambda: figures.acc_vs_sigma(opt),
        "acc_vs_sigma_batch": lambda: figures.acc_vs_sigma(bs, hue="batch_size"),
        "acc_vs_sigma_record": lambda: figures.acc_vs_sigma(bs.isel(batch_size=[0, 2]), hue="batch_size", record=bs),
        "spread_heatmap_record": lambda: spreads.spread_heatmap(lr, record=lr),
        "spread_bars": lambda: figures.spread_bars(opt, paper={"sgd": 26.5, "muon": 4.0}),
        "training_curves": lambda: figures.training_curves(opt),
        "training_curves_one": lambda: figures.training_curves(long, col=None),
        "training_curves_logit": lambda: figures.training_curves(
            logit, var="train_acc", col="logit_scale", interpolation=True
        ),
        "norm_trajectories": lambda: figures.norm_trajectories(opt, x="T_adapt"),
        "spread_vs_horizon": lambda: spreads.spread_vs_horizon(analysis.within_horizons(long, [2, 6, 10]), 5000),
        "spread_heatmap": lambda: spreads.spread_heatmap(lr),
        "spread_vs": lambda: spreads.spread_vs(bs),
        "depth_panels": lambda: figures.depth_panels(depth),
        "norm_scatter": lambda: figures.norm_scatter(opt),
        "spread_vs_clocks": lambda: spreads.spread_vs_clocks(
            analysis.clock_table({"01_optimizers": opt, "03_lr_and_l2": lr}), source={"01_optimizers": opt}
        ),
    }


FIGURES = sorted(_figures(1))


@pytest.fixture(scope="module", params=[1, 3], ids=lambda n: f"{n}seeds")
def drawn(request):
    """name -> (figure, the texts it draws): every figure function, drawn as the book shows it."""
    out = {}
    for name, make in _figures(request.param).items():
        fig = make()
        out[name] = fig, _drawn_texts(fig)
    yield out
    for fig, _ in out.values():
        matplotlib.pyplot.close(fig)


def _drawn_texts(fig) -> list:
    """The Text artists ``fig`` draws (visible, not empty, not in a hidden axis), recorded while drawing it."""
    from matplotlib.text import Text

    drawn, draw = [], Text.draw

    def record(self, renderer):
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        return draw(self, renderer)

    Text.draw = record
    try:
        fig.canvas.draw()
    finally:
        Text.draw = draw
    return drawn


def _shown_scale(fig) -> float:
    """How much the book scales ``fig`` down: saved as the inline backend saves it (tight, 0.1 in padding) and shown
    at 96 px per inch, at most :data:`style.BOOK_COLUMN_PX` wide."""
    width = fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * 0.1
    return min(1.0, style.BOOK_COLUMN_PX / (width * style.PX_PER_INCH))


def _legends(fig) -> list:
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]


def _data_axes(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison]


@pytest.mark.parametrize("name", FIGURES)
def test_text_is_legible_in_the_book_column(drawn, name):
    """Every text a figure draws is at least MIN_TEXT_PX tall once the figure is shown in the book's column."""
    fig, texts = drawn[name]
    scale = _shown_scale(fig)
    small = {
        t.get_text(): round(t.get_fontsize() * style.PX_PER_INCH / 72 * scale, 1)
        for t in texts
        if t.get_fontsize() * style.PX_PER_INCH / 72 * scale < style.MIN_TEXT_PX
    }
    assert texts and not small, f"{name}: text below {style.MIN_TEXT_PX} px in the book: {small}"


@pytest.mark.parametrize("name", FIGURES)
def test_caption_and_ticks_are_large_enough_in_the_book_column(drawn, name):
    """Shown in the book's column, the caption line is at least MIN_CAPTION_PT and every tick label MIN_TICK_PT."""
    fig, texts = drawn[name]
    scale = _shown_scale(fig)
    caption = fig._supxlabel
    assert caption is not None and caption.get_fontsize() * scale >= style.MIN_CAPTION_PT, (
        name,
        caption.get_fontsize(),
    )
    ticks = [t for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels() if t in texts]
    small = sorted({round(t.get_fontsize() * scale, 1) for t in ticks if t.get_fontsize() * scale < style.MIN_TICK_PT})
    assert ticks and not small, f"{name}: tick labels of {small} pt in the book"


@pytest.mark.parametrize("name", FIGURES)
def test_style_is_applied_to_every_element(drawn, name):
    """Legends (frame off, STYLE's size) and tick labels follow style.STYLE, though drawn outside its rc_context."""
    fig, texts = drawn[name]
    for legend in _legends(fig):
        assert not legend.get_frame_on(), name
        assert {t.get_fontsize() for t in legend.get_texts()} == {style.STYLE["legend.fontsize"]}, name
    ticks = {t.get_fontsize() for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels() if t in texts}
    assert ticks == {style.STYLE["xtick.labelsize"]}, (name, ticks)


@pytest.mark.parametrize("name", FIGURES)
def test_legends_lie_outside_the_data(drawn, name):
    fig, _ = drawn[name]
    renderer = fig.canvas.get_renderer()
    for legend in _legends(fig):
        box = legend.get_window_extent(renderer)
        covered = [ax.get_title() or ax.get_ylabel() for ax in _data_axes(fig) if box.overlaps(ax.bbox)]
        assert not covered, f"{name}: a legend covers the panel(s) {covered}"


#: A raw variable or field name: a word with an underscore outside $math$ (sigma_w, tau_interp, test_acc, T_SGD).
RAW_NAME = re.compile(r"\b[A-Za-z]\w*_\w+\b")


def _words(text: str) -> str:
    return re.sub(r"\$[^$]*\$", " ", text)


@pytest.mark.parametrize("name", FIGURES)
def test_labels_are_words_not_variable_names(drawn, name):
    fig, texts = drawn[name]
    raw = sorted({t.get_text() for t in texts if RAW_NAME.search(_words(t.get_text()))})
    assert not raw, f"{name}: raw variable names in {raw}"
    assert not [t.get_text() for t in texts if "initialis" in t.get_text()], "spelling: initialization"
    for ax in _data_axes(fig):
        assert ax.get_xlabel() or ax.get_label() == "<colorbar>", f"{name}: a panel without an x label"


def test_the_checks_can_fail():
    """The checks above catch what they are about: a raw name, small text, a legend over the data, a framed one."""
    assert RAW_NAME.search(_words("tau_interp (epoch)")) and RAW_NAME.search(_words("spread over sigma_w"))
    assert not RAW_NAME.search(_words(r"$\tau_{\mathrm{interp}}$ (epoch)"))
    fig, axes, _ = style.panels(2)
    axes[0, 0].plot([0, 1], [0, 1], label="line")
    legend = axes[0, 0].legend(loc="center", frameon=True, fontsize=6)
    texts = _drawn_texts(fig)
    assert min(t.get_fontsize() for t in texts) * style.PX_PER_INCH / 72 * _shown_scale(fig) < style.MIN_TEXT_PX
    assert legend.get_window_extent().overlaps(axes[0, 0].bbox) and legend.get_frame_on()
    fig.set_figwidth(3 * style.FIGURE_WIDTH)
    assert _shown_scale(fig) < 0.5
    matplotlib.pyplot.close(fig)


# --------------------------------------------------------------------------- seeds: points or intervals
def _seed_points(fig) -> int:
    """How many single-seed points ``fig`` draws (plots draws them as lines labelled "_seed")."""
    return sum(len(line.get_xdata()) for ax in fig.axes for line in ax.lines if line.get_label() == "_seed")


def _intervals(fig) -> int:
    from matplotlib.container import ErrorbarContainer

    return sum(isinstance(c, ErrorbarContainer) for ax in fig.axes for c in ax.containers)


def _legend_text(fig) -> str:
    return " | ".join(t.get_text() for legend in _legends(fig) for t in legend.get_texts())


@pytest.mark.parametrize("seeds, points, intervals", [(1, 0, 0), (3, 3, 0), (5, 5, 0), (8, 0, 1)])
def test_few_seeds_are_points_many_an_interval(seeds, points, intervals):
    """Up to SEED_POINTS_MAX seeds each seed is a point (no t-interval over 2-3 seeds); above, the mean's 95 %
    t-interval; the legend names the estimator."""
    figs = _figures(seeds)
    fig = figs["acc_vs_sigma"]()
    n_lines = 5 * 3 * 2  # optimizers x sigma_w x panels
    assert _seed_points(fig) == points * n_lines
    assert _intervals(fig) == intervals * 5 * 2
    legend = _legend_text(fig)
    if seeds > 1:
        assert f"mean over {seeds} seeds" in legend
        assert ("95 % t-interval" in legend) == (seeds > style.SEED_POINTS_MAX)
        assert ("one seed" in legend) == (seeds <= style.SEED_POINTS_MAX)
    bars = figs["spread_bars"]()
    assert _seed_points(bars) == points * 5 * 2  # each seed's spread, per optimizer and predictor
    for name in ("spread_vs", "depth_panels", "norm_scatter", "spread_vs_horizon"):
        other = figs[name]()
        assert (_seed_points(other) > 0) == (points > 0), name
        assert (_intervals(other) > 0) == (intervals > 0), name
    matplotlib.pyplot.close("all")


def test_a_cross_fitted_spreads_error_bar_is_the_ledgers_calibrated_interval():
    """Above SEED_POINTS_MAX seeds a spread's bar is the interval the ledger prints (calibrated, asymmetric), and the
    legend says so."""
    from matplotlib.container import ErrorbarContainer

    from initmem.study.presentation.plots.seeds import seed_spread
    from initmem.study.statistics.calibration import CrossFitted

    ds = fake_sweep(
        {"sigma_w": [0.25, 1.0, 2.5], "seed": list(range(8))}, {"optimizer": ["sgd", "adam"], "lr": [0.02, 0.005]}
    )
    fig = figures.spread_bars(ds, variables=("selected_test_acc",))
    spread = seed_spread(ds, "selected_test_acc", ("optimizer",)).sel(optimizer="sgd")
    interval = CrossFitted(3).interval(spread.values)
    bar = next(c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer))
    low, high = bar.lines[2][0].get_segments()[0][:, 1]
    assert (low, high) == pytest.approx((interval.low, interval.high))
    assert high - interval.estimate > interval.estimate - low  # wider above
    assert "95 % calibrated interval" in _legend_text(fig)
    matplotlib.pyplot.close(fig)


def test_seed_points_are_the_values_drawn():
    """The points of a seed are its own accuracy, and the line through them is their mean."""
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1, 2]})
    fig = figures.acc_vs_sigma(ds, hue=None, variables=("selected_test_acc",))
    ax = fig.axes[0]
    points = next(line for line in ax.lines if line.get_label() == "_seed")
    mean = next(line for line in ax.lines if line.get_marker() == "o" and line.get_label() != "_seed")
    assert sorted(points.get_ydata()) == pytest.approx(sorted(ds["selected_test_acc"].values.ravel()))
    assert mean.get_ydata() == pytest.approx(ds["selected_test_acc"].mean("seed").values)
    matplotlib.pyplot.close(fig)


def test_use_book_style_sets_the_style_outside_ipython():
    with matplotlib.rc_context():
        style.use_book_style()
        assert matplotlib.rcParams["legend.frameon"] is False
        assert matplotlib.rcParams["font.size"] == style.STYLE["font.size"]


# --------------------------------------------------------------------------- the record under an exploration
def _record_lines(fig) -> list:
    return [line for ax in fig.axes for line in ax.lines if line.get_label() == "_record"]


def _legend_labels(fig) -> list[str]:
    return [t.get_text() for legend in _legends(fig) for t in legend.get_texts()]


def test_acc_vs_sigma_draws_the_record_muted_under_the_shared_hues():
    """The exploration's batch sizes 64 and 256 meet the record's 16, 64 and 256 at two of them: the record's two
    seed-mean lines per panel, grey, under the exploration's coloured ones, with a legend entry and a caption note."""
    from initmem.study.presentation.plots import overlay

    ds = fake_sweep({"batch_size": [64, 256], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    record = fake_sweep({"batch_size": [16, 64, 256], "sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1, 2]}, seed=3)
    record.attrs["preset"] = "cpu"
    fig = figures.acc_vs_sigma(ds, hue="batch_size", record=record)
    lines = _record_lines(fig)
    assert len(lines) == 2 * 2  # two shared batch sizes, two panels
    assert {matplotlib.colors.to_hex(line.get_color()) for line in lines} == {
        matplotlib.colors.to_hex(overlay.RECORD_COLOR)
    }
    assert all(line.get_zorder() < 2 for line in lines)  # under the exploration's lines (zorder 2)
    means = record["selected_test_acc"].sel(batch_size=64).mean("seed").values
    assert lines[0].get_ydata() == pytest.approx(means) and list(lines[0].get_xdata()) == [0.25, 1.0, 2.5]
    assert overlay.RECORD_LABEL in _legend_labels(fig)
    assert "committed record (preset cpu)" in fig._supxlabel.get_text().replace("\n", " ")
    plain = figures.acc_vs_sigma(ds, hue="batch_size")
    assert not _record_lines(plain) and overlay.RECORD_LABEL not in _legend_labels(plain)
    matplotlib.pyplot.close("all")


def test_spread_heatmap_writes_the_records_spread_in_the_cells_both_grids_have():
    ds = fake_sweep({"lr": [0.01, 0.1], "weight_decay": [0.0, 1e-3], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    record = fake_sweep(
        {"lr": [0.01, 0.03], "weight_decay": [0.0, 1e-3, 1e-2], "sigma_w": [0.25, 2.5], "seed": [0, 1]}, seed=5
    )
    fig = spreads.spread_heatmap(ds, record=record)
    italic = [t for t in fig.axes[0].texts if t.get_fontstyle() == "italic"]
    assert len(italic) == 2  # lr 0.01 at both weight decays; lr 0.1 is not in the record
    assert all(t.get_position()[0] == 0 for t in italic)  # the lr = 0.01 column
    assert "record" in fig._supxlabel.get_text()
    assert not [t for t in spreads.spread_heatmap(ds).axes[0].texts if t.get_fontstyle() == "italic"]
    matplotlib.pyplot.close("all")


def test_batch_spreads_draws_the_records_line_of_the_shared_design():
    from initmem.study.presentation import batch_plots

    base = {"train_size": 500}
    ds = fake_sweep({"sigma_w": [0.25, 2.5], "seed": [0, 1]}, {"batch_size": [64, 256], "epochs": [10, 40]}, base)
    record = fake_sweep(
        {"sigma_w": [0.25, 2.5], "seed": [0, 1]}, {"batch_size": [16, 64, 256], "epochs": [3, 10, 40]}, base, seed=2
    )
    fig = batch_plots.batch_spreads(ds, record=record)
    lines = _record_lines(fig)
    assert len(lines) == 2 and list(lines[0].get_xdata()) == [16, 64, 256]  # both panels, the record's three points
    assert "committed record" in _legend_labels(fig)
    assert not _record_lines(batch_plots.batch_spreads(ds))
    matplotlib.pyplot.close("all")


def test_phase_heatmaps_take_the_records_boundary_on_the_shared_cells():
    import numpy as np

    from initmem.study.presentation import phase_plots

    ds = fake_sweep({"lr": [0.01, 0.03, 0.1], "weight_decay": [0.0, 1e-3, 1e-2], "sigma_w": [0.1, 2.5], "seed": [0, 1]})
    record = fake_sweep({"lr": [0.01, 0.1], "weight_decay": [1e-3, 1e-2], "sigma_w": [0.1, 2.5], "seed": [0, 1]})
    theirs = phase_plots._record_x(record, [0.01, 0.03, 0.1], [0.0, 1e-3, 1e-2])
    assert np.isfinite(theirs).tolist() == [[False, False, False], [True, False, True], [True, False, True]]
    fig = phase_plots.phase_heatmaps(ds, record=record)
    assert any("committed record" in text for text in _legend_labels(fig))
    assert not any("committed record" in text for text in _legend_labels(phase_plots.phase_heatmaps(ds)))
    matplotlib.pyplot.close("all")


def test_long_legend_labels_wrap_inside_their_strip():
    """Three panels with one legend each (as the theory pages draw them): labels too long for a strip are wrapped, so
    the legends do not run into each other, and the strips grow to hold them."""
    fig, axes, strips = style.panels(3, legend="each")
    for k, (ax, strip) in enumerate(zip(axes[0], strips)):
        ax.plot([1, 2], [1, 2], label=f"a rather long description of line {k} (slope {k}.00, expected {k})")
        ax.plot([1, 2], [2, 1], label="short")
        style.legend_in(strip, ax)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [strip.get_legend().get_window_extent(renderer) for strip in strips]
    assert all(not a.overlaps(b) for a, b in zip(boxes, boxes[1:])), [(b.x0, b.x1) for b in boxes]
    assert "\n" in strips[0].get_legend().get_texts()[0].get_text()  # wrapped
    assert strips[0].get_legend().get_texts()[1].get_text() == "short"
    matplotlib.pyplot.close(fig)
