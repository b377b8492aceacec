"""MLP benchmarks side by side with torch and a hand-written numpy floor.

* a training step of a 784-512-512-10 tanh MLP, batch 128, softmax cross-entropy, float32;
* the Hessian-vector product of that loss with respect to all parameters (reverse over reverse);
* a gradient-norm penalty step: the gradient of ``loss + 0.1 * ||grad loss||^2``;
* the same HVP on a small 64-64-10 MLP, where per-op overhead dominates.

Results are checked against torch before anything is timed.  Run: ``python -m bench.mlp``.
"""

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff.nn import functional as F
from traversal import total

from ._timing import Row


def make(sizes, batch, seed=0):
    rng = np.random.default_rng(seed)
    params = {}
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        params[f"w{k}"] = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        params[f"b{k}"] = np.zeros(n_out, np.float32)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch)
    onehot = np.eye(sizes[-1], dtype=np.float32)[labels]
    return params, x, onehot


def loss(params, x, onehot):
    n = len(params) // 2
    h = x
    for k in range(n):
        h = h @ params[f"w{k}"] + params[f"b{k}"]
        if k < n - 1:
            h = anp.tanh(h)
    return -anp.sum(onehot * F.log_softmax(h, axis=1)) / np.float32(x.shape[0])


def numpy_step(params, x, onehot):
    """The floor: forward and backward written by hand in numpy."""
    n = len(params) // 2
    hs = [x]
    for k in range(n):
        z = hs[-1] @ params[f"w{k}"] + params[f"b{k}"]
        hs.append(np.tanh(z) if k < n - 1 else z)
    logits = hs[-1]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    d = (p - onehot) / np.float32(x.shape[0])
    grads = {}
    for k in reversed(range(n)):
        grads[f"w{k}"] = hs[k].T @ d
        grads[f"b{k}"] = d.sum(axis=0)
        if k:
            d = (d @ params[f"w{k}"].T) * (1 - hs[k] * hs[k])
    return grads


def torch_loss(torch, ts, x, onehot):
    n = len(ts) // 2
    h = x
    for k in range(n):
        h = h @ ts[2 * k] + ts[2 * k + 1]
        if k < n - 1:
            h = torch.tanh(h)
    return -(onehot * torch.log_softmax(h, dim=1)).sum() / x.shape[0]


def _torch_setup(torch, params, x, onehot):
    ts = [torch.tensor(params[k], requires_grad=True) for k in params]
    return ts, torch.tensor(x), torch.tensor(onehot)


def step_suite(ctx):
    params, x, onehot = make([784, 512, 512, 10], 128)
    ours = autodiff.grad(loss)
    row = Row("MLP 784-512-512-10 step (vs numpy floor)", goal=1.15, goal_text="ours/floor ≤ 1.15")
    ctx.check(row.suite, [ours(params, x, onehot)[k] for k in params],
              [numpy_step(params, x, onehot)[k] for k in params], rtol=2e-3, atol=1e-5)
    row.ours = ctx.time(lambda: ours(params, x, onehot))
    row.floor = ctx.time(lambda: numpy_step(params, x, onehot))
    if ctx.torch is not None:
        torch = ctx.torch
        ts, tx, toh = _torch_setup(torch, params, x, onehot)
        row.torch = ctx.time(lambda: torch.autograd.grad(torch_loss(torch, ts, tx, toh), ts))
    row.value = row.ours / row.floor
    return [row]


def _hvp_suite(ctx, sizes, batch, name, goal):
    params, x, onehot = make(sizes, batch, seed=1)
    v = {k: np.random.default_rng(2).standard_normal(p.shape).astype(np.float32) for k, p in params.items()}

    def ours():
        return autodiff.hvp(lambda p: loss(p, x, onehot), (params,), (v,))[0]

    row = Row(name, goal=goal, goal_text=f"ours/torch ≤ {goal}")
    if ctx.torch is not None:
        torch = ctx.torch
        ts, tx, toh = _torch_setup(torch, params, x, onehot)
        tv = [torch.tensor(v[k]) for k in params]

        def theirs():
            gs = torch.autograd.grad(torch_loss(torch, ts, tx, toh), ts, create_graph=True)
            return torch.autograd.grad(sum((g * w).sum() for g, w in zip(gs, tv)), ts)

        ctx.check(name, [ours()[k] for k in params], [t.numpy() for t in theirs()], rtol=2e-3, atol=1e-5)
        row.torch = ctx.time(theirs)
    row.ours = ctx.time(ours)
    row.value = row.ratio if row.torch else None
    return [row]


def big_hvp(ctx):
    return _hvp_suite(ctx, [784, 512, 512, 10], 128, "HVP, MLP 784-512-512-10", 1.3)


def small_hvp(ctx):
    return _hvp_suite(ctx, [64, 64, 10], 32, "HVP, MLP 64-64-10", 2.0)


def penalty(ctx):
    params, x, onehot = make([784, 512, 512, 10], 128, seed=3)

    def penalised(p):
        value, g = autodiff.value_and_grad(lambda q: loss(q, x, onehot))(p)
        return value + 0.1 * total(autodiff.sumsq, g)

    ours = autodiff.grad(penalised)
    row = Row("gradient-norm penalty step, big MLP", goal=1.3, goal_text="ours/torch ≤ 1.3")
    if ctx.torch is not None:
        torch = ctx.torch
        ts, tx, toh = _torch_setup(torch, params, x, onehot)

        def theirs():
            lval = torch_loss(torch, ts, tx, toh)
            gs = torch.autograd.grad(lval, ts, create_graph=True)
            return torch.autograd.grad(lval + 0.1 * sum((g * g).sum() for g in gs), ts)

        ctx.check(row.suite, [ours(params)[k] for k in params], [t.numpy() for t in theirs()], rtol=2e-3, atol=1e-5)
        row.torch = ctx.time(theirs)
    row.ours = ctx.time(lambda: ours(params))
    row.value = row.ratio if row.torch else None
    return [row]


SUITES = [step_suite, big_hvp, penalty, small_hvp]

if __name__ == "__main__":
    from .__main__ import main

    main(["--only", "mlp"])
