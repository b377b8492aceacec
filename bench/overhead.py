"""Per-op overhead: a chain of 100 elementwise ops on a 10-element float64 array, forward+backward.

Side by side in one process: ours (autodiff.grad), torch (backward()) and the
plain-numpy forward alone (the floor: no differentiation at all).
Run: ``python -m bench.overhead``.
"""

import numpy as np

import autodiff
import autodiff.numpy as anp

from ._timing import median_seconds, try_torch

N_OPS = 100
GOAL_US_PER_OP = 2.5


def chain(x, lib):
    """25 rounds of (sin, * 0.9, + 0.1, tanh): 100 elementwise ops, then a sum."""
    for _ in range(N_OPS // 4):
        x = lib.tanh(lib.sin(x) * 0.9 + 0.1)
    return x.sum()


def run(quiet=False):
    x = np.linspace(-1.0, 1.0, 10)
    ours = autodiff.grad(lambda x: chain(x, anp))
    results = {"ours": median_seconds(lambda: ours(x)), "numpy forward": median_seconds(lambda: chain(x, np))}
    torch = try_torch()
    if torch is not None:
        t = torch.tensor(x)

        def torch_step():
            tt = t.clone().requires_grad_(True)
            chain(tt, torch).backward()
            return tt.grad

        np.testing.assert_allclose(ours(x), torch_step().numpy(), rtol=1e-10)
        results["torch"] = median_seconds(torch_step)
    per_op = {k: v / N_OPS * 1e6 for k, v in results.items()}
    if not quiet:
        for name, us in per_op.items():
            print(f"{name:>14}: {us:6.2f} us/op")
        if "torch" in per_op:
            print(f"{'ours / torch':>14}: {per_op['ours'] / per_op['torch']:6.2f}x")
        held = "held" if per_op["ours"] <= GOAL_US_PER_OP else "MISSED"
        print(f"{'goal':>14}: <= {GOAL_US_PER_OP} us/op forward+backward ({held})")
    return per_op


if __name__ == "__main__":
    run()
