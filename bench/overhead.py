"""Per-op overhead: a chain of 100 elementwise ops on a 10-element float64 array, forward + backward,
beside torch (single-threaded) and the plain-numpy forward.  Run alone: ``python -m bench.overhead``."""

import numpy as np

import autodiff
import autodiff.numpy as anp

from ._timing import Row

N_OPS = 100


def chain(x, lib):
    """25 rounds of (sin, * 0.9, + 0.1, tanh): 100 elementwise ops, then a sum."""
    for _ in range(N_OPS // 4):
        x = lib.tanh(lib.sin(x) * 0.9 + 0.1)
    return x.sum()


def per_op_overhead(ctx):
    x = np.linspace(-1.0, 1.0, 10)
    ours = autodiff.grad(lambda x: chain(x, anp))
    row = Row("per-op overhead (µs/op, fwd+bwd)", goal=2.5, goal_text="≤ 2.5 µs/op")
    torch = ctx.torch
    if torch is not None:
        t = torch.tensor(x)

        def torch_step():
            tt = t.clone().requires_grad_(True)
            chain(tt, torch).backward()
            return tt.grad

        ctx.check(row.suite, [ours(x)], [torch_step().numpy()], rtol=1e-10)
        row.torch = ctx.time(torch_step) / N_OPS
    row.ours = ctx.time(lambda: ours(x)) / N_OPS
    row.floor = ctx.time(lambda: chain(x, np)) / N_OPS
    row.value = row.ours * 1e6
    row.note = "floor = numpy forward only"
    return [row]


SUITES = [per_op_overhead]

if __name__ == "__main__":
    from .__main__ import main

    main(["--only", "overhead"])
