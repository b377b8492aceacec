"""The model-wide reductions on a ResNet-18-shaped parameter set (62 float32 arrays, 11.7M values), beside
torch: the global norm, the L2 penalty's value and gradient, and the effective memory bandwidth.
Run alone: ``python -m bench.kernels``."""

import math

import numpy as np

import autodiff
import layers
from autodiff import _parallel
from traversal import total, trainables

from ._timing import Row


def parameter_set():
    return layers.resnet18(1000)


def global_norm(ctx):
    model = parameter_set()
    arrays = trainables(model)
    ours = lambda: math.sqrt(total(autodiff.sumsq, model))  # noqa: E731
    serial = Row("ResNet-18 params: global norm (serial)", goal=0.9, goal_text="ours/torch ≤ 0.9")
    overall = Row("ResNet-18 params: global norm", goal=0.6, goal_text="ours/torch ≤ 0.6",
                  note="two threads for models over 8 MB")
    if ctx.torch is not None:
        tensors = [ctx.torch.tensor(a) for a in arrays]
        theirs = lambda: ctx.torch.nn.utils.get_total_norm(tensors)  # noqa: E731
        ctx.check(serial.suite, [ours()], [float(theirs())], rtol=1e-5)
        serial.torch = overall.torch = ctx.time(theirs)
    overall.ours = ctx.time(ours)
    previous = _parallel.set_threads(1)
    try:
        serial.ours = ctx.time(ours)
    finally:
        _parallel.set_threads(previous)
    for row in (serial, overall):
        row.value = row.ratio if row.torch else None
    return [serial, overall]


def after_matmul(ctx):
    """The global norm right after a large matmul (BLAS threads may still be spinning) against quiet."""
    import time

    model = parameter_set()
    a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    quiet = ctx.time(lambda: total(autodiff.sumsq, model))
    delays = []
    for _ in range(15):
        a @ a
        start = time.perf_counter()
        total(autodiff.sumsq, model)
        delays.append(time.perf_counter() - start - quiet)
    extra_ms = float(np.median(delays)) * 1e3
    return [Row("ResNet-18 params: norm right after a 1024² matmul", ours=quiet + extra_ms / 1e3,
                value=extra_ms, goal=1.0, goal_text="≤ 1 ms extra", note=f"{extra_ms:+.3f} ms against quiet")]


def l2_value_and_gradient(ctx):
    model = parameter_set()
    ours = autodiff.value_and_grad(lambda m: total(autodiff.sumsq, m))
    row = Row("ResNet-18 params: L2 penalty value + gradient", goal=0.15, goal_text="ours/torch ≤ 0.15")
    if ctx.torch is not None:
        torch = ctx.torch
        tensors = [torch.tensor(a, requires_grad=True) for a in trainables(model)]

        def theirs():
            for t in tensors:
                t.grad = None
            value = sum(t.pow(2).sum() for t in tensors)
            value.backward()
            return value

        value, g = ours(model)
        ctx.check(row.suite, [value], [float(theirs())], rtol=1e-5)
        ctx.check(row.suite, trainables(g)[:3], [t.grad.numpy() for t in tensors[:3]], rtol=1e-6)
        row.torch = ctx.time(theirs)
    row.ours = ctx.time(lambda: ours(model))
    row.value = row.ratio if row.torch else None
    return [row]


def bandwidth(ctx):
    """The norm's effective read bandwidth against one large array read by the same kernel (DRAM-bound)."""
    from autodiff import _kernels

    model = parameter_set()
    nbytes = sum(a.nbytes for a in trainables(model))
    big = np.random.default_rng(0).standard_normal(32_000_000 if ctx.quick else 64_000_000).astype(np.float32)
    best = big.nbytes / ctx.time(lambda: _kernels.reduce("sumsq", big))
    effective = nbytes / ctx.time(lambda: total(autodiff.sumsq, model))
    return [Row("ResNet-18 params: norm bandwidth / single-array read", value=effective / best, goal=0.7,
                at_least=True, goal_text="≥ 0.7",
                note=f"{effective / 1e9:.1f} GB/s of {best / 1e9:.1f} GB/s")]


def kernel_vs_reference(ctx):
    """Each kernel against its numpy reference from the shared table (``autodiff._kernels.REFERENCE``)."""
    from autodiff import _kernels

    x = np.random.default_rng(0).standard_normal(4_000_000).astype(np.float32)
    rows = []
    for name in ("sum", "sumsq", "abssum", "maxabs"):
        ctx.check(f"kernel {name}", [_kernels.reduce(name, x)], [_kernels.REFERENCE[name](x)], rtol=1e-9)
        rows.append(Row(f"kernel {name}, 4M float32 (floor = numpy reference)", goal_text="(reported)",
                        ours=ctx.time(lambda n=name: _kernels.reduce(n, x)),
                        floor=ctx.time(lambda n=name: _kernels.REFERENCE[n](x))))
    return rows


SUITES = [global_norm, l2_value_and_gradient, bandwidth, after_matmul, kernel_vs_reference]

if __name__ == "__main__":
    from .__main__ import main

    main(["--only", "kernels"])
