"""Task 5: an influence-function inverse-HVP, ``H⁻¹ ∇L(z_test)`` by 10 steps of conjugate gradients, on
L2-regularised logistic regression with D = 500 and N = 2,000; and the issue's must-hold beside it.

Ours records ``hvp_operator(objective, w, x, y)`` once and applies it 10 times; torch builds the gradient
with ``create_graph=True`` once and pulls it back 10 times (retained graph), or runs ``jvp(grad)`` 10
times (torch.func).  The conjugate gradients are the same numpy code for both (``_so_krylov``).

The must-hold row: ``grad`` of the objective with a 1-D ``w`` costs at most 1.2× the same ``grad`` with
``w[:, None]``, which the matrix-vector pullbacks of issue 20 make true.  Both sides of that row are
ours: its one "torch" variant is our own ``w[:, None]`` program, labelled so.
"""

import numpy as np

import autodiff.numpy as anp
from autodiff import grad, hvp_operator
from autodiff.nn.functional import softplus

from ._so_krylov import TorchRetainedHvp, conjugate_gradient, torch_func_hvp
from ._so_task import Task, allclose

LAM = 1e-2


def objective(w, x, y):
    """Mean logistic loss of labels ``y`` in {-1, 1} plus ``LAM / 2 * |w|²``; ``w`` 1-D, or a column with ``y``."""
    return anp.mean(softplus(-y * (x @ w))) + LAM / 2 * anp.sum(w * w)


def logistic_problem(d, n, seed=0):
    """``(w, x, y, x_test, y_test)``: standard normal features, noisy linear labels, a small ``w``."""
    rng = np.random.default_rng(seed)
    x, truth = rng.standard_normal((n + 1, d)), rng.standard_normal(d)
    y = np.where(x @ truth + 0.5 * np.sqrt(d) * rng.standard_normal(n + 1) > 0, 1.0, -1.0)
    w = 0.05 * rng.standard_normal(d)
    return w, x[:n], y[:n], x[n], y[n]


def influence_cg(torch=None, d=500, n=2000, steps=10, seed=0):
    """The task: ``steps`` conjugate-gradient steps for ``H s = ∇ loss(z_test)`` at ``w``."""
    w, x, y, x_test, y_test = logistic_problem(d, n, seed)
    b = grad(lambda w: softplus(-y_test * (x_test @ w)))(w)

    def ours():
        return [conjugate_gradient(hvp_operator(objective, w, x, y), b, steps)]

    variants = {} if torch is None else _torch_variants(torch, w, x, y, b, steps)
    # Each product is two float64 matrix-vector products of length 500 and 2,000 (rounding near 1e-15
    # relative); ten CG steps on a Hessian of condition number about 10 amplify it by well under 1e3.
    return Task(f"influence inverse-HVP, {steps} CG steps, logistic regression D={d} N={n}", ours, variants,
                allclose("inverse-HVP by CG", rtol=1e-9, atol=1e-12), goal=1.0,
                note="ours: hvp_operator recorded once, applied per step",
                problem=dict(w=w, x=x, y=y, b=b, steps=steps, lam=LAM))


def _torch_variants(torch, w, x, y, b, steps):
    xt, yt = torch.tensor(x), torch.tensor(y)
    # torch's softplus is linear above 20 (its threshold); ours is exact: keep the margins well inside.
    assert np.abs(x @ w).max() < 15, "influence_cg: the margins reach torch's softplus threshold; shrink w"

    def t_objective(wt):
        return torch.nn.functional.softplus(-yt * (xt @ wt)).mean() + LAM / 2 * (wt * wt).sum()

    def retained():
        wt = torch.tensor(w, requires_grad=True)
        return [conjugate_gradient(TorchRetainedHvp(torch, [wt], t_objective(wt)), b, steps)]

    def func():
        return [conjugate_gradient(torch_func_hvp(torch, t_objective, torch.tensor(w)), b, steps)]

    return {"retained graph": retained, "torch.func": func}


def logistic_grad_1d(torch=None, d=500, n=2000, seed=0):
    """The must-hold: ``grad`` with a 1-D ``w`` against ``w[:, None]``, both ours (``torch`` is not used)."""
    w, x, y, _, _ = logistic_problem(d, n, seed)
    column, y_column = w[:, None], y[:, None]
    gradient = grad(objective)

    def one_d():
        return [gradient(w, x, y)]

    def as_column():
        return [gradient(column, x, y_column).reshape(-1)]

    # The same sums in a different layout: a GEMV against a GEMM of one column, rounding near 1e-16.
    return Task(f"logistic-regression grad, 1-D w against w[:, None] (both ours), D={d} N={n}", one_d,
                {"ours with w[:, None] (not torch)": as_column},
                allclose("1-D against column grad", rtol=1e-10, atol=1e-14), goal=1.2,
                note="must-hold of issue 20: ours(1-D) / ours(w[:, None]) <= 1.2; no torch in this row",
                problem=dict(w=w, x=x, y=y, lam=LAM))
