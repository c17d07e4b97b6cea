"""Tests of :mod:`initmem.theory` (the toys behind the theory chapter) and of the T1-T7 notebooks.

The unit tests are exact or near-exact properties: identities of scale-invariant losses, the
initialization-scale / learning-rate equivalences, the norm laws, the equilibria, the Q_alpha limits and
the orders of backward error analysis. Together they run in a few seconds. The notebook test executes
every theory notebook end to end with papermill (marked slow: about 10-60 s per notebook on 2 CPU cores).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from initmem.theory import backward_error, checks, diagonal, helpers, optimizers, toys

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
THEORY_NOTEBOOKS = sorted(NOTEBOOKS.glob("T[1-7]_*.py"))


@pytest.fixture(scope="module")
def toy():
    return toys.make_normalized_logistic(N=256, d=30, seed=0)


# ------------------------------------------------------------------------------------------------
# helpers


def test_clocks_and_schedules():
    c = helpers.clocks([0.1, 0.2, 0.3], 3, b=4, lam=0.5)
    np.testing.assert_allclose(c["T_adapt"], [0.1, 0.3, 0.6])
    np.testing.assert_allclose(c["T_SGD"], np.cumsum([0.01, 0.04, 0.09]) / 4)
    np.testing.assert_allclose(c["T_L2"], 0.5 * np.array([0.1, 0.3, 0.6]))
    with pytest.raises(ValueError, match="eta"):
        helpers.as_schedule([0.1, 0.2], 3)


def test_batch_indices_distinct_and_reproducible():
    idx = helpers.batch_indices(50, 8, 100, seed=3)
    assert idx.shape == (100, 8)
    assert all(len(set(row)) == 8 for row in idx)
    np.testing.assert_array_equal(idx, helpers.batch_indices(50, 8, 100, seed=3))
    assert not np.array_equal(idx, helpers.batch_indices(50, 8, 100, seed=4))
    np.testing.assert_array_equal(helpers.batch_indices(5, 5, 2, seed=0), [[0, 1, 2, 3, 4]] * 2)
    with pytest.raises(ValueError):
        helpers.batch_indices(5, 6, 1, seed=0)


def test_loglog_slope_and_time_average():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert helpers.loglog_slope(x, 3 * x**2.5) == pytest.approx(2.5)
    steps = np.array([0, 1, 3, 10])
    assert helpers.time_average(2 * steps + 1.0, steps) == pytest.approx(11.0)  # mean of 2k + 1 on [0, 10]
    rec = helpers.log_record_steps(1000, 30)
    assert rec[0] == 0 and rec[-1] == 1000 and np.all(np.diff(rec) > 0)


def test_init_scaled_shares_the_direction():
    w = helpers.init_scaled((4, 10), [0.5, 2.0], seed=1)
    assert w.shape == (2, 4, 10)
    np.testing.assert_allclose(w[1], 4 * w[0])
    # the init stream is independent of the data stream with the same seed
    problem, _, _ = toys.make_normalized_softmax(N=20, N_test=5, d=10, k=4, seed=1)
    assert abs(np.corrcoef(w[0].ravel(), np.random.default_rng(1).standard_normal((4, 10)).ravel())[0, 1]) < 0.9


def test_forgetting_step():
    x = np.array([[10.0, 1.0], [5.0, 1.05], [1.2, 3.0], [1.05, 1.0], [0.95, 1.0]])
    np.testing.assert_array_equal(optimizers.forgetting_step(x, 1.0, 0.1), [3, 3])
    assert optimizers.forgetting_step(np.array([[5.0], [5.0]]), 1.0)[0] == -1


# ------------------------------------------------------------------------------------------------
# scale-invariant toys


def test_scale_invariance_identities(toy):
    w = helpers.init_scaled(toy.shape, [0.7, 3.0], seed=2)
    idx = np.arange(16)
    g = toy.grad(w, idx)
    cos = np.abs(np.sum(w * g, -1)) / (np.linalg.norm(w, axis=-1) * np.linalg.norm(g, axis=-1))
    assert cos.max() < 1e-12
    np.testing.assert_allclose(toy.grad(5.0 * w, idx), g / 5.0, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(toy.loss(5.0 * w, idx), toy.loss(w, idx), rtol=1e-13)
    # the closed-form gradient matches finite differences of the loss (the independent check T1 shows)
    for wr in w:
        assert checks.fd_gradient_error(toy, wr, idx) < 1e-6
        assert checks.fd_gradient_error(toy, wr) < 1e-6


def test_unit_grad_stats_match_minibatch_expectation(toy):
    w = helpers.init_scaled(toy.shape, [1.0], seed=0)[0]
    signal, trace = toy.unit_grad_stats(w)
    b = 8
    idx = helpers.batch_indices(toy.N, b, 4000, seed=0)
    G = np.array([np.sum(toy.grad(w, i) ** 2) * np.sum(w**2) for i in idx])
    expected = signal + (toy.N - b) / (toy.N - 1) * trace / b
    assert G.mean() == pytest.approx(expected, rel=0.05)


def test_normalized_softmax_row_invariance():
    problem, _, _ = toys.make_normalized_softmax(N=64, N_test=10, d=8, k=3, seed=0)
    W = helpers.init_scaled(problem.shape, [1.0], seed=1)[0]
    scaled = W * np.array([[2.0], [0.5], [7.0]])  # rescale each row separately
    assert problem.loss(scaled) == pytest.approx(problem.loss(W), rel=1e-13)
    g = problem.grad(W)
    assert np.abs(np.sum(g * W, -1)).max() < 1e-13
    assert checks.fd_gradient_error(problem, W) < 1e-6
    assert checks.fd_gradient_error(problem, scaled, np.arange(8)) < 1e-6


def test_exact_norm_identity_for_sgd(toy):
    w0 = helpers.init_scaled(toy.shape, [1.0, 4.0], seed=0)
    tr = optimizers.sgd(toy, w0, 0.3, 8, 50, seed=0)
    sq = tr.sq_norm()
    np.testing.assert_allclose(sq[1:] - sq[:-1], 0.3**2 * tr.G / sq[:-1], rtol=1e-10)


def test_norm_step_residual(toy):
    w0 = helpers.init_scaled(toy.shape, [1.0, 4.0], seed=0)
    tr = optimizers.sgd(toy, w0, 0.3, 8, 50, seed=0)
    sq = tr.sq_norm()
    grad_sq = tr.G / sq[:-1]  # ||g_k||^2 from G_k = ||g_k||^2 ||w_k||^2
    assert optimizers.norm_step_residual(sq, grad_sq, 0.3).max() < 1e-12
    assert optimizers.norm_step_residual(sq, grad_sq, np.full(50, 0.3)).shape == (50, 2)
    # with decay the norm step is not Pythagoras: the residual is visible
    tr_wd = optimizers.sgd(toy, w0, 0.3, 8, 50, lam=0.1, seed=0)
    sq_wd = tr_wd.sq_norm()
    assert optimizers.norm_step_residual(sq_wd, tr_wd.G / sq_wd[:-1], 0.3).min() > 1e-3


def test_norm4_law(toy):
    w0 = helpers.init_scaled(toy.shape, [2.0, 4.0], seed=0)
    tr = optimizers.sgd(toy, w0, 0.1, 8, 500, seed=0, record_every=500)
    n4 = tr.sq_norm() ** 2
    np.testing.assert_allclose((n4[-1] - n4[0]) / optimizers.norm4_law_rhs(tr), 1.0, atol=1e-2)


# ------------------------------------------------------------------------------------------------
# independent checks: finite differences, a PyTorch BatchNorm network


def test_fd_gradient_of_a_known_function():
    A = np.array([[2.0, 1.0], [1.0, 3.0]])
    W = np.array([[0.5, -1.0], [2.0, 0.25]])
    fd = checks.fd_gradient(lambda V: 0.5 * np.sum(V * (A @ V)) + np.sum(np.sin(V)), W)
    np.testing.assert_allclose(fd, A @ W + np.cos(W), rtol=1e-8)


def test_bn_mlp_kernels_follow_the_norm_law():
    import torch

    from initmem.run.sigma_w import init_sigma_w_

    torch.set_num_threads(1)
    X, y = checks.bn_mlp_data(64, 8, 3, seed=0)
    eta = 0.1
    model = init_sigma_w_(checks.bn_mlp(8, 16, 3), 0.5, generator=torch.Generator().manual_seed(0))
    rec = checks.bn_mlp_sgd_record(model, X, y, eta, 16, 20, seed=0)
    assert set(rec) == {"0.weight", "3.weight", "6.weight"}
    for name, r in rec.items():
        assert r["sq_norm"].shape == (21,) and r["inner"].shape == r["grad_sq"].shape == (20,)
        cos = np.abs(r["inner"]) / np.sqrt(r["sq_norm"][:-1] * r["grad_sq"])
        residual = optimizers.norm_step_residual(r["sq_norm"], r["grad_sq"], eta)
        if name == "6.weight":  # the head is not scale invariant
            assert cos.max() > 1e-2 and residual.max() > 1e-3
        else:  # BN-fed kernels: g orthogonal to W, so ||W||^2 grows by eta^2 ||g||^2
            assert cos.max() < 1e-9 and residual.max() < 1e-10
            assert r["sq_norm"][-1] > r["sq_norm"][0]


def test_bn_mlp_sgd_record_trains_named_parameters_at_their_own_rates():
    """T1's twin: parameters named in lrs train at their rate (0: frozen), the others at eta."""
    import torch

    from initmem.run.sigma_w import init_sigma_w_

    torch.set_num_threads(1)
    X, y = checks.bn_mlp_data(64, 8, 3, seed=0)
    model = init_sigma_w_(checks.bn_mlp(8, 16, 3), 0.5, generator=torch.Generator().manual_seed(0))
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    rec = checks.bn_mlp_sgd_record(model, X, y, 0.1, 16, 5, seed=0, lrs={"6.weight": 0.0})
    after = dict(model.named_parameters())
    assert torch.equal(after["6.weight"], before["6.weight"]) and np.ptp(rec["6.weight"]["sq_norm"]) == 0
    assert not torch.equal(after["0.weight"], before["0.weight"])
    with pytest.raises(ValueError, match="lrs: \\['7.weight'\\] are not parameters"):
        checks.bn_mlp_sgd_record(model, X, y, 0.1, 16, 5, lrs={"7.weight": 0.1})


# ------------------------------------------------------------------------------------------------
# initialization scale == learning rate


@pytest.mark.parametrize("lam, momentum", [(0.0, 0.0), (1e-2, 0.0), (1e-2, 0.9)])
def test_sgd_sigma_equivalence(toy, lam, momentum):
    w0 = helpers.init_scaled(toy.shape, [1.0], seed=0)[0]
    sigma = 6.0
    a = optimizers.sgd(toy, sigma * w0, 0.2, 8, 200, lam=lam, momentum=momentum, seed=1)
    b = optimizers.sgd(toy, w0, 0.2 / sigma**2, 8, 200, lam=lam * sigma**2, momentum=momentum, seed=1)
    assert helpers.direction_difference(a.w, b.w).max() < 1e-10
    np.testing.assert_allclose(a.w, sigma * b.w, rtol=1e-9, atol=1e-12)


def test_adam_and_adamw_sigma_equivalence_needs_scaled_eps(toy):
    w0 = helpers.init_scaled(toy.shape, [1.0], seed=0)[0]
    sigma, eta, eps, lam = 4.0, 0.01, 1e-3, 0.05
    a = optimizers.adamw(toy, sigma * w0, eta, 8, 200, lam, eps=eps, seed=1)
    b = optimizers.adamw(toy, w0, eta / sigma, 8, 200, lam * sigma, eps=sigma * eps, seed=1)
    assert helpers.direction_difference(a.w, b.w).max() < 1e-10
    c = optimizers.adamw(toy, w0, eta / sigma, 8, 200, lam * sigma, eps=eps, seed=1)
    assert helpers.direction_difference(a.w, c.w).max() > 1e-6


def test_adam_step_bound():
    C = optimizers.adam_step_bound(np.arange(1, 20001))
    assert C[0] == pytest.approx(1.0)
    assert np.all(np.diff(C) > 0)
    assert C[-1] == pytest.approx(0.1 / np.sqrt(1e-3 * (1 - 0.81 / 0.999)), rel=1e-6)
    # adversarial (geometrically growing) and random gradients never exceed the bound
    rng = np.random.default_rng(0)
    for g in (1.02 ** np.arange(300), rng.standard_normal(300) * np.exp(rng.standard_normal(300))):
        m = v = 0.0
        for t, gt in enumerate(g, start=1):
            m, v = 0.9 * m + 0.1 * gt, 0.999 * v + 0.001 * gt**2
            u = (m / (1 - 0.9**t)) / np.sqrt(v / (1 - 0.999**t))
            assert abs(u) <= optimizers.adam_step_bound(t) * (1 + 1e-12)
    with pytest.raises(ValueError):
        optimizers.adam_step_bound(1, beta1=0.99, beta2=0.9)


def test_adam_runner_respects_the_bound(toy):
    w0 = helpers.init_scaled(toy.shape, [1.0], seed=0)
    tr = optimizers.adam(toy, w0, 0.01, 8, 300, seed=0)
    assert np.all(tr.extra["max_update"][:, 0] <= optimizers.adam_step_bound(np.arange(1, 301)) + 1e-12)


# ------------------------------------------------------------------------------------------------
# equilibria


def test_sgd_weight_decay_equilibrium(toy):
    eta, lam = 0.5, 4e-3
    w0 = helpers.init_scaled(toy.shape, [0.5, 8.0], seed=0)
    tr = optimizers.sgd(toy, w0, eta, 8, 3000, lam=lam, seed=0, record_every=10)
    n4 = (tr.sq_norm()[-50:] ** 2).mean(0)
    pred = optimizers.sgd_equilibrium_norm4(eta, lam, tr.G[1500:].mean())
    np.testing.assert_allclose(n4, pred, rtol=0.05)
    assert np.sqrt(np.mean(tr.extra["angular"][1500:] ** 2)) == pytest.approx(np.sqrt(2 * eta * lam), rel=0.03)


def test_adamw_equilibrium(toy):
    eta, lam = 0.05, 0.1
    w0 = helpers.init_scaled(toy.shape, [8.0], seed=0)
    tr = optimizers.adamw(toy, w0, eta, 8, 2500, lam, seed=0, record_every=10)
    final = np.sqrt(tr.sq_norm()[-50:]).mean()
    pred = optimizers.adamw_equilibrium_norm(eta, lam, toy.shape[0])
    assert final == pytest.approx(pred, rel=0.1)
    naive = np.sqrt(eta / (2 * lam)) * tr.extra["update_rms"][1000:].mean() * np.sqrt(toy.shape[0])
    assert final / naive > 2.5  # the naive formula ignores the momentum correlation


# ------------------------------------------------------------------------------------------------
# Muon


def test_ns5_homogeneity_and_gain():
    rng = np.random.default_rng(0)
    G = rng.standard_normal((3, 12, 7))  # batched, tall
    ref = optimizers.ns5(G)
    assert ref.shape == G.shape
    # with the 1e-7 guard of the Frobenius normalization: deviations of order 1e-7 / ||c G||_F
    np.testing.assert_allclose(optimizers.ns5(1e4 * G), ref, atol=1e-7)
    np.testing.assert_allclose(optimizers.ns5(1e-3 * G), ref, atol=1e-3)
    sv = np.linalg.svd(ref, compute_uv=False)
    bound = optimizers.ns5_gain_bound()
    assert 1.1 < bound < 1.3 and sv.max() <= bound and sv.min() > 0.5
    # exact homogeneity without the guard
    np.testing.assert_allclose(optimizers.ns5(1e-6 * G, eps=0.0), optimizers.ns5(G, eps=0.0), atol=1e-12)


def test_muon_equivalence_and_spectral_ball():
    problem, _, _ = toys.make_normalized_softmax(N=128, N_test=10, d=10, k=4, seed=0)
    W = helpers.init_scaled(problem.shape, [1.0], seed=0)[0]
    sigma, eta, lam = 5.0, 0.02, 0.2
    a = optimizers.muon(problem, sigma * W, eta, 16, 100, lam=lam, seed=0, ns_eps=0.0)
    b = optimizers.muon(problem, W, eta / sigma, 16, 100, lam=lam * sigma, seed=0, ns_eps=0.0)
    np.testing.assert_allclose(a.w, sigma * b.w, rtol=1e-9, atol=1e-12)
    big = helpers.init_scaled(problem.shape, [0.1, 30.0], seed=0)
    tr = optimizers.muon(problem, big, eta, 16, 400, lam=lam, seed=0)
    T_L2 = helpers.clocks(eta, 400, 16, lam)["T_L2"]
    bound = np.exp(-T_L2)[:, None] * optimizers.operator_norm(big) + optimizers.ns5_gain_bound() / lam
    assert np.all(tr.extra["op_norm"] <= bound)


# ------------------------------------------------------------------------------------------------
# diagonal linear networks


def test_q_alpha_limits_and_gd():
    X, y, w_star = diagonal.make_sparse_regression(10, 30, 2, seed=1)
    l1, l2 = diagonal.min_l1_interpolant(X, y), diagonal.min_l2_interpolant(X, y)
    big, small = diagonal.solve_q_alpha(X, y, 30.0), diagonal.solve_q_alpha(X, y, 1e-4)
    for w in (big, small, l1, l2):
        np.testing.assert_allclose(X @ w, y, atol=1e-7)
    assert np.linalg.norm(big - l2) / np.linalg.norm(l2) < 1e-3
    assert np.linalg.norm(small - l1) / np.linalg.norm(l1) < 0.1
    assert np.abs(l1).sum() <= np.abs(l2).sum() + 1e-9
    # Q_alpha's minimizer beats another interpolant
    assert diagonal.q_alpha(diagonal.solve_q_alpha(X, y, 0.5), 0.5) < diagonal.q_alpha(l2, 0.5)
    # GD from alpha = 1 with a small step lands on argmin Q_1
    out = diagonal.diag_net_gd(X, y, [1.0], 0.002, 5000)
    q1 = diagonal.solve_q_alpha(X, y, 1.0)
    assert np.linalg.norm(out["w"][0] - q1) / np.linalg.norm(q1) < 5e-3


# ------------------------------------------------------------------------------------------------
# backward error analysis


def test_igr_orders():
    toy = backward_error.TwoParamToy()
    th0, T = np.array([2.0, 0.5]), 2.0
    gf = backward_error.flow_endpoint(backward_error.igr_field(toy.grad, toy.hess, 0.0), th0, T)
    e_gf, e_mod = [], []
    for h in (0.04, 0.02):
        gd = backward_error.gd_endpoint(toy.grad, th0, h, int(round(T / h)))
        e_gf.append(np.linalg.norm(gd - gf))
        e_mod.append(
            np.linalg.norm(gd - backward_error.flow_endpoint(backward_error.igr_field(toy.grad, toy.hess, h), th0, T))
        )
    assert e_gf[0] / e_gf[1] == pytest.approx(2, rel=0.1)
    assert e_mod[0] / e_mod[1] == pytest.approx(4, rel=0.15)


def test_gamma_quadratic_matches_direct_computation():
    reg = backward_error.make_linear_regression(16, 3, seed=0)
    w = np.array([0.3, -1.0, 2.0])
    per_sample = reg.X * (reg.X @ w - reg.y)[:, None]
    direct = np.mean(np.sum((per_sample - per_sample.mean(0)) ** 2, -1))
    M, p = reg.gamma_quadratic()
    const = direct - (w @ M @ w - 2 * p @ w)
    w2 = w + np.array([0.1, 0.2, -0.3])
    per2 = reg.X * (reg.X @ w2 - reg.y)[:, None]
    direct2 = np.mean(np.sum((per2 - per2.mean(0)) ** 2, -1))
    assert direct2 == pytest.approx(w2 @ M @ w2 - 2 * p @ w2 + const, rel=1e-10)


def test_smith_modified_loss_is_third_order():
    reg = backward_error.make_linear_regression(32, 3, seed=0)
    w0 = np.array([1.0, -1.0, 2.0])
    errs = []
    for eps in (0.04, 0.02):
        mean, _ = backward_error.sgd_epoch_mean(reg, w0, eps, 8, 20000, seed=0)
        errs.append(
            np.linalg.norm(mean - backward_error.linear_flow_endpoint(*reg.modified_linear_field(eps, 8), w0, 4 * eps))
        )
    assert errs[0] / errs[1] > 6  # O(eps^3): ratio ~8 (the plain flow gives ~4)


def test_heavy_ball_slow_root():
    beta, el = 0.9, 1e-3
    mu = backward_error.heavy_ball_slow_root(el, beta)
    assert mu**2 - (1 + beta - el * (1 - beta)) * mu + beta == pytest.approx(0, abs=1e-14)
    rate = -np.log(mu) / el
    assert rate == pytest.approx(backward_error.heavy_ball_rate_prediction(el, beta), rel=1e-3)
    theta, m = 1.0, 0.0
    for _ in range(3000):
        m = beta * m + (1 - beta) * theta
        theta -= el * m
    theta2 = theta
    for _ in range(1000):
        m = beta * m + (1 - beta) * theta
        theta -= el * m
    assert theta / theta2 == pytest.approx(mu**1000, rel=1e-6)
    with pytest.raises(ValueError, match="underdamped"):
        backward_error.heavy_ball_slow_root(0.5, 0.9)


def test_linear_loss_regimes():
    d = 100
    noise = toys.make_linear_loss(128, d, 0.0, seed=0)
    np.testing.assert_allclose(noise.A.mean(0), 0.0, atol=1e-12)
    tr = optimizers.adam(noise, np.zeros(d), 0.01, 4, 2000, seed=0)
    disp2 = np.sum((tr.final - tr.w[0]) ** 2)
    assert disp2 / (d * 2000 * 0.01**2) == pytest.approx(1.0, abs=0.3)  # random walk: C sum eta^2
    coherent = toys.make_linear_loss(128, d, 1.0, seed=0)
    tr = optimizers.adam(coherent, np.zeros(d), 0.01, 4, 2000, seed=0)
    assert np.max(np.abs(tr.final)) / (0.01 * 2000) == pytest.approx(1.0, abs=0.2)  # ballistic: T_adapt


# ------------------------------------------------------------------------------------------------
# notebooks


# Executing the notebooks themselves (their own asserted pass criteria) is tests/test_notebooks_smoke.py's job.


def test_all_theory_notebooks_present():
    assert [p.stem.split("_")[0] for p in THEORY_NOTEBOOKS] == [f"T{i}" for i in range(1, 8)]
