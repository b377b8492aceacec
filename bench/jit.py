"""``autodiff.jit`` beside our eager engine, JAX's ``jit`` and torch's eager mode (issue 42's table).

Each row races four lanes in one process: ``ours`` is the jitted function, ``eager`` the same function
without ``jit``, ``floor`` JAX's ``jax.jit`` of the same program (the ``[compare]`` extra; the column is
headed "floor" in the table, and each row's note says so) and ``torch`` torch's eager mode.  A row judges
ours against JAX where the issue names JAX, against torch where it names torch; a second row per workload
reports jit against eager.  Results are checked against eager (and JAX, torch) before anything is timed.
The first-call row times tracing a fresh ``jit`` of the small HVP against one call once traced.

Run: ``python -m bench --only jit`` (not in the quick run: JAX's own compile takes seconds).
"""

import statistics
import time

import numpy as np

import autodiff
import autodiff.numpy as anp
from traversal import total, trainables

from . import mlp
from ._noise import Watch
from ._row import Row, absorb, record
from ._so_maml import maml_meta_step, sine_tasks
from .overhead import N_OPS, chain
from .total import seed_model

JAX_NOTE = "floor = JAX jit"


def _jax():
    """``(jax, jax.numpy)`` with float64 on, or ``(None, None)`` without the ``[compare]`` extra."""
    try:
        import jax
    except ImportError:
        return None, None
    jax.config.update("jax_enable_x64", True)  # the float64 rows; float32 arrays stay float32
    return jax, jax.numpy


def _jitted(f):
    """``autodiff.jit(f)``, or ``None`` where this checkout has no ``jit`` yet (the row then reports eager)."""
    jit = getattr(autodiff, "jit", None)
    return None if jit is None else jit(f)


def _in_order(keys, f):
    """A lane calling ``f`` once and listing its dict result in ``keys``' order (not one call per key)."""
    return lambda: (lambda out: [out[k] for k in keys])(f())


def _rows(ctx, name, lanes, goal, against, check, per=1):
    """The judged row (jit against ``against``: ``"floor"`` for JAX, ``"torch"``) and jit-against-eager."""
    lanes = {k: v for k, v in lanes.items() if v is not None}
    expected = lanes["eager"]()
    for lane in ("ours", "floor", "torch"):
        if lane in lanes:
            ctx.check(f"{name} ({lane})", check(lanes[lane]()), check(expected), rtol=2e-3, atol=1e-6)
    rounds = ctx.race(lanes, per=per)
    who = "JAX jit" if against == "floor" else "torch"
    row = Row(f"{name}: jit", goal=goal, goal_text=f"jit/{who} ≤ {goal}", note=JAX_NOTE)
    record(row, rounds, value=("ours", against))
    eager = Row(f"{name}: eager (no jit)", goal_text="(reported: eager/torch)", note="the same program, not jitted")
    record(eager, rounds, value=("eager", "torch") if "torch" in lanes else "eager", ours="eager")
    speedup = Row(f"{name}: jit/eager", goal_text="(reported: ours/ref is /eager)")
    record(speedup, rounds, value=("ours", "eager"))
    speedup.ratio = speedup.value  # the row's ratio is jit against eager, not against torch or JAX
    return [row, eager, speedup]


def chain_rows(ctx):
    """100 elementwise ops forward and backward on 10 float64 numbers, per op (bench/overhead.py's chain)."""
    x = np.linspace(-1.0, 1.0, 10)
    eager = autodiff.grad(lambda x: chain(x, anp))
    ours = _jitted(eager)
    lanes = {"eager": lambda: eager(x), "ours": ours and (lambda: ours(x))}
    jax, jnp = _jax()
    if jax is not None:
        theirs = jax.jit(jax.grad(lambda x: chain(x, jnp)))
        lanes["floor"] = lambda: theirs(x).block_until_ready()
    if ctx.torch is not None:
        t = ctx.torch.tensor(x)

        def torch_step():
            tt = t.clone().requires_grad_(True)
            chain(tt, ctx.torch).backward()
            return tt.grad

        lanes["torch"] = torch_step
    return _rows(ctx, "100-op chain, per op", lanes, 1.0, "floor", lambda r: [np.asarray(r)], per=N_OPS)


def _hvp_lanes(ctx, sizes, batch):
    params, x, onehot, v = mlp.hvp_inputs(list(sizes), batch)
    keys = list(params)

    def eager_hvp(p):
        return mlp.ours_hvp(p, x, onehot, v)

    ours = _jitted(eager_hvp)
    lanes = {"eager": _in_order(keys, lambda: eager_hvp(params)),
             "ours": ours and _in_order(keys, lambda: ours(params))}
    jax, jnp = _jax()
    if jax is not None:
        loss = mlp.loss_in(jnp.tanh, jax.nn.log_softmax, jnp.sum)
        hvp = jax.jit(lambda p: jax.jvp(jax.grad(lambda q: loss(q, x, onehot)), (p,), (v,))[1])
        lanes["floor"] = _in_order(keys, lambda: jax.block_until_ready(hvp(params)))
    if ctx.torch is not None:
        lanes["torch"] = mlp.torch_hvps(ctx.torch, params, x, onehot, v)[0]
    return lanes, (ours, params)


def small_hvp_rows(ctx):
    lanes, _ = _hvp_lanes(ctx, (64, 64, 10), 128)
    return _rows(ctx, "HVP, MLP 64-64-10, f32, batch 128", lanes, 0.8, "floor", list)


def big_hvp_rows(ctx):
    lanes, _ = _hvp_lanes(ctx, (784, 512, 512, 10), 128)
    return _rows(ctx, "HVP, MLP 784-512-512-10, f32, batch 128", lanes, 1.0, "floor", list)


def total_rows(ctx):
    """The gradient of the seed's ``total(norm, m)``: a dict of two small arrays beside a function and ints."""
    model = seed_model()
    eager = autodiff.grad(lambda m: total(anp.linalg.norm, m))
    ours = _jitted(eager)
    lanes = {"eager": lambda: trainables(eager(model)), "ours": ours and (lambda: trainables(ours(model)))}
    arrays = trainables(model)
    jax, jnp = _jax()
    if jax is not None:
        theirs = jax.jit(jax.grad(lambda ps: sum(jnp.linalg.norm(p) for p in ps)))
        lanes["floor"] = lambda: [np.asarray(t) for t in jax.block_until_ready(theirs(arrays))]
    if ctx.torch is not None:
        tensors = [ctx.torch.tensor(p, requires_grad=True) for p in arrays]

        def torch_grad():
            for t in tensors:
                t.grad = None
            sum(t.norm() for t in tensors).backward()
            return [t.grad for t in tensors]

        lanes["torch"] = torch_grad
    return _rows(ctx, "gradient of the seed's total(norm, m)", lanes, 1.0, "floor", list)


def penalty_rows(ctx):
    """The gradient-norm penalty step of bench/mlp.py, judged against torch (the issue's ≤ 0.9)."""
    lanes = mlp.penalty_workload(ctx.torch)
    params, x, onehot = mlp.make([784, 512, 512, 10], 128, seed=3)
    keys = list(params)

    def penalised(p):
        value, g = autodiff.value_and_grad(lambda q: mlp.loss(q, x, onehot))(p)
        return value + 0.1 * total(autodiff.sumsq, g)

    ours = _jitted(autodiff.grad(penalised))
    lanes = {"eager": lanes["ours"], "torch": lanes.get("torch"),
             "ours": ours and _in_order(keys, lambda: ours(params))}
    jax, jnp = _jax()
    if jax is not None:
        loss = mlp.loss_in(jnp.tanh, jax.nn.log_softmax, jnp.sum)

        def jax_penalised(p):
            value, g = jax.value_and_grad(lambda q: loss(q, x, onehot))(p)
            return value + 0.1 * sum(jnp.sum(t * t) for t in jax.tree_util.tree_leaves(g))

        step = jax.jit(jax.grad(jax_penalised))
        lanes["floor"] = _in_order(keys, lambda: jax.block_until_ready(step(params)))
    rows = _rows(ctx, "gradient-norm penalty step, big MLP", lanes, 0.9, "torch", list)
    if "floor" in lanes and ours is not None:
        vs_jax = Row("gradient-norm penalty step, big MLP: jit against JAX", goal=1.0, goal_text="jit/JAX jit ≤ 1.0",
                     note=JAX_NOTE)
        rows.append(record(vs_jax, ctx.race({k: v for k, v in lanes.items() if k in ("ours", "floor")}),
                           value=("ours", "floor")))
    return rows


def maml_rows(ctx):
    """bench/_so_maml.py's meta-step: 4 sine tasks, 5 inner Descent steps through optimisers.update; JAX's
    twin takes the same functional steps ``p - lr g`` on the same weights."""
    task = maml_meta_step(ctx.torch)
    model, meta_loss = task.problem["model"], task.problem["meta_loss"]
    eager = autodiff.value_and_grad(meta_loss)
    ours = _jitted(eager)

    def flat(result):
        value, g = result
        return [np.asarray(value)] + trainables(g)

    lanes = {"eager": lambda: flat(eager(model)), "ours": ours and (lambda: flat(ours(model)))}
    jax, jnp = _jax()
    if jax is not None:
        lanes["floor"] = _jax_maml(jax, jnp, model)
    if ctx.torch is not None:
        lanes["torch"] = task.torch_variants["retained graph (create_graph=True)"]
    rows = _rows(ctx, "MAML meta-step", lanes, 0.35, "torch", list)
    if jax is not None and ours is not None:
        vs_jax = Row("MAML meta-step: jit against JAX", goal=2.0, goal_text="jit/JAX jit ≤ 2", note=JAX_NOTE)
        rows.append(record(vs_jax, ctx.race({k: lanes[k] for k in ("ours", "floor")}), value=("ours", "floor")))
    return rows


def _jax_maml(jax, jnp, model):
    """JAX's meta-step on ``model``'s weights (``trainables`` order, each layer's weight ``(out, in)``), on the
    tasks and steps of ``maml_meta_step``'s defaults."""
    batch = sine_tasks(np.random.default_rng(0), 4, 10)  # maml_meta_step's defaults: the same tasks
    inner_lr, inner_steps = 0.01, 5

    def mse(ps, x, y):
        h = x
        for k in range(0, len(ps), 2):
            h = h @ ps[k].T + ps[k + 1]
            if k < len(ps) - 2:
                h = jnp.tanh(h)
        return jnp.mean((h - y) ** 2)

    def meta(ps):
        out = 0.0
        for (xs, ys), (xq, yq) in batch:
            adapted = ps
            for _ in range(inner_steps):
                adapted = [p - inner_lr * g for p, g in zip(adapted, jax.grad(mse)(adapted, xs, ys))]
            out = out + mse(adapted, xq, yq)
        return out / len(batch)

    step, ps = jax.jit(jax.value_and_grad(meta)), trainables(model)

    def run():
        value, g = jax.block_until_ready(step(ps))
        return [np.asarray(value)] + [np.asarray(t) for t in g]

    return run


def inside_rows(ctx):
    """``jit`` inside the transform: ``hvp(jit(loss))`` and ``grad(jit(loss))`` of the small MLP, against the same
    transforms of ``loss`` itself (reported: a jitted call's pullback runs the late half of its split program)."""
    params, x, onehot, v = mlp.hvp_inputs([64, 64, 10], 128)
    keys = list(params)

    def loss(p):
        return mlp.loss(p, x, onehot)

    jitted = autodiff.jit(loss)
    rows = []
    for name, transform in (("grad", lambda f: autodiff.grad(f)(params)),
                            ("hvp", lambda f: autodiff.hvp(f, (params,), (v,))[0])):
        lanes = {"ours": _in_order(keys, lambda t=transform: t(jitted)),
                 "eager": _in_order(keys, lambda t=transform: t(loss))}
        ctx.check(f"{name}(jit(loss))", lanes["ours"](), lanes["eager"](), rtol=2e-4, atol=1e-6)
        row = Row(f"{name}(jit(loss)) against {name}(loss), MLP 64-64-10", goal_text="(reported: ours/ref is /eager)",
                  note="jit inside: the call's pullback runs the late half of its split program")
        record(row, ctx.race(lanes), value=("ours", "eager"))
        row.ratio = row.value  # against the same transform of loss itself
        rows.append(row)
    return rows


def first_call_rows(ctx):
    """Tracing a fresh ``jit`` of the small HVP (trace and passes), against one call of it once traced."""
    if getattr(autodiff, "jit", None) is None:
        return [Row("jit: first call of the small HVP / one call", goal_text="(autodiff.jit missing)")]
    params, x, onehot, v = mlp.hvp_inputs([64, 64, 10], 128)
    with Watch(ctx.load) as watch:
        firsts, calls = [], []
        for _ in range(3):
            f = autodiff.jit(lambda p: mlp.ours_hvp(p, x, onehot, v))
            start = time.perf_counter()
            f(params)
            firsts.append(time.perf_counter() - start)
            start = time.perf_counter()
            for _ in range(200):
                f(params)
            calls.append((time.perf_counter() - start) / 200)
    ratios = [a / b for a, b in zip(firsts, calls)]
    row = Row("jit: first call of the small HVP / one call", ours=statistics.median(firsts), goal=30,
              goal_text="first call ≤ 30× one call", value=statistics.median(ratios),
              band=(min(ratios), max(ratios)), samples=ratios,
              note=f"one call {statistics.median(calls) * 1e6:.0f} µs")
    row.ratio = row.value
    return [absorb(row, watch.result)]


SUITES = []
FULL = [chain_rows, small_hvp_rows, total_rows, big_hvp_rows, penalty_rows, maml_rows, inside_rows,
        first_call_rows]
