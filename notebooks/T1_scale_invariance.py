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
# # T1. Scale invariance: the initialization scale is a learning rate
#
# The paper {cite}`das2026forget` asks whether a trained network still depends on the scale $\sigma_w$ of its random
# initialization. Every convolution and linear kernel is drawn as $W\sim\mathcal N(0,\sigma_w^2/\text{fan-in})$, and the
# *initialization memory* is the dependence of the validation-selected predictor on $\sigma_w$. Its size is the
# spread (max minus min over $\sigma_w$) of that predictor's test accuracy.
#
# This raises a puzzle. In a BatchNorm network almost every kernel feeds a normalization layer. Multiplying such a kernel
# by $c>0$ multiplies the pre-activations by $c$, and BatchNorm divides the factor out again. At initialization, then,
# $\sigma_w$ does not change the function the network computes. How can the trained network remember something
# that the initial function does not depend on? This notebook answers the question. For scale-invariant weights,
# $\sigma_w$ is exactly a **learning-rate reparametrization**. A BatchNorm block that remembers $\sigma_w$ is a block
# whose trajectory still depends on an effective learning rate.
#
# ## Three identities of a scale-invariant loss
#
# Let $L(cw)=L(w)$ for all $c>0$. Under BatchNorm this holds for every minibatch loss $\hat L_k$ as well (the
# normalization uses the batch's own statistics). Three identities follow by differentiation.
#
# 1. Differentiate $L(cw)=L(w)$ in $c$ at $c=1$: $\langle w,\nabla L(w)\rangle=0$. **The gradient is orthogonal to the weight.**
# 2. Differentiate in $w$: $c\,\nabla L(cw)=\nabla L(w)$, i.e. $\nabla L(cw)=c^{-1}\nabla L(w)$. **The gradient shrinks like $1/\|w\|$.**
# 3. Differentiate identity 1 in $w$: $\nabla L(w)+H(w)\,w=0$, i.e. $H(w)\,w=-\nabla L(w)$. Also $H(cw)=c^{-2}H(w)$.
#
# Identity 3 is the one that backward error analysis will use in T3 and T4.
#
# ## The effective learning rate
#
# Write $w=r\hat w$ with $r=\|w\|$. By identities 1 and 2, an SGD step $w'=w-\eta\nabla\hat L(w)$ is purely tangential, of length
# $\frac{\eta}{r}\|\nabla\hat L(\hat w)\|$. To first order it moves the direction by
#
# $$
# \hat w'-\hat w\;\approx\;-\frac{\eta}{\|w\|^2}\,\big(I-\hat w\hat w^\top\big)\nabla\hat L(\hat w),
# \qquad
# \eta_{\rm eff}=\frac{\eta}{\|w\|^2}.
# $$
#
# The direction, which is all the network sees, moves with learning rate $\eta/\|w\|^2$. The norm acts as a
# learning-rate knob. This observation goes back to the analyses of normalization and weight decay by
# {cite}`vanlaarhoven2017l2`, {cite}`hoffer2018norm` and {cite}`zhang2019three`. It is also behind the "auto rate-tuning" of
# {cite}`arora2019autorate`.
#
# ## The initialization scale is a learning-rate reparametrization
#
# Take $w_0=\sigma\tilde w_0$ and feed the *same* minibatch sequence to two runs. SGD with L2 decay reads
# $w_{k+1}=(1-\eta\lambda)w_k-\eta\nabla\hat L_k(w_k)$. Suppose $w_k=\sigma\tilde w_k$. Identity 2 gives
#
# $$
# w_{k+1}=\sigma\Big[(1-\eta\lambda)\tilde w_k-\frac{\eta}{\sigma^2}\nabla\hat L_k(\tilde w_k)\Big],
# $$
#
# and the bracket is one SGD step from $\tilde w_k$ with learning rate $\eta/\sigma^2$ and decay $\sigma^2\lambda$ (the
# product $\eta\lambda$ is unchanged). By induction,
#
# $$
# \begin{gathered}
# \mathrm{SGD}(\sigma,\eta,\lambda)\;\equiv\;\mathrm{SGD}\big(1,\ \eta/\sigma^2,\ \sigma^2\lambda\big),\\
# w_k=\sigma\,\tilde w_k\ \text{ exactly, for every }k .
# \end{gathered}
# $$
#
# For Adam the gradients of the $\sigma$-run are $1/\sigma$ times those of the unit run. So its first moment is $1/\sigma$ times
# larger than the unit run's and its second moment $1/\sigma^2$ times. The update of the $\sigma$-run is therefore
#
# $$
# \eta\,\frac{\hat m_k/\sigma}{\sqrt{\hat v_k}/\sigma+\epsilon}=\frac{\eta}{\sigma}\cdot\sigma\,\frac{\hat m_k}{\sqrt{\hat v_k}+\sigma\epsilon},
# $$
#
# (hats: the unit run's bias-corrected moments) and the same induction gives, with decoupled decay $\lambda$,
#
# $$
# \mathrm{Adam}(\sigma,\eta,\lambda,\epsilon)\;\equiv\;\mathrm{Adam}\big(1,\ \eta/\sigma,\ \sigma\lambda,\ \sigma\epsilon\big).
# $$
#
# The $\epsilon$ of the unit run must be *multiplied* by $\sigma$. The equivalence is exact only if $\epsilon$ is rescaled,
# or in the limit $\epsilon\to0$. In both cases the product $\eta\lambda$ is invariant; {cite}`li2020intrinsic` call it the *intrinsic learning rate*.
#
# **Consequence.** On the scale-invariant part of a network, "the trained model remembers $\sigma_w$" means "the
# trajectory still depends on the effective learning rate $\eta/\sigma_w^2$ (SGD) or $\eta/\sigma_w$ (Adam)". Large
# $\sigma_w$ means a tiny effective learning rate under SGD, and that is where memory lives. Under Adam the effect
# is only linear in $\sigma_w$. The later notebooks ask how fast the dynamics erase this initial learning-rate offset.

# %% tags=["parameters"]
seed = 0  # data and initial direction
N = 512  # toy: number of samples
d = 50  # toy: dimension
temperature = 5.0  # toy: logit scale s
sigma = 5.0  # init scale compared against sigma = 1
eta_sgd = 0.2  # SGD learning rate of the sigma-run
lam = 1e-3  # weight decay of the sigma-run (SGD with decay)
eta_adam = 0.01  # Adam learning rate of the sigma-run
eps_big = 1e-3  # an Adam epsilon large enough to show what happens if it is not rescaled
batch = 8
steps = 1000
sigma_sweep = [4.0, 8.0, 16.0, 32.0, 64.0]  # for the angular-step scaling
angle_steps = 10  # steps over which the angular step is averaged
bn_sigmas = [0.25, 0.5, 2.0, 4.0]  # BN-MLP: powers of two, so initial kernels are exact multiples
bn_steps = 40
bn_eta = 0.05

# %%
import numpy as np
from myst_nb import glue

from initmem.book import page
from initmem.study.presentation.plots import style
from initmem.theory import checks, helpers, optimizers, toys

style.use_book_style()  # SVG figures, legible in the book
source = page.source_note("T1_scale_invariance", sources=[])  # under every figure

problem = toys.make_normalized_logistic(N=N, d=d, s=temperature, seed=seed)
w_unit = helpers.init_scaled(problem.shape, [1.0], seed=seed)[0]  # ||w|| ~ 1

# %% [markdown]
# ## Identities and independent checks
#
# The numbers below are of two kinds, and the headings say which.
#
# * An **identity** compares two computations that are algebraically the same, so it holds by construction. It is
#   shown to make the formula concrete, and the only thing it can catch is an error in the code or in float rounding.
# * An **independent check** compares two computations that could disagree: a finite-difference derivative of the loss
#   against its closed-form gradient, or a PyTorch network with real BatchNorm layers, trained by
#   `torch.optim.SGD`, against the prediction of the toy's law.
#
# ## The three identities on a toy (identities: they hold by construction)
#
# The toy is logistic regression on the direction of $w$ (Appendix A of the theory notes):
# $L(w)=\frac1N\sum_i\log\big(1+e^{-s\,y_i\langle x_i,w/\|w\|\rangle}\big)$, with Gaussian inputs, teacher labels with
# label noise, and a fixed temperature $s$. It is the one-vector model of a kernel that feeds a BatchNorm. Its gradient is
# computed in closed form (`toys.NormalizedLogistic.grad`), as the gradient at $w/\|w\|$ projected by
# $I-\hat w\hat w^\top$ and divided by $\|w\|$. Identities 1 and 2 are therefore built into the code. Identity 3 follows
# from identity 2 (the Hessian applied to $w$ is the derivative of the gradient along $w$), so with the Hessian taken by
# central differences of the gradient it holds up to the finite-difference error. All three are identities: they hold
# by construction; shown to make the formula concrete.

# %%
batch0 = np.arange(batch)
g = problem.grad(w_unit, batch0)
inner = abs(w_unit @ g) / (np.linalg.norm(w_unit) * np.linalg.norm(g))
homog = np.linalg.norm(problem.grad(3.0 * w_unit, batch0) - g / 3.0) / np.linalg.norm(g / 3.0)

h = 1e-5  # Hessian by central differences of the gradient along each e_j
H = np.stack(
    [(problem.grad(w_unit + h * e, batch0) - problem.grad(w_unit - h * e, batch0)) / (2 * h) for e in np.eye(d)], axis=1
)
hess_identity = np.linalg.norm(H @ w_unit + g) / np.linalg.norm(g)

print(f"|<w, g>| / (|w| |g|)          = {inner:.1e}   (identity 1, by construction; pass: < 1e-12)")
print(f"|g(3w) - g(w)/3| / |g(w)/3|  = {homog:.1e}   (identity 2, by construction; pass: < 1e-12)")
print(f"|H w + g| / |g|  (H by FD)    = {hess_identity:.1e}   (identity 3, by construction; pass: < 1e-6, FD error)")
assert inner < 1e-12 and homog < 1e-12 and hess_identity < 1e-6
glue("t1_inner_product", float(inner), display=False)
glue("t1_hessian_identity", float(hess_identity), display=False)

# %% [markdown]
# ## Independent check: the closed-form gradient against finite differences
#
# The identities above are statements about the loss only if the closed-form gradient is the gradient of the loss.
# That is checked independently: `checks.fd_gradient_error` takes central differences of the loss $L$ itself
# ($h=10^{-6}$, one coordinate at a time) and compares them with the closed-form gradient, as
# $\|g_{\rm FD}-g\|/\|g\|$. We do this on the minibatch above and on the whole data set, at $\|w\|\approx1$ and at
# $\|w\|\approx\sigma$. The pass criterion is $10^{-6}$, well above the finite-difference error and far below any
# real mistake in the formula.

# %%
fd_errors = {
    (s, name): checks.fd_gradient_error(problem, s * w_unit, idx)
    for s in (1.0, sigma)
    for name, idx in (("minibatch", batch0), ("full data", None))
}
for (s, name), err in fd_errors.items():
    print(f"||w|| ~ {s:g}, {name:9s}: |g_FD - g| / |g| = {err:.1e}")
fd_max = max(fd_errors.values())
print(f"pass: max relative error {fd_max:.1e} < 1e-6")
assert fd_max < 1e-6
glue("t1_fd_grad_rel_err", fd_max, display=False)

# %% [markdown]
# The closed-form gradient and the finite-difference gradient of the loss agree to a relative error of at most
# {glue:text}`t1_fd_grad_rel_err:.2g`. That is the size of the finite-difference error itself, so the identities
# shown above are properties of the loss and not only of the code.

# %% [markdown]
# ## $\mathrm{SGD}(\sigma,\eta,\lambda)\equiv\mathrm{SGD}(1,\eta/\sigma^2,\sigma^2\lambda)$ and its Adam analogue (an identity)
#
# On the toy this is an identity: it holds by construction; shown to make the formula concrete. The toy's gradient
# satisfies identity 2 exactly, so the $\sigma$-run and its twin perform the same arithmetic up to the factor $\sigma$.
# Each pair of runs starts from $\sigma\tilde w_0$ and $\tilde w_0$ and uses the same minibatch sequence (`seed`). We compare
# the *directions* $w_k/\|w_k\|$ at every step. The pass criterion is a maximum difference below $10^{-10}$ over the
# whole run. The last pair is a control: it keeps Adam's $\epsilon$ *unscaled* (at a visible value,
# $\epsilon=10^{-3}$), so the equivalence should fail there.

# %%
w_sig = sigma * w_unit
pairs = {
    "SGD, no decay": (
        optimizers.sgd(problem, w_sig, eta_sgd, batch, steps, seed=seed),
        optimizers.sgd(problem, w_unit, eta_sgd / sigma**2, batch, steps, seed=seed),
    ),
    "SGD + L2 decay": (
        optimizers.sgd(problem, w_sig, eta_sgd, batch, steps, lam=lam, seed=seed),
        optimizers.sgd(problem, w_unit, eta_sgd / sigma**2, batch, steps, lam=lam * sigma**2, seed=seed),
    ),
    r"Adam, $\epsilon\to\sigma\epsilon$": (
        optimizers.adam(problem, w_sig, eta_adam, batch, steps, eps=eps_big, seed=seed),
        optimizers.adam(problem, w_unit, eta_adam / sigma, batch, steps, eps=sigma * eps_big, seed=seed),
    ),
    r"Adam, $\epsilon$ not rescaled (control)": (
        optimizers.adam(problem, w_sig, eta_adam, batch, steps, eps=eps_big, seed=seed),
        optimizers.adam(problem, w_unit, eta_adam / sigma, batch, steps, eps=eps_big, seed=seed),
    ),
}
diffs = {name: helpers.direction_difference(a.w[:, 0], b.w[:, 0]) for name, (a, b) in pairs.items()}
for name, dd in diffs.items():
    print(f"{name:45s} max direction difference over {steps} steps: {dd.max():.1e}")

names = list(diffs)
max_sgd, max_sgd_wd, max_adam, max_control = (float(diffs[n].max()) for n in names)
print(
    f"pass: SGD, SGD+L2, Adam(scaled eps) all < 1e-10 -> {max(max_sgd, max_sgd_wd, max_adam):.1e};"
    f" control (unscaled eps) > 1e-6 -> {max_control:.1e}"
)
assert max(max_sgd, max_sgd_wd, max_adam) < 1e-10
assert max_control > 1e-6
glue("t1_max_direction_diff", max(max_sgd, max_sgd_wd), display=False)
glue("t1_sgd_direction_diff", max_sgd, display=False)
glue("t1_sgd_wd_direction_diff", max_sgd_wd, display=False)
glue("t1_adam_direction_diff", max_adam, display=False)
glue("t1_adam_unscaled_eps_diff", max_control, display=False)

# %% [markdown]
# The SGD twins agree to {glue:text}`t1_max_direction_diff:.1e`, with and without decay. That is float rounding:
# the two runs are the same computation up to a factor $\sigma$. Adam with $\epsilon$ rescaled agrees to
# {glue:text}`t1_adam_direction_diff:.1e`. With $\epsilon$ left alone the twins drift apart, to
# {glue:text}`t1_adam_unscaled_eps_diff:.1e`. At the default $\epsilon=10^{-8}$ the mismatch would be far smaller but
# still not zero. $\epsilon$ is the one place where Adam sees the absolute scale of the gradient.
#
# ## How the angular step scales with $\sigma$ (a consequence of the identities)
#
# The equivalence predicts the size of the first steps. On the toy this is again not an independent test: it follows
# from identity 2 (and, for Adam, from its normalized step), up to the small-angle approximation and the drift of the
# gradient statistics over the few steps averaged. It is shown for the size of the effect. Under SGD the direction moves by $\eta\sqrt{G}/\|w\|^2\propto\sigma^{-2}$ per
# step, with $G=\|\nabla\hat L(\hat w)\|^2$. Under Adam the update has a fixed size $\approx\eta$ per coordinate, so the
# direction moves by $\propto\eta/\|w\|\propto\sigma^{-1}$. We measure the mean angle between consecutive iterates over the first few steps (`angle_steps`), before learning
# changes the gradient statistics.

# %%
sig_sweep = np.array(sigma_sweep)
w0_sweep = helpers.init_scaled(problem.shape, sig_sweep, seed=seed)
short = angle_steps
ang_sgd = optimizers.sgd(problem, w0_sweep, eta_sgd, batch, short, seed=seed).extra["angular"].mean(0)
tr_adam = optimizers.adam(problem, w0_sweep, eta_adam, batch, short, seed=seed, record_every=1)
ang_adam = np.mean(
    np.arccos(
        np.clip(
            np.sum(tr_adam.w[1:] * tr_adam.w[:-1], -1) / np.sqrt(tr_adam.sq_norm()[1:] * tr_adam.sq_norm()[:-1]), -1, 1
        )
    ),
    0,
)
slope_sgd, slope_adam = helpers.loglog_slope(sig_sweep, ang_sgd), helpers.loglog_slope(sig_sweep, ang_adam)
print(f"angular step ~ sigma^p:  SGD p = {slope_sgd:.3f} (expected -2),  Adam p = {slope_adam:.3f} (expected -1)")
assert abs(slope_sgd + 2) < 0.1 and abs(slope_adam + 1) < 0.1
glue("t1_sgd_angle_slope", slope_sgd, display=False)
glue("t1_adam_angle_slope", slope_adam, display=False)

# %%
fig, (axes,), keys = style.panels(2, legend="each")  # one row of panels
ax = axes[0]
for name, dd in diffs.items():
    ax.semilogy(np.arange(steps + 1), np.maximum(dd, 1e-18), label=name)
ax.axhline(1e-10, color="k", ls=":", lw=1, label="pass threshold")
ax.set(
    xlabel="step $k$",
    ylabel=r"$\|\hat w_k(\sigma) - \hat w_k(1)\|$",
    title=rf"twin runs from $\sigma={sigma:g}$ and $1$ (directions)",
)
style.legend_in(keys[0], ax)
ax = axes[1]
ax.loglog(sig_sweep, ang_sgd, "o-", label=f"SGD, slope {slope_sgd:.2f}")
ax.loglog(sig_sweep, ang_adam, "s-", label=f"Adam, slope {slope_adam:.2f}")
ax.set(
    xlabel=r"init scale $\sigma$", ylabel="mean angular step (rad)", title="effective learning rate of the direction"
)
style.legend_in(keys[1], ax)
page.figure(fig, "t1_fig", source)

# %% [markdown]
# The left panel is the equivalence: three pairs sit at float rounding, and the unscaled-$\epsilon$ control does not. The
# right panel shows its practical meaning. Starting ten times larger slows the direction a hundredfold under SGD
# (measured exponent {glue:text}`t1_sgd_angle_slope:.2f`), but only tenfold under Adam
# (exponent {glue:text}`t1_adam_angle_slope:.2f`).
#
# ## Independent check: a BatchNorm MLP, and the layer that breaks the equivalence
#
# A real network is not entirely scale invariant. Its classifier head (and the BatchNorm affine parameters
# $\gamma,\beta$, and biases) act on the function directly. The equivalence is a statement about the BN-fed kernels only. We
# check it on a small PyTorch MLP (`checks.bn_mlp`), `Linear → BN → ReLU → Linear → BN → ReLU → Linear(head)`, in float64,
# initialized by the package's one definition of $\sigma_w$ (`initmem.run.sigma_w.init_sigma_w_`). This check is independent of
# the toy: the gradients are PyTorch's autograd through real BatchNorm layers and the steps are `torch.optim.SGD`'s,
# so nothing in it builds the scale invariance in. Two cases:
#
# * **Head excluded** (`include_head=False`: hidden kernels at $\sigma$, head at 1). The twin starts at $\sigma=1$ and trains
#   its hidden kernels at $\eta/\sigma^2$; everything else uses $\eta$. The prediction: identical functions at every step.
# * **Head included** (`include_head=True`, the paper's convention if $\sigma_w$ also scales the classifier). The twin is the
#   best learning-rate reparametrization available: hidden kernels at $\eta/\sigma^2$, head at scale 1. The head's scale
#   changes the initial logits, and no learning rate can absorb that, so the twin should differ.
#
# We use BatchNorm's $\epsilon=10^{-12}$. The default $10^{-5}$ is a small non-invariance of the same kind as Adam's $\epsilon$.
# We compare the networks in training mode (batch statistics). In evaluation mode the running variance starts at 1
# whatever $\sigma_w$ is. That is another vanishing non-invariance: its weight decays like $0.9^k$ with BatchNorm's default momentum.

# %%
import torch
from torch import nn

from initmem.run.sigma_w import init_sigma_w_

torch.set_num_threads(1)
n_in, width, n_cls, n_bn = 16, 32, 4, 256
Xt, yt = checks.bn_mlp_data(n_bn, n_in, n_cls, seed)  # Gaussian inputs, labels of a noisy tanh teacher


def train_bn_mlp(sigma_w: float, include_head: bool, hidden_lr: float) -> nn.Sequential:
    """The theory's own SGD loop (checks.bn_mlp_sgd_record: the same batches for every run): hidden kernels at
    hidden_lr, head and BN affine at bn_eta."""
    model = init_sigma_w_(
        checks.bn_mlp(n_in, width, n_cls, bn_eps=1e-12),
        sigma_w,
        include_head=include_head,
        generator=torch.Generator().manual_seed(seed),
    )
    hidden = {"0.weight": hidden_lr, "3.weight": hidden_lr}
    checks.bn_mlp_sgd_record(model, Xt, yt, bn_eta, 32, bn_steps, seed, lrs=hidden)
    return model


@torch.no_grad()
def mismatch(a: nn.Module, b: nn.Module) -> tuple[float, float]:
    """(max |logit difference| / max |logit|, fraction of inputs whose predicted class differs),
    on the whole data set in training mode (batch statistics)."""
    la, lb = a.train()(Xt), b.train()(Xt)
    rel = float((la - lb).abs().max() / lb.abs().max())
    return rel, float((la.argmax(1) != lb.argmax(1)).double().mean())


bn_rows = []
for s in bn_sigmas:
    # the twin: unit-scale hidden kernels trained at eta / sigma^2, head at scale 1
    m_twin = train_bn_mlp(1.0, False, bn_eta / s**2)
    for include_head in (False, True):
        m_sigma = train_bn_mlp(s, include_head, bn_eta)
        bn_rows.append((s, include_head, *mismatch(m_sigma, m_twin)))
        print(
            f"sigma={s:5.2f}  head {'included' if include_head else 'excluded'}:  "
            f"relative logit mismatch {bn_rows[-1][2]:.1e},  prediction disagreement {bn_rows[-1][3]:.1%}"
        )

inv = max(r[2] for r in bn_rows if not r[1])
brk = min(r[2] for r in bn_rows if r[1])
disagree = max(r[3] for r in bn_rows if r[1])
print(f"pass: head excluded, max mismatch {inv:.1e} < 1e-9; head included, min mismatch {brk:.1e} > 1e-2")
assert inv < 1e-9 and brk > 1e-2
glue("t1_bn_invariant_mismatch", inv, display=False)
glue("t1_bn_head_mismatch", brk, display=False)
glue("t1_bn_head_disagreement", 100 * disagree, display=False)

# %%
fig, axes, keys = style.panels(legend="below")
ax = axes[0, 0]
cases = ((False, "o", "head excluded from $\\sigma_w$"), (True, "s", "head included in $\\sigma_w$"))
for include_head, marker, label in cases:
    rows = [r for r in bn_rows if r[1] == include_head]
    ax.semilogy([r[0] for r in rows], [max(r[2], 1e-17) for r in rows], marker + "-", label=label)
ax.set_xscale("log", base=2)
ax.set(
    xlabel=r"$\sigma_w$",
    ylabel="relative logit mismatch with the twin",
    title=r"BN-MLP: $\sigma_w$-run vs. unit-scale run at $\eta/\sigma_w^2$",
)
style.legend_in(keys[0], ax)
page.figure(fig, "t1_bn_fig", source)

# %% [markdown]
# With the head excluded from $\sigma_w$, the twin reproduces the $\sigma_w$-run to {glue:text}`t1_bn_invariant_mismatch:.1e`
# (relative logits) after training. For the BN-fed layers, $\sigma_w$ *is* a learning rate. With the head included the
# mismatch is at least {glue:text}`t1_bn_head_mismatch:.2f`, and up to {glue:text}`t1_bn_head_disagreement:.0f` % of the
# inputs change their predicted class. This is a second, independent channel of memory: the non-invariant layers,
# where a larger init scale means larger initial logits and a lazier, kernel-like regime {cite}`chizat2019lazy`.
#
# ## What this means for the paper's experiments
#
# * For every BN-fed kernel of a ResNet, a sweep over $\sigma_w$ at fixed $\eta$ *is* a sweep over the effective
#   learning rate: $\eta/\sigma_w^2$ for SGD, $\eta/\sigma_w$ for Adam (and Muon, T7). "Initialization memory" there is
#   memory of an effective learning rate.
# * With weight decay, the stationary state depends on $\eta\lambda$ only (T5), so $\sigma_w$ can matter only through the
#   transient. The question becomes *how long* the transient lasts. The clocks of T3–T7 answer it.
# * Which layers $\sigma_w$ rescales matters: the classifier head (and any kernel not followed by a normalization) carries
#   memory of a different kind, which this reduction does not cover.
