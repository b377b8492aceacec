"""total(f, model) side by side with torch: a tiny dict model, a 66k-parameter model of 10 arrays, leaf scaling.

Run: ``python -m bench --only total``.  Values and gradients are checked against torch before timing.
"""

import numpy as np

import autodiff
import autodiff.numpy as anp
from layers import BatchNorm, Chain, Dense
from traversal import total, trainables

from ._row import Row, record


def seed_model():
    """A dict of 2 small arrays (3 parameters) beside a function and ints."""
    return {"x": np.array([3.0, 4.0]), "y": (np.sin, np.array([5.0])), "z": (6, 7)}


def optimisers171_model():
    """Dense 128→128 ×2, BatchNorm(128), a function layer, Dense ×2; float32; 66k parameters in 10 arrays."""
    dense = [Dense.init(128, 128, seed=k) for k in range(4)]
    return Chain([dense[0], dense[1], BatchNorm.init(128), np.tanh, dense[2], dense[3]])


def chain_model(n):
    return [{"w": np.full(3, 0.1 * k)} for k in range(n)]


sumsq = autodiff.sumsq
GOAL = 0.5  # total is the library's centrepiece: at most half of torch's Python sum over the same tensors


def _torch_side(torch, model, f_torch):
    tensors = [torch.tensor(p, requires_grad=True) for p in trainables(model)]

    def forward():
        with torch.no_grad():
            return sum(f_torch(t) for t in tensors)

    def forward_backward():
        for t in tensors:
            t.grad = None
        sum(f_torch(t) for t in tensors).backward()
        return [t.grad for t in tensors]

    return forward, forward_backward


def _pair(ctx, label, model, f, f_torch):
    """Rows for ``total(f, model)`` and its gradient, beside torch's sum over the same tensors."""
    forward = lambda: total(f, model)  # noqa: E731
    gradient = autodiff.grad(lambda m: total(f, m))
    rows = [Row(f"{label} total", goal=GOAL, goal_text=f"ours/torch ≤ {GOAL}"),
            Row(f"{label} gradient of total", goal=GOAL, goal_text=f"ours/torch ≤ {GOAL}")]
    lanes = [{"ours": forward}, {"ours": lambda: gradient(model)}]
    if ctx.torch is not None:
        t_fwd, t_fb = _torch_side(ctx.torch, model, f_torch)
        ctx.check(rows[0].suite, [forward()], [t_fwd()], rtol=1e-5)
        ctx.check(rows[1].suite, _arrays(gradient(model)), t_fb(), rtol=1e-4, atol=1e-6)
        lanes[0]["torch"], lanes[1]["torch"] = t_fwd, t_fb
    for row, contenders in zip(rows, lanes):
        record(row, ctx.race(contenders))
    return rows


def _arrays(g):
    from traversal import fleaves

    return [x for x in fleaves(g) if isinstance(x, np.ndarray)]


def seed(ctx):
    return _pair(ctx, "3-parameter dict of 2 arrays: norm", seed_model(), anp.linalg.norm, lambda t: t.norm())


def optimisers171(ctx):
    return _pair(ctx, "66k-parameter model of 10 arrays: sumsq", optimisers171_model(), autodiff.sumsq,
                 lambda t: (t * t).sum())


def scaling(ctx):
    lanes = {}
    for n in (100, 1600):
        model = chain_model(n)
        gradient = autodiff.grad(lambda m: total(autodiff.sumsq, m))
        lanes[str(n)] = lambda g=gradient, m=model: g(m)
    rounds = ctx.race(lanes)
    row = record(Row("gradient of total: per-leaf cost, 1600 vs 100 leaves", goal=1.3,
                     goal_text="≤ 1.3× the cost at 100"), rounds, value=("1600", "100"), scale=100 / 1600)
    row.ours = rounds.median("1600") / 1600
    row.note = f"{rounds.median('100') / 100 * 1e6:.2f} → {row.ours * 1e6:.2f} µs per leaf"
    return [row]


SUITES = [seed, optimisers171, scaling]
