# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # T5. Weight decay: an equilibrium that forgets, and the $T_{L_2}$ clock
#
# Without weight decay the norm of a scale-invariant block can only grow (T4). A large initial norm then acts as a
# permanent brake on the effective learning rate, and once the network interpolates nothing releases it. Weight decay
# changes this picture completely. It pulls the norm down at a rate set by $\eta\lambda$, while the finite-step and noise
# effects push it up. The two balance at an **equilibrium that does not depend on the initialization**. The time to reach
# that equilibrium is measured by the second clock of the paper, $T_{L_2}=\lambda\sum_k\eta_k$, and grows only
# logarithmically with $\sigma_w$. This is how a larger learning rate combined with L2 makes SGD forget (claim C4 of
# {cite}`das2026forget`).
#
# ## One ODE for both clocks
#
# With decay, $w_{k+1}=(1-\eta\lambda)w_k-\eta g_k$. For plain SGD, coupled L2 and decoupled decay give the same update. Since
# $g_k\perp w_k$,
#
# $$
# \|w_{k+1}\|^2=(1-\eta\lambda)^2\|w_k\|^2+\frac{\eta^2G_k}{\|w_k\|^2},\qquad G_k=\|\nabla\hat L_k(\hat w_k)\|^2 .
# $$
#
# With $x=\|w\|^2$ and to first order in $\eta\lambda$ per step, $\frac{dx}{dk}=-2\eta\lambda x+\frac{\eta^2G}{x}$. Multiplying by $2x$ turns this
# into a **linear** equation for $\|w\|^4$:
#
# $$
# \begin{gathered}
# \frac{d\|w\|^4}{dk}=-4\eta_k\lambda\,\|w\|^4+2\eta_k^2G_k\\
# \Longrightarrow\quad
# \|w_K\|^4=e^{-4\lambda\sum_{k<K}\eta_k}\,\|w_0\|^4+2\sum_{k<K}\eta_k^2G_k\,e^{-4\lambda\sum_{k<j<K}\eta_j}.
# \end{gathered}
# $$
#
# Both clocks appear in one formula. With $\lambda=0$ it is T4's law, and the init term is overwritten on the $T_{\rm SGD}$ clock. With
# $\lambda>0$ the init term is damped by $e^{-4T_{L_2}}$ whatever the gradients do.
#
# ## Equilibrium, angular update, relaxation
#
# For constant $\eta$ and a stationary $\bar G$, the fixed point of the exact recursion is
# $x_*^2\big(1-(1-\eta\lambda)^2\big)=\eta^2\bar G$, i.e.
#
# $$
# \begin{gathered}
# \|w_*\|^4=\frac{\eta\,\bar G}{\lambda\,(2-\eta\lambda)}\approx\frac{\eta\bar G}{2\lambda},\\
# \Delta\phi_*\approx\frac{\eta\sqrt{\bar G}}{\|w_*\|^2}=\sqrt{2\eta\lambda},
# \qquad
# \eta_{\rm eff,*}=\frac{\eta}{\|w_*\|^2}=\sqrt{\frac{2\eta\lambda}{\bar G}} .
# \end{gathered}
# $$
#
# The equilibrium angular update per step, $\sqrt{2\eta\lambda}$, does not even depend on the gradient statistics. These are
# the equilibria described by Wan et al.'s *spherical motion dynamics* {cite}`wan2021smd` and Kosson et al.'s *rotational
# equilibrium* {cite}`kosson2024rotational`. We derived them here in the standard form; the papers' exact statements and
# constants should be checked before quoting them. Because the ODE is linear in $\|w\|^4$, the relaxation for constant $\eta$ and
# $\bar G$ is an exponential:
#
# $$
# \|w_k\|^4=\|w_*\|^4+\big(\|w_0\|^4-\|w_*\|^4\big)\,e^{-4\eta\lambda k}.
# $$
#
# With heavy-ball momentum $\alpha$ in PyTorch's form (the decay enters the buffer), the same balance gives
# $\|w_*\|^4\approx\frac{\eta\bar G}{2\lambda(1-\alpha)}$ and $\Delta\phi_*\approx\sqrt{2\eta\lambda/(1+\alpha)}$. This is our reconstruction of
# the values reported by {cite}`wan2021smd` and {cite}`kosson2024rotational`. The momentum buffer amplifies both the decay and the
# radial effect of past gradients. With decoupled decay the factor differs, so the two conventions must not be mixed.
#
# ## The forgetting time is logarithmic in $\sigma_w$
#
# The initial condition is forgotten once its damped contribution $e^{-4T_{L_2}}\|w_0\|^4$ falls below the equilibrium value:
#
# $$
# \begin{gathered}
# T_{L_2}^{\rm forget}\approx\frac14\ln\frac{\|w_0\|^4}{\|w_*\|^4}=\ln\frac{\|w_0\|}{\|w_*\|}\;\approx\;\ln\sigma_w+\text{const},\\
# k_{\rm forget}(\delta)=\frac{1}{4\eta\lambda}\ln\frac{\|w_0\|^4-\|w_*\|^4}{\delta\,\|w_*\|^4}
# \end{gathered}
# $$
#
# for the first step at which $\|w\|^4$ is within a fraction $\delta$ of equilibrium. Compare T4: without decay, forgetting needs a
# noise budget $\propto\sigma_w^4$. With decay it needs $T_{L_2}$ to exceed $\ln\sigma_w$. A tenfold larger initialization costs only
# $\ln10\approx2.3$ more units of $T_{L_2}$.
#
# Several results in the literature share this "$\frac{1}{\eta\lambda}\times\log$" structure. Li & Arora
# {cite}`li2020exponential` show that weight decay on a normalized network is equivalent to an exponentially growing learning
# rate, with growth rate $e^{2T_{L_2}}$ in the simplest case. Li, Lyu & Arora {cite}`li2020intrinsic` identify $\eta\lambda$ as the
# *intrinsic learning rate* and conjecture equilibration in $\tilde O(1/\eta\lambda)$ steps. Li, Wang & Yu {cite}`li2022fastmixing`
# prove fast mixing to the same equilibrium from every initialization, under stated conditions; see also
# {cite}`li2024fastequilibrium`. In grokking, the delay before a large-norm solution is abandoned scales like $\log(\text{init
# scale})/\lambda$ {cite}`liu2023omnigrok,lyu2024dichotomy,boursier2025grokking`.

# %% tags=["parameters"]
seed = 0
N = 512
d = 50
temperature = 5.0
batch = 8
eta = 0.5
lam = 1e-3
steps = 8000  # T_L2 = lam * eta * steps
check_sigmas = [0.2, 1.0, 5.0, 20.0]  # check 1: equilibrium from very different scales
forget_sigmas = [12.0, 18.0, 27.0, 40.0, 60.0, 90.0]  # check 2: forgetting time (all above equilibrium)
forget_tol = 0.1  # within 10 % of the equilibrium ||w||^4
momentum = 0.9  # check 3
momentum_eta = 0.1
momentum_steps = 4000

# %%
import numpy as np
from myst_nb import glue

from initmem.book import page
from initmem.study.presentation.plots import style
from initmem.theory import helpers, optimizers, toys

style.use_book_style()  # SVG figures, legible in the book
source = page.source_note("T5_weight_decay", sources=[])  # under every figure

problem = toys.make_normalized_logistic(N=N, d=d, s=temperature, seed=seed)
T_L2 = helpers.clocks(eta, steps, batch, lam)["T_L2"][-1]
glue("t5_T_L2", float(T_L2), display=False)  # used in the text below
glue("t5_forget_tol_pct", 100 * forget_tol, display=False)
glue("t5_momentum", momentum, display=False)

# %% [markdown]
# ## Check 1: one equilibrium for all $\sigma$
#
# Runs from $\sigma$ spanning two orders of magnitude, with the same batches, to $T_{L_2}$ = {glue:text}`t5_T_L2:.1f`. We
# compare:
#
# * the final $\|w\|^4$ across $\sigma$ (pass: spread below 2 %);
# * the final $\|w\|^4$ against $\eta\bar G/(\lambda(2-\eta\lambda))$, with $\bar G$ averaged over the second half (pass: within 5 %);
# * the RMS angular update in the second half against $\sqrt{2\eta\lambda}$ (pass: within 2 %).

# %%
w0 = helpers.init_scaled(problem.shape, check_sigmas, seed=seed)
tr = optimizers.sgd(problem, w0, eta, batch, steps, lam=lam, seed=seed, record_every=10)
n4 = tr.sq_norm() ** 2
late = slice(steps // 2, steps)
G_bar = tr.G[late].mean()
n4_pred = optimizers.sgd_equilibrium_norm4(eta, lam, G_bar)
n4_final = n4[-50:].mean(0)  # average over the last 500 steps
spread = (n4_final.max() - n4_final.min()) / n4_final.mean()
pred_err = abs(n4_final.mean() / n4_pred - 1)
ang_rms = np.sqrt(np.mean(tr.extra["angular"][late] ** 2))
ang_pred = np.sqrt(2 * eta * lam)
dir_diff = helpers.direction_difference(tr.final[:1], tr.final).max()
relax = n4_pred + (n4[0] - n4_pred) * np.exp(-4 * eta * lam * tr.steps)[:, None]
print(f"final ||w||^4 per sigma: {np.round(n4_final, 1)}  (spread {spread:.1e})")
print(f"predicted eta G/(lam (2 - eta lam)) = {n4_pred:.1f} with G_bar = {G_bar:.3f}: relative error {pred_err:.1%}")
print(f"angular update RMS {ang_rms:.5f} vs sqrt(2 eta lam) = {ang_pred:.5f}")
print(f"final directions across sigma differ by at most {dir_diff:.1e} (same batches: the runs have synchronized)")
assert spread < 0.02 and pred_err < 0.05 and abs(ang_rms / ang_pred - 1) < 0.02
glue("t5_norm4_final", float(n4_final.mean()), display=False)
glue("t5_norm4_pred", float(n4_pred), display=False)
glue("t5_norm4_spread", float(spread), display=False)
glue("t5_norm4_pred_err", float(pred_err), display=False)
glue("t5_angular_rms", float(ang_rms), display=False)
glue("t5_angular_pred", float(ang_pred), display=False)
glue("t5_final_direction_diff", float(dir_diff), display=False)

# %% [markdown]
# ## Check 2: the forgetting time is a straight line in $\ln\sigma$
#
# For $\sigma$ above equilibrium we measure the first step $k_{\rm forget}$ after which $\|w\|^4$ stays within
# {glue:text}`t5_forget_tol_pct:.0f` % of the equilibrium value of check 1. We compare it with
# $\frac{1}{4\eta\lambda}\ln\frac{\|w_0\|^4-\|w_*\|^4}{\delta\|w_*\|^4}$. In units of $T_{L_2}$ the slope against $\ln\sigma$ should be 1.

# %%
sig_f = np.array(forget_sigmas)
w0_f = helpers.init_scaled(problem.shape, sig_f, seed=seed)
tr_f = optimizers.sgd(problem, w0_f, eta, batch, steps, lam=lam, seed=seed, record_every=10)
n4_f = tr_f.sq_norm() ** 2
idx = optimizers.forgetting_step(n4_f, n4_pred, forget_tol)
assert np.all(idx >= 0), "increase steps: some runs never reached equilibrium"
k_meas = tr_f.steps[idx]
k_pred = np.log((n4_f[0] - n4_pred) / (forget_tol * n4_pred)) / (4 * eta * lam)
slope = np.polyfit(np.log(sig_f), eta * lam * k_meas, 1)[0]
abs_err = eta * lam * np.abs(k_meas - k_pred)  # in units of T_L2 (e-folds of the norm)
for s, km, kp in zip(sig_f, k_meas, k_pred):
    print(
        f"sigma = {s:5.1f}: forgetting step {km:5d} (T_L2 = {eta * lam * km:.2f}), "
        f"predicted {kp:7.1f} (T_L2 = {eta * lam * kp:.2f})"
    )
print(
    f"slope of T_L2-forget vs ln(sigma): {slope:.3f} (pass: |slope - 1| < 0.1); "
    f"max |error| {abs_err.max():.2f} in T_L2 units (pass: < 0.25)"
)
assert abs(slope - 1) < 0.1 and abs_err.max() < 0.25
glue("t5_forget_slope", float(slope), display=False)
glue("t5_forget_max_abs_err", float(abs_err.max()), display=False)

# %% [markdown]
# ## Check 3: heavy-ball momentum
#
# The same toy with PyTorch-style momentum $\alpha$ = {glue:text}`t5_momentum` and coupled decay. The predictions are
# $\|w_*\|^4\approx\eta\bar G/(2\lambda(1-\alpha))$ (pass: within 10 %) and $\Delta\phi_*\approx\sqrt{2\eta\lambda/(1+\alpha)}$ (pass: within 2 %).

# %%
tr_m = optimizers.sgd(
    problem, w0[1:3], momentum_eta, batch, momentum_steps, lam=lam, momentum=momentum, seed=seed, record_every=10
)
late_m = slice(momentum_steps // 2, momentum_steps)
n4_m = (tr_m.sq_norm()[-50:] ** 2).mean()
n4_m_pred = momentum_eta * tr_m.G[late_m].mean() / (2 * lam * (1 - momentum))
ang_m = np.sqrt(np.mean(tr_m.extra["angular"][late_m] ** 2))
ang_m_pred = np.sqrt(2 * momentum_eta * lam / (1 + momentum))
print(
    f"momentum {momentum}: ||w||^4 = {n4_m:.0f} vs eta G/(2 lam (1 - alpha)) = {n4_m_pred:.0f} "
    f"({n4_m / n4_m_pred - 1:+.1%});"
    f" angular RMS {ang_m:.5f} vs sqrt(2 eta lam/(1 + alpha)) = {ang_m_pred:.5f}"
)
assert abs(n4_m / n4_m_pred - 1) < 0.1 and abs(ang_m / ang_m_pred - 1) < 0.02
glue("t5_momentum_norm4_ratio", float(n4_m / n4_m_pred), display=False)
glue("t5_momentum_angular_ratio", float(ang_m / ang_m_pred), display=False)

# %%
fig, (axes,), keys = style.panels(3, legend="each")  # one row of panels
ax = axes[0]
T = eta * lam * tr.steps
for j, s in enumerate(check_sigmas):
    ax.semilogy(T, n4[:, j], color=f"C{j}", label=rf"$\sigma={s:g}$")
    ax.semilogy(T, relax[:, j], color=f"C{j}", ls=":", lw=1)
ax.axhline(n4_pred, color="k", ls="--", lw=1, label=r"$\eta\bar G/(\lambda(2-\eta\lambda))$")
ax.plot([], [], color="0.4", ls=":", lw=1, label="exponential relaxation")  # the dotted lines, in the legend
ax.set(xlabel=r"$T_{L_2}=\lambda\sum\eta$", ylabel=r"$\|w\|^4$", title="one equilibrium")
style.legend_in(keys[0], ax)
ax = axes[1]
ax.plot(np.log(sig_f), eta * lam * k_meas, "o", label="measured")
ax.plot(np.log(sig_f), eta * lam * k_pred, "-", label=r"$\frac{1}{4}\ln\frac{\|w_0\|^4-\|w_*\|^4}{\delta\|w_*\|^4}$")
ax.set(xlabel=r"$\ln\sigma$", ylabel=r"$T_{L_2}$ at forgetting", title=f"forgetting time\n(slope {slope:.2f})")
style.legend_in(keys[1], ax)
ax = axes[2]
window = 100
for j, s in enumerate(check_sigmas):
    a = tr.extra["angular"][:, j]
    rms = np.sqrt(np.convolve(a**2, np.ones(window) / window, mode="valid"))
    ax.loglog(np.arange(len(rms)) + window, rms, color=f"C{j}", label=rf"$\sigma={s:g}$")
ax.axhline(ang_pred, color="k", ls="--", lw=1, label=r"$\sqrt{2\eta\lambda}$")
ax.set(xlabel="step", ylabel="angular update, RMS", title="rotational equilibrium\n(RMS over 100 steps)")
style.legend_in(keys[2], ax)
page.figure(fig, "t5_fig", source)

# %% [markdown]
# **Reading the figure.** Left: every run reaches the same $\|w\|^4$ = {glue:text}`t5_norm4_final:.0f`, from $\sigma=0.2$ to
# $\sigma=20$. The spread across $\sigma$ is {glue:text}`t5_norm4_spread:.1e`, and the prediction
# {glue:text}`t5_norm4_pred:.0f` is off by {glue:text}`t5_norm4_pred_err:.1%`. Since all runs see the same batches, their
# final directions even coincide, to {glue:text}`t5_final_direction_diff:.0e`. The smallest scale shows the two-sidedness
# of T4 in action. Its first step, with effective learning rate $\eta/\|w_0\|^2$, throws the norm up by several orders of
# magnitude ($\|w_1\|^2\approx\eta^2G/\|w_0\|^2$). From there it relaxes exactly like the $\sigma=20$ run. The dotted lines
# are the exponential relaxation with the *equilibrium* $\bar G$. They deviate from the measured curves only early on, when the
# direction is still untrained and $G$ differs from its equilibrium value. Middle: the forgetting time grows linearly in $\ln\sigma$, with slope
# {glue:text}`t5_forget_slope:.2f` in $T_{L_2}$ units (predicted 1). The errors are at most
# {glue:text}`t5_forget_max_abs_err:.2f` units of $T_{L_2}$. The measured crossings come slightly early because $\|w\|^4$
# fluctuates around its equilibrium. Right: the angular update converges to {glue:text}`t5_angular_rms:.5f`, against
# $\sqrt{2\eta\lambda}$ = {glue:text}`t5_angular_pred:.5f`, from either side.
#
# ## What this means for the paper
#
# With decay, $\sigma_w$ survives only in the transient, and the transient lasts $T_{L_2}\approx\ln(\|W_0\|/\|W_*\|)$. A typical
# CIFAR schedule reaches a $T_{L_2}$ of order 1–10 (for example $\lambda=5\times10^{-4}$, $\eta=0.1$, 40,000 steps gives 2). That
# is enough to forget a factor of a few in $\sigma_w$, but not necessarily the full range of a sweep from 0.1 to 2.5 at a small
# learning rate. The prediction to test on the ResNet runs is that SGD's accuracy spread collapses once $T_{L_2}$ exceeds
# $\ln(\sigma_{\max}/\sigma_*)$, where $\sigma_*$ is the equilibrium scale. It should not depend on the number of epochs as such.
