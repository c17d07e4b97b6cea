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
# # T3. Backward error analysis: where the $\sum\eta^2$ and $T_{\rm SGD}$ clocks come from
#
# Gradient flow remembers (T2). A real optimizer takes finite, noisy steps. *Backward error analysis* (BEA) makes the
# difference precise. Instead of asking how far the discrete iterates drift from the flow, it asks which *other* flow
# they follow more accurately. The answer is the gradient flow of a **modified loss**, which equals the original loss plus
# small implicit regularizers proportional to the step size. Summed over a run, these regularizers give the forgetting
# clocks of the paper {cite}`das2026forget`:
#
# $$
# \sum_k\eta_k^2\quad(\text{finite steps}),\qquad T_{\rm SGD}=\frac1b\sum_k\eta_k^2\quad(\text{minibatch noise}).
# $$
#
# This notebook derives the modified losses for gradient descent, for SGD with random reshuffling, and for heavy-ball
# momentum. It then checks each one on a toy, measuring the order of the error on log–log plots.
#
# ## Gradient descent: implicit gradient regularization
#
# Gradient descent $\theta_{n+1}=\theta_n-h\nabla E(\theta_n)$ is the Euler discretization of $\dot\theta=-\nabla E$, with a local error
# $O(h^2)$. Look for a modified vector field $f=f_0+hf_1+O(h^2)$ whose exact time-$h$ flow reproduces one GD step to $O(h^3)$.
#
# 1. Taylor expansion of the flow: $\theta(h)=\theta+hf(\theta)+\frac{h^2}{2}(\partial f)f+O(h^3)$.
# 2. Substituting $f=f_0+hf_1$: $\theta(h)=\theta+hf_0+h^2\big(f_1+\tfrac12(\partial f_0)f_0\big)+O(h^3)$.
# 3. Matching $\theta-h\nabla E$ at $O(h)$: $f_0=-\nabla E$.
# 4. Matching at $O(h^2)$: $f_1=-\tfrac12(\partial f_0)f_0=-\tfrac12H\nabla E$, with $H=\nabla^2E$.
# 5. Since $H\nabla E=\tfrac12\nabla\|\nabla E\|^2$, the modified field is a gradient:
#
# $$
# \dot\theta=-\nabla\tilde E(\theta),\qquad \tilde E=E+\frac h4\,\|\nabla E\|^2 .
# $$
#
# This is the *implicit gradient regularization* (IGR) of Barrett & Dherin {cite}`barrett2021igr`: GD descends a loss that
# penalizes large gradients. GD stays $O(h)$ from the original flow but $O(h^2)$ from the modified one, over a fixed time
# horizon. The series is an expansion in $h\lambda_{\max}(H)$. Beyond first order the correction is in general not a gradient.
#
# **Clock.** With a varying step $\eta_k$, the displacement caused by the correction over a run is
# $\sum_k\eta_k\cdot\frac{\eta_k}{4}\nabla\|\nabla E\|^2\approx\frac14\big(\sum_k\eta_k^2\big)\nabla\|\nabla E\|^2$ (for a slowly varying
# $\nabla\|\nabla E\|^2$). Finite-step effects accumulate on a $\sum\eta^2$ clock. Gradient-flow time is $\sum\eta$. The
# gradient-flow limit, $\eta\to0$ at fixed $\sum\eta$, sends this clock to zero.
#
# ## SGD with random reshuffling: the minibatch-variance term
#
# Now take SGD without replacement. Each epoch partitions the $N$ samples into $m=N/B$ minibatches of size $B$ and visits
# them in random order, with step $\epsilon$. Smith, Dherin, Barrett & De {cite}`smith2021origin` show that the **mean** iterate
# after one epoch follows the gradient flow, over time $m\epsilon$, of a modified loss with a term proportional to $\epsilon/B$. Here is our
# reconstruction of the argument, in the standard form (their paper's notation and constants should be checked before
# quoting them).
#
# *One epoch to second order.* With $\hat C_k$ the $k$-th minibatch loss and everything evaluated at $\omega_0$,
#
# $$
# \omega_m=\omega_0-\epsilon\sum_k\nabla\hat C_k+\epsilon^2\sum_{j<k}\hat H_k\nabla\hat C_j+O(\epsilon^3).
# $$
#
# The minibatches partition the data, so $\sum_k\nabla\hat C_k=m\nabla C$ whatever the order. In a random order each pair $j\ne k$ is
# visited either way with probability $\frac12$, so the mean of the $\epsilon^2$ term is
# $\frac12\sum_{j\ne k}\hat H_k\nabla\hat C_j=\frac{m^2}2H\nabla C-\frac12\sum_k\hat H_k\nabla\hat C_k$. A flow $\dot\omega=-\nabla\tilde C$ run for time
# $m\epsilon$ gives $\omega_0-m\epsilon\nabla\tilde C+\frac{m^2\epsilon^2}{2}H\nabla C+O(\epsilon^3)$. Matching the two,
#
# $$
# \begin{aligned}
# \tilde C_{\rm SGD}&=C+\frac{\epsilon}{4m}\sum_{k=0}^{m-1}\|\nabla\hat C_k\|^2\\
# &=C+\frac\epsilon4\|\nabla C\|^2+\frac{\epsilon}{4m}\sum_k\|\nabla\hat C_k-\nabla C\|^2 .
# \end{aligned}
# $$
#
# The cross term vanished because $\sum_k(\nabla\hat C_k-\nabla C)=0$. Averaging over the random partition, a minibatch mean of
# $B$ samples drawn without replacement has variance $\frac{N-B}{N-1}\frac{\Gamma}{B}$, where
# $\Gamma(\omega)=\frac1N\sum_i\|\nabla C_i-\nabla C\|^2=\operatorname{tr}\Sigma(\omega)$. Hence
#
# $$
# \mathbb E\,\tilde C_{\rm SGD}=C+\frac\epsilon4\|\nabla C\|^2+\frac{N-B}{N-1}\,\frac{\epsilon}{4B}\,\Gamma .
# $$
#
# For $B\ll N$ the new term is $\frac{\epsilon}{4B}\operatorname{tr}\Sigma$. Its strength is set by the ratio of learning rate to batch size.
#
# **Clock.** Integrating this drift over a run, in step units, gives
# $\sum_k\eta_k\cdot\frac{\eta_k}{4b}\nabla\Gamma=\frac14\Big(\frac1b\sum_k\eta_k^2\Big)\nabla\Gamma=\frac14\,T_{\rm SGD}\,\nabla\Gamma$. So $T_{\rm SGD}$ measures
# exactly how much of the minibatch-variance regularizer has acted.
#
# Two related views support the same clock. The stochastic modified equation of Li, Tai & E {cite}`li2017sme` models SGD as a
# diffusion with temperature $\eta/b$. Noise-driven motion then accumulates like $\sum\eta^2/b$, even for with-replacement
# sampling, where the mean drift above vanishes at this order. Beneventano {cite}`beneventano2023trajectories` analyses SGD
# without replacement at larger $\eta\lambda$. He finds that along flat directions it regularizes the trace of the noise
# covariance, i.e. it descends $\Gamma$.
#
# ## Heavy-ball momentum: the factor $\frac{1+\beta}{1-\beta}$
#
# In the EMA convention $m_{k+1}=\beta m_k+(1-\beta)g_k$, $\theta_{k+1}=\theta_k-\eta m_{k+1}$ (so $\eta$ is the effective learning rate),
# heavy ball follows, to first order and after its transient, the modified flow
#
# $$
# \frac{d\theta}{dk}=-\eta\,\nabla\Big[L+\frac\eta4\,\frac{1+\beta}{1-\beta}\,\|\nabla L\|^2\Big].
# $$
#
# The implicit regularizer is stronger than GD's by $\frac{1+\beta}{1-\beta}$, as Ghosh et al. {cite}`ghosh2023momentum` show. This is
# 19 at $\beta=0.9$. The check on one quadratic mode $L=\frac\lambda2\theta^2$ is exact. With $h=\eta(1-\beta)$ the iteration
# $\theta_{k+1}=(1+\beta-h\lambda)\theta_k-\beta\theta_{k-1}$ has characteristic roots $\mu^2-(1+\beta-h\lambda)\mu+\beta=0$. The slow root expands as
#
# $$
# \begin{gathered}
# \mu=1-\frac{h\lambda}{1-\beta}-\frac{\beta(h\lambda)^2}{(1-\beta)^3}+\dots\\
# \Longrightarrow\quad
# -\ln\mu=\eta\lambda\Big[1+\frac{\eta\lambda}{2}\,\frac{1+\beta}{1-\beta}+O(\eta^2\lambda^2)\Big],
# \end{gathered}
# $$
#
# and this is exactly the decay rate of the modified flow on that mode. The result holds for overdamped modes only
# (real roots). Underdamped modes ring and have no first-order modified loss.

# %% tags=["parameters"]
seed = 0
# check 1: GD vs flows on E(a, b) = (ab - 1)^2 / 2 + c a^2
c_reg = 0.05
theta0 = [2.0, 0.5]
horizon = 3.0
gd_steps_sizes = [0.1, 0.05, 0.025, 0.0125]
# check 2: one epoch of SGD without replacement, linear regression
n_samples = 64
dim = 4
batch = 8
epsilons = [0.04, 0.02, 0.01, 0.005]
reshuffles = 20000  # random permutations (each paired with its reverse)
# check 3: heavy ball on one quadratic mode
betas = [0.5, 0.9]
eta_lams = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2]

# %%
import numpy as np
from myst_nb import glue

from initmem.book import page
from initmem.study.presentation.plots import style
from initmem.theory import backward_error, helpers

style.use_book_style()  # SVG figures, legible in the book
source = page.source_note("T3_backward_error", sources=[])  # under every figure

glue("t3_n_samples", n_samples, display=False)  # used in the text below
glue("t3_batch", batch, display=False)

# %% [markdown]
# ## Check 1: GD is first-order close to gradient flow and second-order close to the IGR flow
#
# The toy is $E(a,b)=\frac12(ab-1)^2+c\,a^2$, a two-parameter model with a curved valley. We run GD to time $T$ with decreasing
# $h$ and compare with the exact flows (`scipy` DOP853 at tolerance $10^{-12}$).

# %%
toy = backward_error.TwoParamToy(c=c_reg)
th0 = np.array(theta0)
gf_end = backward_error.flow_endpoint(backward_error.igr_field(toy.grad, toy.hess, 0.0), th0, horizon)
err_gf, err_mod = [], []
for h in gd_steps_sizes:
    gd_end = backward_error.gd_endpoint(toy.grad, th0, h, int(round(horizon / h)))
    mod_end = backward_error.flow_endpoint(backward_error.igr_field(toy.grad, toy.hess, h), th0, horizon)
    err_gf.append(np.linalg.norm(gd_end - gf_end))
    err_mod.append(np.linalg.norm(gd_end - mod_end))
    print(f"h = {h:<7} |GD - GF| = {err_gf[-1]:.2e}   |GD - modified flow| = {err_mod[-1]:.2e}")
slope_gf = helpers.loglog_slope(gd_steps_sizes, err_gf)
slope_mod = helpers.loglog_slope(gd_steps_sizes, err_mod)
print(f"measured orders: vs gradient flow {slope_gf:.2f} (expected 1), vs IGR flow {slope_mod:.2f} (expected 2)")
assert abs(slope_gf - 1) < 0.15 and abs(slope_mod - 2) < 0.15
glue("t3_gd_gf_slope", slope_gf, display=False)
glue("t3_gd_mod_slope", slope_mod, display=False)

# %% [markdown]
# ## Check 2: the mean SGD epoch follows the flow of $\mathbb E\,\tilde C_{\rm SGD}$
#
# Linear regression with $N$ = {glue:text}`t3_n_samples` samples, $B$ = {glue:text}`t3_batch`. For each $\epsilon$ we average the
# iterate after one epoch over many random reshufflings (`backward_error.sgd_epoch_mean`; each permutation is paired with its reverse,
# which is equally likely and cancels most of the order-dependent variance). We compare the average with three flows run
# for time $m\epsilon$, all solved exactly, since the modified gradients are affine in $\omega$:
#
# * the plain gradient flow of $C$;
# * the IGR flow of $C+\frac\epsilon4\|\nabla C\|^2$, which is full-batch BEA without the noise term;
# * the flow of $\mathbb E\,\tilde C_{\rm SGD}$, with the $\frac{N-B}{N-1}\frac{\epsilon}{4B}\Gamma$ term.
#
# The prediction: errors $O(\epsilon^2)$, $O(\epsilon^2)$ and $O(\epsilon^3)$. Only the full modified loss is accurate to
# third order, so the minibatch-variance term is real and its coefficient is right.

# %%
reg = backward_error.make_linear_regression(n_samples, dim, seed=seed)
w0 = np.linspace(1.0, -1.0, dim) * 2.0
m = n_samples // batch
labels = {"plain": "plain flow", "igr": "IGR flow (no noise term)", "full": r"flow of $\mathbb{E}\tilde C_{SGD}$"}
errs = {key: [] for key in labels}
sems = []
for eps in epsilons:
    mean_end, sem = backward_error.sgd_epoch_mean(reg, w0, eps, batch, reshuffles, seed=seed)
    flows = {
        "plain": backward_error.linear_flow_endpoint(reg.H, reg.cbar, w0, m * eps),
        "igr": backward_error.linear_flow_endpoint(
            *reg.modified_linear_field(eps, batch, igr=True, noise=False), w0, m * eps
        ),
        "full": backward_error.linear_flow_endpoint(*reg.modified_linear_field(eps, batch), w0, m * eps),
    }
    for key, end in flows.items():
        errs[key].append(np.linalg.norm(mean_end - end))
    sems.append(np.linalg.norm(sem))
    print(
        f"eps = {eps:<6} errors: plain {errs['plain'][-1]:.2e}, IGR only {errs['igr'][-1]:.2e}, "
        f"full {errs['full'][-1]:.2e}   (Monte Carlo s.e. {sems[-1]:.1e})"
    )
sgd_slopes = {key: helpers.loglog_slope(epsilons, e) for key, e in errs.items()}
s_plain, s_igr, s_full = sgd_slopes["plain"], sgd_slopes["igr"], sgd_slopes["full"]
print(
    f"measured orders: plain {s_plain:.2f}, IGR only {s_igr:.2f} (expected 2); "
    f"full modified loss {s_full:.2f} (expected 3)"
)
assert abs(s_plain - 2) < 0.2 and abs(s_igr - 2) < 0.2 and s_full > 2.7
assert np.all(np.array(sems) < 0.3 * np.array(errs["full"]))  # Monte Carlo noise is well below each measured error
glue("t3_sgd_plain_slope", s_plain, display=False)
glue("t3_sgd_igr_slope", s_igr, display=False)
glue("t3_sgd_mod_slope", s_full, display=False)

# %% [markdown]
# ## Check 3: the heavy-ball slow root
#
# We compute the exact slow root $\mu$ for several $\eta\lambda$ and compare the per-step decay rate $-\ln\mu/(\eta\lambda)$ with
# two predictions. Plain gradient flow predicts 1. The momentum-modified flow predicts
# $1+\frac{\eta\lambda}2\frac{1+\beta}{1-\beta}$. A short simulation confirms that the iteration really decays at the slow root's rate.

# %%
eta_lam = np.array(eta_lams)
hb = {}
for beta in betas:
    rate = -np.log(backward_error.heavy_ball_slow_root(eta_lam, beta)) / eta_lam
    pred = backward_error.heavy_ball_rate_prediction(eta_lam, beta)
    hb[beta] = (np.abs(rate - 1), np.abs(rate - pred))
    print(f"beta = {beta}: -ln(mu)/(eta lam) = {np.round(rate, 6)};  prediction {np.round(pred, 6)}")

beta, el = 0.9, 1e-3  # simulate heavy ball (EMA form) on L = theta^2 / 2 with eta = 1e-3
theta, mom, traj = 1.0, 0.0, []
for _ in range(20000):
    mom = beta * mom + (1 - beta) * theta
    theta -= el * mom
    traj.append(theta)
sim_rate = -np.polyfit(np.arange(10000, 20000), np.log(np.abs(traj[10000:])), 1)[0] / el
root_rate = float(-np.log(backward_error.heavy_ball_slow_root(el, beta)) / el)
print(f"simulated decay rate / (eta lam) = {sim_rate:.6f}, slow root gives {root_rate:.6f}")

hb_plain = np.mean([helpers.loglog_slope(eta_lam, hb[b][0]) for b in betas])
hb_mod = np.mean([helpers.loglog_slope(eta_lam, hb[b][1]) for b in betas])
print(
    f"measured orders (mean over beta): vs plain flow {hb_plain:.2f} (expected 1), "
    f"vs modified flow {hb_mod:.2f} (expected 2)"
)
assert abs(hb_plain - 1) < 0.1 and abs(hb_mod - 2) < 0.15 and abs(sim_rate - root_rate) < 1e-6
glue("t3_hb_plain_slope", float(hb_plain), display=False)
glue("t3_hb_mod_slope", float(hb_mod), display=False)
glue("t3_hb_rate_beta09", root_rate, display=False)
glue("t3_hb_pred_beta09", float(backward_error.heavy_ball_rate_prediction(el, beta)), display=False)

# %%
fig, (axes,), keys = style.panels(3, legend="each")  # one row of panels
ax = axes[0]
ax.loglog(gd_steps_sizes, err_gf, "o-", label=f"GD vs gradient flow (slope {slope_gf:.2f})")
ax.loglog(gd_steps_sizes, err_mod, "s-", label=f"GD vs IGR flow (slope {slope_mod:.2f})")
ax.set(xlabel="step $h$", ylabel=r"$\|\theta_{T/h}-\theta(T)\|$", title="check 1: gradient descent")
style.legend_in(keys[0], ax)
ax = axes[1]
for (key, e), marker in zip(errs.items(), "o^s"):
    ax.loglog(epsilons, e, marker + "-", label=f"{labels[key]} (slope {sgd_slopes[key]:.2f})")
ax.loglog(epsilons, sems, "k:", label="Monte Carlo s.e.")
ax.set(xlabel=r"step $\epsilon$", ylabel="error of the mean epoch iterate", title="check 2: SGD,\nrandom reshuffling")
style.legend_in(keys[1], ax)
ax = axes[2]
for color, (beta, (e_plain, e_mod)) in zip(("C0", "C1"), hb.items()):
    ax.loglog(eta_lam, e_plain, "o-", color=color, label=rf"$\beta={beta}$ vs plain flow")
    ax.loglog(eta_lam, e_mod, "s--", color=color, label=rf"$\beta={beta}$ vs modified flow")
ax.set(
    xlabel=r"$\eta\lambda$",
    ylabel=r"$|{-\ln\mu}/(\eta\lambda)-\mathrm{prediction}|$",
    title="check 3: heavy-ball\nslow root",
)
style.legend_in(keys[2], ax)
for ax, ticks in zip(axes[:2], (gd_steps_sizes[::2], epsilons[::2])):  # every other: no overlap
    ax.minorticks_off()
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
axes[2].minorticks_off()
axes[2].set_xticks(eta_lams[::2], [f"$10^{{{np.log10(t):.0f}}}$" for t in eta_lams[::2]])
page.figure(fig, "t3_fig", source)

# %% [markdown]
# **Reading the figure.** Each panel compares a discrete optimizer with two continuous models, and the measured orders
# match the theory. For GD the error against gradient flow is first order (slope {glue:text}`t3_gd_gf_slope:.2f`) and
# against the IGR flow second order ({glue:text}`t3_gd_mod_slope:.2f`). For SGD the plain and the IGR-only flows are both
# second order ({glue:text}`t3_sgd_plain_slope:.2f`, {glue:text}`t3_sgd_igr_slope:.2f`). Adding the minibatch-variance term,
# with its $\frac{N-B}{N-1}$ factor, raises the order to {glue:text}`t3_sgd_mod_slope:.2f`. For heavy ball at $\beta=0.9$ and
# $\eta\lambda=10^{-3}$ the exact rate is {glue:text}`t3_hb_rate_beta09:.6f` against {glue:text}`t3_hb_pred_beta09:.6f` from the
# modified flow. The remaining discrepancy is $O(\eta^2\lambda^2)$ (slope {glue:text}`t3_hb_mod_slope:.2f`).
#
# ## From modified losses to forgetting clocks
#
# The modified losses are *where* a discrete optimizer departs from gradient flow, and the sums of their coefficients are
# *how much* it has departed:
#
# | Effect | Modified-loss term per step | Accumulated over a run |
# |---|---|---|
# | finite step (GD) | $\frac{\eta}{4}\Vert \nabla L\Vert ^2$ | $\frac14\sum_k\eta_k^2\,\nabla\Vert \nabla L\Vert ^2$ |
# | minibatch noise (SGD, without replacement) | $\frac{N-b}{N-1}\frac{\eta}{4b}\operatorname{tr}\Sigma$ | $\approx\frac14\,T_{\rm SGD}\,\nabla\operatorname{tr}\Sigma$ |
# | heavy-ball momentum $\beta$ | both terms $\times\frac{1+\beta}{1-\beta}$ | same clocks, larger constant |
#
# The gradient-flow limit sends both clocks to zero at fixed $\sum\eta$. In that limit the conservation law of T2 holds
# and memory is perfect. T4 shows that for scale-invariant weights these corrections do something very specific: they
# are *exactly* what makes the norm grow. The $T_{\rm SGD}$ clock then becomes an exact law for how fast a BatchNorm block
# forgets $\sigma_w$.
