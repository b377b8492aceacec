"""The model-wide reductions on a ResNet-18-shaped parameter set (62 float32 arrays, 11.7M values), beside
torch: the global norm, the L2 penalty's value and gradient, the effective memory bandwidth, and an Adam update.
Run alone: ``python -m bench --only kernels``."""

import contextlib
import functools
import math
import time

import numpy as np

import autodiff
import layers
from autodiff._accel import parallel as _parallel
from optimisers import Adam, setup, update
from traversal import fmap, isnumeric, total, trainables

from ._noise import Watch
from ._row import Row, absorb, record
from ._stats import summary
from ._timing import Lane, gc_paused, settle

AFTER_MATMUL_GOAL = 1.5  # BLAS workers still spinning after a matmul may slow the norm, but not by half again


@functools.cache
def parameter_set():
    """ResNet-18 with 1000 classes, built once per run (the suites only read it)."""
    return layers.resnet18(1000)


@contextlib.contextmanager
def _serial():
    previous = _parallel.set_threads(1)
    try:
        yield
    finally:
        _parallel.set_threads(previous)


def global_norm(ctx):
    model = parameter_set()
    ours = lambda: math.sqrt(total(autodiff.sumsq, model))  # noqa: E731
    serial = Row("ResNet-18 params: global norm (serial)", goal=0.9, goal_text="ours/torch ≤ 0.9")
    overall = Row("ResNet-18 params: global norm", goal=0.6, goal_text="ours/torch ≤ 0.6",
                  note="two threads for models over 8 MB")
    lanes = {"ours": ours, "serial": Lane("serial", ours, _serial)}
    if ctx.torch is not None:
        tensors = shared(ctx.torch, model)
        lanes["torch"] = lambda: ctx.torch.nn.utils.get_total_norm(tensors)
        ctx.check(serial.suite, [ours()], [lanes["torch"]()], rtol=1e-5)
    rounds = ctx.race(lanes)
    return [record(serial, rounds, value=("serial", "torch"), ours="serial"), record(overall, rounds)]


def shared(torch, model):
    """torch tensors over the model's own arrays (``torch.from_numpy``), for lanes that only read them.

    A copy would put torch's 47 MB beside ours in the cache: whichever lane ran after the other's reads
    found its own bytes evicted, so with the lanes' order alternating between rounds the per-round ratios
    of the serial norm swung between 0.6 and 2.0, and its verdict changed from one run to the next."""
    return [torch.from_numpy(a) for a in trainables(model)]


def after_matmul(ctx):
    """The global norm right after a large matmul (BLAS threads may still be spinning) against quiet, in
    alternating rounds: each round times one quiet call (after the threads settled) and one right after
    a 1024² matmul.  Twice the mode's rounds: a round is cheap, and one slow round among nine moved the
    band's edge across the goal from one run to the next."""
    model = parameter_set()
    a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    norm = lambda: total(autodiff.sumsq, model)  # noqa: E731
    norm()
    quiet, after, short = [], [], ctx.busy  # a few rounds while busy: figures to look at, never a verdict
    with gc_paused(), Watch(ctx.load) as watch:
        for _ in range(2 * ctx.settings.rounds):
            settle(timeout=ctx.settings.wait)
            quiet.append(_once(norm))
            a @ a
            after.append(_once(norm))
    slowdown, band = summary([y / x for x, y in zip(quiet, after)])
    quiet_ms = float(np.median(quiet)) * 1e3
    row = Row("ResNet-18 params: norm right after a 1024² matmul", ours=float(np.median(after)), value=slowdown,
              band=band, goal=AFTER_MATMUL_GOAL, goal_text=f"after/quiet ≤ {AFTER_MATMUL_GOAL}",
              note=f"{(float(np.median(after)) * 1e3 - quiet_ms):+.3f} ms against quiet ({quiet_ms:.3g} ms)")
    ctx.observe(watch.result)
    row.noisy = short
    return [absorb(row, watch.result)]


def _once(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def l2_value_and_gradient(ctx):
    model = parameter_set()
    ours = autodiff.value_and_grad(lambda m: total(autodiff.sumsq, m))
    row = Row("ResNet-18 params: L2 penalty value + gradient", goal=0.15, goal_text="ours/torch ≤ 0.15")
    lanes = {"ours": lambda: ours(model)}
    if ctx.torch is not None:
        torch = ctx.torch
        tensors = [t.requires_grad_() for t in shared(torch, model)]

        def theirs():
            for t in tensors:
                t.grad = None
            value = sum(t.pow(2).sum() for t in tensors)
            value.backward()
            return value

        value, g = ours(model)
        ctx.check(row.suite, [value], [theirs()], rtol=1e-5)
        ctx.check(row.suite, trainables(g)[:3], [t.grad for t in tensors[:3]], rtol=1e-6)
        lanes["torch"] = theirs
    return [record(row, ctx.race(lanes))]


def adam_update(ctx):
    """One Adam update of the parameters (a gradient of 0.01 everywhere): ours is ``optimisers.update``, which
    makes a new model and state; torch's ``optim.Adam.step`` (its default, ``foreach``) writes in place.
    Reported: no issue sets a goal for it."""
    model = parameter_set()
    grads = fmap(lambda p: np.full_like(p, 0.01), model, exclude=isnumeric)
    state = setup(Adam(1e-3), model)
    row = Row("ResNet-18 params: an Adam update", goal_text="(reported)",
              note="ours functional (new arrays), torch in place")
    lanes = {"ours": lambda: update(state, model, grads)}
    if ctx.torch is not None:
        torch = ctx.torch
        tensors = [torch.tensor(a, requires_grad=True) for a in trainables(model)]
        for t, g in zip(tensors, trainables(grads)):
            t.grad = torch.tensor(g)
        optimiser = torch.optim.Adam(tensors, lr=1e-3)
        optimiser.step()  # the first step, checked against ours before anything is timed
        ctx.check(row.suite, trainables(update(state, model, grads)[1])[:4], tensors[:4], rtol=1e-5, atol=1e-7)
        lanes["torch"] = optimiser.step
    return [record(row, ctx.race(lanes))]


def bandwidth(ctx):
    """The norm's effective read bandwidth against one large array read by the same kernel (DRAM-bound)."""
    from autodiff._accel import kernels as _kernels

    model = parameter_set()
    nbytes = sum(a.nbytes for a in trainables(model))
    big = np.random.default_rng(0).random(32_000_000 if ctx.quick else 64_000_000, dtype=np.float32)
    rounds = ctx.race({"ours": lambda: total(autodiff.sumsq, model),
                       "single": lambda: _kernels.reduce("sumsq", big)})
    row = record(Row("ResNet-18 params: norm bandwidth / single-array read", goal=0.7, at_least=True,
                     goal_text="≥ 0.7"), rounds, value=("single", "ours"), scale=nbytes / big.nbytes)
    row.ours = None  # the value is a bandwidth ratio, not a time: the chart shows the value itself
    row.note = (f"{nbytes / rounds.median('ours') / 1e9:.1f} GB/s of "
                f"{big.nbytes / rounds.median('single') / 1e9:.1f} GB/s")
    return [row]


def kernel_vs_reference(ctx):
    """Each kernel against its numpy reference from the shared table (``autodiff._accel.kernels.REFERENCE``)."""
    from autodiff._accel import kernels as _kernels

    x = np.random.default_rng(0).standard_normal(4_000_000).astype(np.float32)
    rows = []
    for name in ("sum", "sumsq", "abssum"):
        ctx.check(f"kernel {name}", [_kernels.reduce(name, x)], [_kernels.REFERENCE[name](x)], rtol=1e-9)
        lanes = {"ours": lambda n=name: _kernels.reduce(n, x), "floor": lambda n=name: _kernels.REFERENCE[n](x)}
        rows.append(record(Row(f"kernel {name}, 4M float32 (floor = numpy reference)", goal_text="(reported)"),
                           ctx.race(lanes)))
    return rows


SUITES = [global_norm, l2_value_and_gradient, bandwidth, after_matmul, adam_update]
FULL = [kernel_vs_reference]  # reported only (each kernel against its numpy reference)
