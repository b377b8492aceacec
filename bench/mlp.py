"""MLP benchmarks side by side with torch and a hand-written numpy floor.

* a training step of a 784-512-512-10 tanh MLP, batch 128, softmax cross-entropy, float32;
* the Hessian-vector product of that loss with respect to all parameters (ours ``hvp``'s default, reverse over
  forward: one tape, no second one recorded over it; issue 16), beside torch's double backward (the goal's
  yardstick), torch.func's forward over reverse (reported) and the numpy floor (the R-operator by hand,
  reported against torch: the floor's own ratio shows what numpy's BLAS allows);
* a gradient-norm penalty step: the gradient of ``loss + 0.1 * ||grad loss||^2``;
* the same HVP on a small 64-64-10 MLP, where per-op overhead dominates;
* ``jvp`` of the big loss in a parameter-space direction, against one ``grad`` of ours (and torch.func.jvp).

Its peak memory, in fresh processes, is in ``bench/memory.py``.

Results are checked against torch before anything is timed.  Run: ``python -m bench --only mlp``.
"""

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff.nn import functional as F
from traversal import total

from ._row import Row, record
from ._timing import Rounds


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


def loss_in(tanh, log_softmax, total):
    """The MLP's loss written with one library's ``tanh``, ``log_softmax(h, axis=1)`` and ``sum``: ours
    (:func:`loss`) and JAX's (``bench/jit.py``) are the same code."""

    def loss(params, x, onehot):
        n = len(params) // 2
        h = x
        for k in range(n):
            h = h @ params[f"w{k}"] + params[f"b{k}"]
            if k < n - 1:
                h = tanh(h)
        return -total(onehot * log_softmax(h, axis=1)) / np.float32(x.shape[0])

    return loss


loss = loss_in(anp.tanh, F.log_softmax, anp.sum)


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


def numpy_hvp(params, x, onehot, v):
    """The floor of the HVP rows: Pearlmutter's R-operator written by hand in numpy, the forward pass and its
    tangent, then the backward pass and its tangent, with no gradient that the product does not need."""
    n = len(params) // 2
    w, vw = [params[f"w{k}"] for k in range(n)], [v[f"w{k}"] for k in range(n)]
    hs, rs = [x], [None]  # each layer's input and that input's tangent (the data x has none)
    for k in range(n):
        z = hs[k] @ w[k] + params[f"b{k}"]
        rz = hs[k] @ vw[k] + v[f"b{k}"] + (rs[k] @ w[k] if k else 0)
        if k < n - 1:
            hs.append(np.tanh(z))
            rs.append((1 - hs[-1] * hs[-1]) * rz)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p, count = e / e.sum(axis=1, keepdims=True), np.float32(x.shape[0])
    d, rd = (p - onehot) / count, p * (rz - (p * rz).sum(axis=1, keepdims=True)) / count
    hv = {}
    for k in reversed(range(n)):  # d: the loss's gradient at layer k's output, rd: its tangent
        hv[f"w{k}"] = hs[k].T @ rd + (rs[k].T @ d if k else 0)
        hv[f"b{k}"] = rd.sum(axis=0)
        if k:
            dh, rdh, slope = d @ w[k].T, rd @ w[k].T + d @ vw[k].T, 1 - hs[k] * hs[k]
            d, rd = dh * slope, rdh * slope - 2 * dh * hs[k] * rs[k]
    return hv


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


def step_workload(torch=None, batch=128):
    """The lanes of the 784-512-512-10 training step: ours, the numpy floor and (with torch) torch's, each
    returning the gradients as a list in the parameters' order."""
    params, x, onehot = make([784, 512, 512, 10], batch)
    g = autodiff.grad(loss)

    def ours():
        grads = g(params, x, onehot)
        return [grads[k] for k in params]

    def floor():
        grads = numpy_step(params, x, onehot)
        return [grads[k] for k in params]

    lanes = {"ours": ours, "floor": floor}
    if torch is not None:
        ts, tx, toh = _torch_setup(torch, params, x, onehot)
        lanes["torch"] = lambda: torch.autograd.grad(torch_loss(torch, ts, tx, toh), ts)
    return lanes


def step_suite(ctx):
    lanes = step_workload(ctx.torch)
    row = Row("MLP 784-512-512-10 step (vs numpy floor)", goal=1.15, goal_text="ours/floor ≤ 1.15")
    ctx.check(row.suite, lanes["ours"](), lanes["floor"](), rtol=2e-3, atol=1e-5)
    if "torch" in lanes:
        ctx.check(f"{row.suite} (torch)", lanes["ours"](), lanes["torch"](), rtol=2e-3, atol=1e-5)
    return [record(row, ctx.race(lanes), value=("ours", "floor"))]


def hvp_inputs(sizes, batch):
    """The model, inputs and a direction ``v`` shaped like the parameters, for the HVP and JVP rows."""
    params, x, onehot = make(sizes, batch, seed=1)
    v = {k: np.random.default_rng(2).standard_normal(p.shape).astype(np.float32) for k, p in params.items()}
    return params, x, onehot, v


def ours_hvp(params, x, onehot, v):
    return autodiff.hvp(lambda p: loss(p, x, onehot), (params,), (v,))[0]


def torch_hvps(torch, params, x, onehot, v):
    """torch's two HVPs of the same loss, each returning a list of tensors in ``params``' order:
    double backward (grad with ``create_graph``, then the grad of ``<g, v>``) and torch.func's
    forward over reverse (``jvp`` of ``grad``), the algorithm of ours with ``mode="forward_over_reverse"``."""
    ts, tx, toh = _torch_setup(torch, params, x, onehot)
    tv = [torch.tensor(v[k]) for k in params]

    def double_backward():
        gs = torch.autograd.grad(torch_loss(torch, ts, tx, toh), ts, create_graph=True)
        return torch.autograd.grad(sum((g * w).sum() for g, w in zip(gs, tv)), ts)

    primals = tuple(t.detach() for t in ts)
    gradient = torch.func.grad(lambda ps: torch_loss(torch, ps, tx, toh))

    def forward_over_reverse():
        return list(torch.func.jvp(gradient, (primals,), (tuple(tv),))[1])

    return double_backward, forward_over_reverse


def hvp_workload(torch=None, sizes=(784, 512, 512, 10), batch=128):
    """The lanes of one HVP: ours (``hvp``'s default, reverse over forward), the numpy floor (:func:`numpy_hvp`)
    and, with torch, torch's double backward ("torch") and torch.func's forward over reverse ("torch.func")."""
    params, x, onehot, v = hvp_inputs(list(sizes), batch)

    def ours():
        hv = ours_hvp(params, x, onehot, v)
        return [hv[k] for k in params]

    def floor():
        hv = numpy_hvp(params, x, onehot, v)
        return [hv[k] for k in params]

    lanes = {"ours": ours, "floor": floor}
    if torch is not None:
        lanes["torch"], lanes["torch.func"] = torch_hvps(torch, params, x, onehot, v)
    return lanes


def _hvp_suite(ctx, sizes, batch, name, goal):
    lanes = hvp_workload(ctx.torch, sizes, batch)
    row = Row(name, goal=goal, goal_text=f"ours/torch double backward ≤ {goal}")
    if ctx.torch is None:
        return [record(row, ctx.race(lanes))]
    expected = lanes["torch"]()
    ctx.check(name, lanes["ours"](), expected, rtol=2e-3, atol=1e-5)
    ctx.check(f"{name} (torch.func)", lanes["torch.func"](), expected, rtol=2e-3, atol=1e-5)
    ctx.check(f"{name} (numpy floor)", lanes["floor"](), expected, rtol=2e-3, atol=1e-5)
    rounds = ctx.race(lanes)
    func = Row(f"{name}, vs torch.func forward over reverse", goal_text="(reported)")
    record(func, Rounds({"ours": rounds.times["ours"], "torch": rounds.times["torch.func"],
                         "torch@1": rounds.times["torch.func@1"]}, rounds.noise, busy=rounds.busy))
    floor = Row(f"{name}: the numpy floor against torch", goal_text="(reported: floor/torch)",
                note="the R-operator by hand in numpy (numpy_hvp): what numpy's BLAS allows")
    record(floor, rounds, value=("floor", "torch"), ours="floor")
    return [record(row, rounds), func, floor]


def big_hvp(ctx):
    return _hvp_suite(ctx, (784, 512, 512, 10), 128, "HVP, MLP 784-512-512-10", 0.8)


def small_hvp(ctx):
    return _hvp_suite(ctx, (64, 64, 10), 32, "HVP, MLP 64-64-10", 0.8)


def big_jvp(ctx):
    """``jvp`` of the big loss in a direction shaped like the model: one forward pass carrying tangents,
    judged against one forward-and-backward ``grad`` of ours (issue 16: ≤ 1.3×)."""
    params, x, onehot, v = hvp_inputs([784, 512, 512, 10], 128)
    f = lambda p: loss(p, x, onehot)  # noqa: E731
    ours, gradient = (lambda: autodiff.jvp(f, (params,), (v,))), autodiff.grad(f)
    row = Row("jvp of the MLP 784-512-512-10 loss", goal=1.3,
              note="torch is torch.func.jvp of the same loss, for reference; the goal compares with one grad of ours")
    out, tangent = ours()
    g = gradient(params)
    directional = sum(np.vdot(g[k].astype(np.float64), v[k].astype(np.float64)) for k in params)
    ctx.check(row.suite, [tangent], [directional], rtol=2e-3, atol=1e-5)  # J v is <grad, v>
    lanes = {"ours": ours, "grad": lambda: gradient(params)}
    if ctx.torch is not None:
        lanes["torch"] = _torch_jvp(ctx.torch, params, x, onehot, v)
        ctx.check(row.suite, [out, tangent], lanes["torch"](), rtol=2e-3, atol=1e-5)
    rounds = ctx.race(lanes)
    record(row, rounds, value=("ours", "grad"))
    row.goal_text = f"ours/our grad ({rounds.median('grad') * 1e3:.3g} ms) ≤ 1.3"
    return [row]


def _torch_jvp(torch, params, x, onehot, v):
    ts, tx, toh = _torch_setup(torch, params, x, onehot)
    primals, tangents = tuple(t.detach() for t in ts), tuple(torch.tensor(v[k]) for k in params)
    return lambda: torch.func.jvp(lambda ps: torch_loss(torch, ps, tx, toh), (primals,), (tangents,))


def penalty_workload(torch=None, batch=128):
    """The lanes of the gradient-norm penalty step: the gradient of ``loss + 0.1 * ||grad loss||^2``."""
    params, x, onehot = make([784, 512, 512, 10], batch, seed=3)

    def penalised(p):
        value, g = autodiff.value_and_grad(lambda q: loss(q, x, onehot))(p)
        return value + 0.1 * total(autodiff.sumsq, g)

    g = autodiff.grad(penalised)

    def ours():
        grads = g(params)
        return [grads[k] for k in params]

    lanes = {"ours": ours}
    if torch is not None:
        ts, tx, toh = _torch_setup(torch, params, x, onehot)

        def theirs():
            lval = torch_loss(torch, ts, tx, toh)
            gs = torch.autograd.grad(lval, ts, create_graph=True)
            return torch.autograd.grad(lval + 0.1 * sum((g * g).sum() for g in gs), ts)

        lanes["torch"] = theirs
    return lanes


def penalty(ctx):
    lanes = penalty_workload(ctx.torch)
    row = Row("gradient-norm penalty step, big MLP", goal=0.9, goal_text="ours/torch ≤ 0.9")
    if "torch" in lanes:
        ctx.check(row.suite, lanes["ours"](), lanes["torch"](), rtol=2e-3, atol=1e-5)
    return [record(row, ctx.race(lanes))]


SUITES = [step_suite, big_hvp, penalty, small_hvp, big_jvp]
