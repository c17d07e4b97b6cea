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
# # T7. Muon: orthogonalized updates and spectral-norm equilibria
#
# Muon goes one step further than Adam. It replaces each weight matrix's update by an (approximately) orthogonal
# matrix, so the update's *spectral* size is fixed by the learning rate alone. The same argument as for Adam (T6) then
# applies at the level of matrices. The update ignores the weight norm, the displacement is budgeted by
# $T_{\rm adapt}=\sum\eta$, and decoupled weight decay confines the weights to a spectral-norm ball of radius set by
# $1/\lambda$, whatever the initialization. The paper reports that Muon erases most of the spread across $\sigma_w$ (about 4
# points for ResNet-9, claim C2 of {cite}`das2026forget`). This notebook derives why, and closes the theory chapter
# with a synthesis table.
#
# ## Definition
#
# For each 2-D hidden weight (convolution kernels flattened to $C_{\rm out}\times C_{\rm in}k_hk_w$), Muon {cite}`jordan2024muon`
# keeps a momentum buffer and orthogonalizes it with five Newton–Schulz iterations:
#
# $$
# \begin{gathered}
# B_t=\mu B_{t-1}+(1-\mu)G_t,\qquad M_t=(1-\mu)G_t+\mu B_t\ \ (\text{Nesterov}),\\
# O_t=\mathrm{NS}_5(M_t)\approx UV^\top\quad(M_t=USV^\top),
# \end{gathered}
# $$
# $$
# W_t=(1-\eta\lambda)W_{t-1}-\eta\,s\,O_t,\qquad s=\sqrt{\max(1,\ \text{rows}/\text{cols})}.
# $$
#
# $\mathrm{NS}_5$ first normalizes, $X\leftarrow M/(\|M\|_F+10^{-7})$, so that all singular values lie in $[0,1]$. It then applies five times
# $X\leftarrow aX+b(XX^\top)X+c(XX^\top)^2X$ with $(a,b,c)=(3.4445,-4.7750,2.0315)$. Each step keeps the singular vectors and maps each singular value by the
# quintic $\varphi(x)=ax+bx^3+cx^5$. The coefficients maximize the slope at zero, so small singular values are pushed up
# fast, and the result is $US'V^\top$ with $S'$ roughly between 0.7 and 1.2, not exactly $UV^\top$. Other conventions exist.
# The Moonshot implementation uses $s=0.2\sqrt{\max(\text{rows},\text{cols})}$ to match AdamW's update RMS
# {cite}`liu2025muon`. `torch.optim.Muon` uses learning rate $10^{-3}$, weight decay 0.1 and momentum 0.95 by default
# {cite}`pytorch_muon`. Muon is meant for hidden matrices. Embeddings, the head, gains and biases are trained with AdamW.
#
# ## Why Muon's update ignores the weight norm
#
# 1. **Orthogonalization is positively homogeneous of degree 0:** $\mathrm{polar}(cM)=\mathrm{polar}(M)$ for $c>0$. $\mathrm{NS}_5$ inherits this
#    exactly through its Frobenius normalization, apart from the $10^{-7}$ guard.
# 2. **The buffer is linear in the gradients**, and for a scale-invariant $W$ the gradient is $\nabla L(cW)=c^{-1}\nabla L(W)$ (T1).
#
# Hence $O_t$ does not change when $W$ is rescaled. As for Adam, $\mathrm{Muon}(\sigma,\eta,\lambda)\equiv\mathrm{Muon}(1,\eta/\sigma,\sigma\lambda)$,
# exactly if the guard is set to zero. The step has spectral norm $\approx\eta s$ whatever $\|W\|$ is, so the angular step is $\propto1/\sigma_w$
# (SGD: $\propto1/\sigma_w^2$).
#
# **Steepest descent in the spectral norm.** Bernstein & Newhouse {cite}`bernstein2024old` point out that, without
# accumulation, $\arg\min_{\|\Delta W\|_{\rm op}\le\eta}\langle G,\Delta W\rangle=-\eta\,UV^\top$. Muon is (momentum) steepest descent under the
# operator norm, just as sign descent (Adam without its EMAs) is steepest descent under the max norm. Two consequences follow.
#
# * **Displacement budget.** $\|W_K-W_0\|_{\rm op}\le s_{\max}\sum_k\eta_k=s_{\max}T_{\rm adapt}$, with
#   $s_{\max}=s\cdot\max_{x\in[0,1]}\varphi^{\circ5}(x)$. The initial matrix, of spectral norm
#   $\approx\sigma_w(\sqrt m+\sqrt n)/\sqrt n$, can be overwritten once $s\,T_{\rm adapt}\gtrsim\|W_0\|_{\rm op}$.
# * **An invariant ball under decoupled decay.** Since $\|\eta sO_t\|_{\rm op}\le\eta s_{\max}$,
#   $\|W_{t}\|_{\rm op}\le(1-\eta\lambda)\|W_{t-1}\|_{\rm op}+\eta s_{\max}$. By induction,
#
#   $$
#   \|W_K\|_{\rm op}\;\le\;\prod_k(1-\eta_k\lambda)\,\|W_0\|_{\rm op}+\frac{s_{\max}}{\lambda}\;\le\;e^{-T_{L_2}}\,\|W_0\|_{\rm op}+\frac{s_{\max}}{\lambda}.
#   $$
#
#   The initialization is damped by $e^{-T_{L_2}}$ (T5's clock), and the ball of radius $s_{\max}/\lambda$ is invariant. Chen, Li &
#   Liu {cite}`chen2025muon` show that Muon with decoupled weight decay implicitly solves a problem with a
#   spectral-norm constraint on each weight matrix. This bound is the elementary, deterministic side of that statement.

# %% tags=["parameters"]
seed = 0
N = 512  # training samples
N_test = 2000
d = 20  # input dimension (columns of W)
k = 5  # classes (rows of W)
temperature = 4.0
label_noise = 0.5
sigmas = [0.3, 1.0, 3.0, 10.0, 30.0]
steps = 2000
batch = 32
muon_eta = 0.02
muon_lam = 0.1
sgd_eta = 0.1  # a learning rate at which SGD trains well from sigma = 1
twin_steps = 300

# %%
import numpy as np
from myst_nb import glue

from initmem.book import page
from initmem.study.presentation.plots import style
from initmem.theory import helpers, optimizers, toys

style.use_book_style()  # SVG figures, legible in the book
source = page.source_note("T7_muon", sources=[])  # under every figure

s_max = optimizers.ns5_gain_bound()
glue("t7_ns5_gain", s_max, display=False)

# %% [markdown]
# ## Check 1: $\mathrm{NS}_5$ is scale-free, and Muon's $\sigma$-equivalence
#
# We apply $\mathrm{NS}_5$ to a random $30\times20$ matrix scaled by $c$, and compare the Muon twins $(\sigma,\eta,\lambda)$ and
# $(1,\eta/\sigma,\sigma\lambda)$ with the guard set to zero. The pass criteria:
#
# * $\|\mathrm{NS}_5(cG)-\mathrm{NS}_5(G)\|$ at the level of the $10^{-7}$ guard;
# * output singular values inside $[0, s_{\max}]$, with $s_{\max}$ = {glue:text}`t7_ns5_gain:.3f`;
# * twin directions equal to $10^{-10}$.

# %%
rng = np.random.default_rng(seed)
G = rng.standard_normal((30, 20))
ref = optimizers.ns5(G)
homog = {c: float(np.abs(optimizers.ns5(c * G) - ref).max()) for c in (1e-4, 1e4)}
sv = np.linalg.svd(ref, compute_uv=False)
for c, dev in homog.items():
    print(f"max |NS5({c:g} G) - NS5(G)| = {dev:.1e}")
print(
    f"singular values of NS5(G): [{sv.min():.3f}, {sv.max():.3f}];  sup of the iterated quintic on [0, 1]: {s_max:.4f}"
)

problem, X_test, y_test = toys.make_normalized_softmax(
    N=N, N_test=N_test, d=d, k=k, s=temperature, label_noise=label_noise, seed=seed
)
W_unit = helpers.init_scaled(problem.shape, [1.0], seed=seed)[0]
sig_twin = 10.0
tw_a = optimizers.muon(problem, sig_twin * W_unit, muon_eta, batch, twin_steps, lam=muon_lam, seed=seed, ns_eps=0.0)
tw_b = optimizers.muon(
    problem, W_unit, muon_eta / sig_twin, batch, twin_steps, lam=muon_lam * sig_twin, seed=seed, ns_eps=0.0
)
twin = float(np.max(np.abs(tw_a.w / sig_twin - tw_b.w)) / np.max(np.abs(tw_b.w)))
print(f"Muon(sigma={sig_twin:g}, eta, lam) vs Muon(1, eta/sigma, sigma lam): max relative difference {twin:.1e}")
assert homog[1e-4] < 1e-3 and homog[1e4] < 1e-7 and sv.max() <= s_max and twin < 1e-10
glue("t7_ns5_diff_small", homog[1e-4], display=False)
glue("t7_ns5_diff_large", homog[1e4], display=False)
glue("t7_ns5_sv_min", float(sv.min()), display=False)
glue("t7_ns5_sv_max", float(sv.max()), display=False)
glue("t7_twin_diff", twin, display=False)

# %% [markdown]
# At $c=10^{-4}$ the residual {glue:text}`t7_ns5_diff_small:.0e` is the guard: $10^{-7}$ against $\|cG\|_F\approx2.4\times10^{-3}$. At
# $c=10^4$ it is {glue:text}`t7_ns5_diff_large:.0e`. The output singular values lie in [{glue:text}`t7_ns5_sv_min:.2f`,
# {glue:text}`t7_ns5_sv_max:.2f`], not at 1. The twins agree to {glue:text}`t7_twin_diff:.0e`.
#
# ## Check 2: training from five scales: the invariant ball, and the spread of the final function
#
# The toy is the matrix analogue of T1's: softmax regression whose logits use the *unit rows* of $W\in\mathbb R^{k\times d}$,
# $\text{logit}_{ij}=s\langle x_i,w_j/\|w_j\|\rangle$. Each row is scale invariant, like a linear layer followed by a per-channel
# normalization. We train from each $\sigma$ with the same batches and the same number of steps, using three optimizers:
#
# * Muon with decoupled decay;
# * Muon without decay;
# * plain SGD at a learning rate that trains well from $\sigma=1$.
#
# The pass criteria:
#
# * $\|W_k\|_{\rm op}\le e^{-T_{L_2}(k)}\|W_0\|_{\rm op}+s_{\max}/\lambda$ at **every** step;
# * the test accuracy spread across $\sigma$ is below 2 points for Muon with decay and above 20 points for SGD.

# %%
sig = np.array(sigmas)
W0 = helpers.init_scaled(problem.shape, sig, seed=seed)
op0 = optimizers.operator_norm(W0)
runs = {
    "Muon + decay": optimizers.muon(problem, W0, muon_eta, batch, steps, lam=muon_lam, seed=seed, record_every=steps),
    "Muon, no decay": optimizers.muon(problem, W0, muon_eta, batch, steps, lam=0.0, seed=seed, record_every=steps),
    "SGD": optimizers.sgd(problem, W0, sgd_eta, batch, steps, seed=seed, record_every=steps),
}
T_L2 = helpers.clocks(muon_eta, steps, batch, muon_lam)["T_L2"]
bound = np.exp(-T_L2)[:, None] * op0[None, :] + s_max / muon_lam
op_path = runs["Muon + decay"].extra["op_norm"]  # ||W_k||_op after every step, shape (steps, R)
margin = float(np.min(bound - op_path))
acc = {name: 100 * problem.accuracy(tr.final, X_test, y_test) for name, tr in runs.items()}
proba = {name: problem.predict_proba(tr.final, X_test) for name, tr in runs.items()}
ref = int(np.argmin(np.abs(sig - 1.0)))
tv = {name: 0.5 * np.abs(p - p[ref]).sum(-1).mean(-1) for name, p in proba.items()}  # mean total variation vs sigma = 1
spread = {name: float(np.ptp(a)) for name, a in acc.items()}
print(
    f"initial ||W||_op: {np.round(op0, 2)};  T_adapt = {muon_eta * steps:g}, T_L2 = {T_L2[-1]:.1f}, "
    f"ball radius s_max / lam = {s_max / muon_lam:.1f}"
)
print(
    f"Muon + decay: final ||W||_op {np.round(op_path[-1], 2)}; "
    f"min over steps of (bound - ||W_k||_op) = {margin:.3f} (pass: ≥ 0)"
)
for name in runs:
    print(
        f"{name:15s} test accuracy per sigma {np.round(acc[name], 1)}  spread {spread[name]:5.1f} pp;"
        f"  mean TV to the sigma = 1 predictor {np.round(tv[name], 3)}"
    )
assert margin >= 0 and spread["Muon + decay"] < 2 and spread["SGD"] > 20
glue("t7_bound_margin", margin, display=False)
glue("t7_T_L2", float(T_L2[-1]), display=False)
glue("t7_ball_radius", float(s_max / muon_lam), display=False)
glue("t7_final_op_max", float(op_path[-1].max()), display=False)
glue("t7_spread_muon", spread["Muon + decay"], display=False)
glue("t7_spread_muon_nowd", spread["Muon, no decay"], display=False)
glue("t7_spread_sgd", spread["SGD"], display=False)
glue("t7_op0_max", float(op0.max()), display=False)
glue("t7_budget", float(s_max * muon_eta * steps), display=False)
glue("t7_tv_muon_max", float(tv["Muon + decay"].max()), display=False)
glue("t7_tv_sgd_max", float(tv["SGD"].max()), display=False)

# %%
fig, (axes,), keys = style.panels(2, legend="each")  # one row of panels
ax = axes[0]
Tk = T_L2
for j, s in enumerate(sigmas):
    ax.semilogy(Tk, op_path[:, j], color=f"C{j}", label=rf"$\sigma={s:g}$")
    ax.semilogy(Tk, bound[:, j], color=f"C{j}", ls=":", lw=1)
ax.axhline(s_max / muon_lam, color="k", ls="--", lw=1, label=r"ball radius $s_{\max}/\lambda$")
ax.set(
    xlabel=r"$T_{L_2}=\lambda\sum\eta$",
    ylabel=r"$\|W_k\|_{op}$",
    title="Muon + decay: spectral norm\nand its bound (dotted)",
)
style.legend_in(keys[0], ax)
ax = axes[1]
for (name, a_), marker in zip(acc.items(), "os^"):
    ax.semilogx(sig, a_, marker + "-", label=f"{name} (spread {spread[name]:.1f} pp)")
ax.set(xlabel=r"init scale $\sigma$", ylabel="test accuracy (%)", title=f"same {steps} steps from every $\\sigma$")
style.legend_in(keys[1], ax)
page.figure(fig, "t7_fig", source)

# %% [markdown]
# **Reading the figure.** Left: from every scale the spectral norm stays below $e^{-T_{L_2}}\|W_0\|_{\rm op}+s_{\max}/\lambda$ at every
# step (smallest margin {glue:text}`t7_bound_margin:.2f`). All runs end well inside the ball, at $\|W\|_{\rm op}\le$
# {glue:text}`t7_final_op_max:.2f` against a radius of {glue:text}`t7_ball_radius:.1f`. The bound is loose but *uniform in
# $\sigma$*, and that is what matters. Right: after the same number of steps, Muon with decay gives the same test accuracy
# from every scale (spread {glue:text}`t7_spread_muon:.2f` points; predictive distributions within a total variation of
# {glue:text}`t7_tv_muon_max:.3f` of the $\sigma=1$ run). Without decay the spread is {glue:text}`t7_spread_muon_nowd:.1f`
# points, almost all of it from the largest scale. Its initial spectral norm, {glue:text}`t7_op0_max:.0f`, is comparable to
# the whole displacement budget $s_{\max}T_{\rm adapt}$ = {glue:text}`t7_budget:.0f`. As predicted, the budget alone does not
# erase it, while the $e^{-T_{L_2}}$ damping of decay does. SGD at a learning rate that works from $\sigma=1$ keeps a spread of {glue:text}`t7_spread_sgd:.0f`
# points: its effective learning rate at $\sigma=30$ is 900 times smaller.
#
# ## Synthesis: a phase diagram of forgetting
#
# Every optimizer in this chapter comes with a quantity that its idealized flow conserves, something that breaks the
# conservation, a clock that measures how much breaking has accumulated, and a criterion for when the initialization
# scale of a BatchNorm block is forgotten.
#
# | Optimizer | Conserved in the idealized flow | Broken by | Clock | Forgets when (BN block) | Checked in |
# |---|---|---|---|---|---|
# | SGD, small $\eta$, no WD | $\Vert w\Vert ^2$ (Euclidean gradient flow) | finite step + minibatch noise | $\sum\eta^2$, $T_{\rm SGD}$ | $2\,\overline{\operatorname{tr}\Sigma}\,T_{\rm SGD}\gtrsim\Vert w_0\Vert ^4$ | T2, T3, T4 |
# | SGD + L2/WD | — | explicit decay | $T_{L_2}$ | $T_{L_2}\gtrsim\ln(\Vert w_0\Vert /\Vert w_*\Vert )$ | T5 |
# | Adam/AdamW | $w^\top Pw$ only while $P$ is frozen | adaptive $P$, fixed-size steps | $T_{\rm adapt}$ (or $\sum\eta^2$); + $T_{L_2}$ | $T_{\rm adapt}\gtrsim\sigma_w$ (coherent) | T6 |
# | Muon | — (spectral steepest descent) | fixed spectral step | $T_{\rm adapt}$ (spectral); + $T_{L_2}$ | $s\,T_{\rm adapt}\gtrsim\Vert W_0\Vert _{\rm op}$ | T7 |
#
# Read row by row, the table predicts what the experiments measure.
#
# * **Low-learning-rate SGD remembers** (C1). Its clock $T_{\rm SGD}$ is quadratic in $\eta$ and divided by $b$. It stops
#   ticking once the network interpolates (T4), so longer training does not help (C3), and larger batches slow it further (C5).
# * **Larger learning rates with L2 forget** (C4). $T_{L_2}$ is linear in $\eta$, and the forgetting threshold is only
#   logarithmic in $\sigma_w$ (T5).
# * **Adaptive methods forget** (C2). Their step does not shrink with the norm, and $T_{\rm adapt}$ is linear in $\eta$. A typical
#   run's $T_{\rm adapt}$ dwarfs the scale of the initial coordinates (T6, T7). With decoupled decay (AdamW, Muon with
#   $\lambda>0$) their final norms settle at equilibria set by $\eta$, $\lambda$ and the block size; without decay (Adam) the norm
#   grows like a random walk of the steps, to a size that dwarfs $\sigma_w$. Either way it no longer follows $\sigma_w$ (C7).
#
# A direct test on the ResNet runs is to compute all three clocks for every configuration of the sweep and plot the
# spread across $\sigma_w$ against each. Each optimizer family should collapse when plotted against *its* clock, with the
# transition where the clock reaches the scale in the last column. The caveats of T1 remain: the classifier head and the
# other non-invariant layers carry a second, kernel-regime channel of memory {cite}`chizat2019lazy,woodworth2020kernel`,
# which these norm laws do not describe.
