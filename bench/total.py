"""total(f, model) side by side with torch: the seed model, the Optimisers#171 model, and leaf scaling.

Run: ``python -m bench.total``.  Values and gradients are checked against torch before timing.
"""

import dataclasses

import numpy as np

import autodiff
import autodiff.numpy as anp
from traversal import total, trainable, trainables

from ._timing import median_seconds, try_torch


@dataclasses.dataclass
class Dense:
    weight: np.ndarray
    bias: np.ndarray
    activation: object = np.tanh


@dataclasses.dataclass
class BatchNorm:
    beta: np.ndarray
    gamma: np.ndarray
    running_mean: np.ndarray
    running_var: np.ndarray


@trainable.register(BatchNorm)
def _(layer):
    return ("beta", "gamma")


def seed_model():
    return {"x": np.array([3.0, 4.0]), "y": (np.sin, np.array([5.0])), "z": (6, 7)}


def optimisers171_model():
    """Dense 128→128 ×2, BatchNorm(128), a function layer, Dense ×2; float32; 10 trainable arrays."""
    rng = np.random.default_rng(0)

    def dense():
        return Dense(rng.standard_normal((128, 128)).astype(np.float32), np.zeros(128, np.float32))

    ones, zeros = np.ones(128, np.float32), np.zeros(128, np.float32)
    return [dense(), dense(), BatchNorm(zeros.copy(), ones.copy(), zeros.copy(), ones.copy()), np.tanh,
            dense(), dense()]


def chain_model(n):
    return [{"w": np.full(3, 0.1 * k)} for k in range(n)]


sumsq = autodiff.sumsq


GOALS = {  # suite: (goal in µs or ratio, what it means)
    "seed total(norm)": (3.0, "µs"),
    "seed grad total(norm)": (12.0, "µs"),
    "#171 total(sumsq)": (12.0, "µs"),
    "#171 grad total(sumsq)": (40.0, "µs"),
    "leaf scaling 1600/100": (1.3, "× per-leaf cost"),
}


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

    return tensors, forward, forward_backward


def _suite(name_fwd, name_grad, model, f, f_torch, torch, results):
    fwd = lambda: total(f, model)  # noqa: E731
    gradient = autodiff.grad(lambda m: total(f, m))
    results[name_fwd] = {"ours": median_seconds(fwd)}
    results[name_grad] = {"ours": median_seconds(lambda: gradient(model))}
    if torch is None:
        return
    tensors, t_fwd, t_fb = _torch_side(torch, model, f_torch)
    np.testing.assert_allclose(float(fwd()), float(t_fwd()), rtol=1e-5)
    ours_grads = [g for g in _leaves_of(gradient(model))]
    for a, b in zip(ours_grads, t_fb()):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-4, atol=1e-6)
    results[name_fwd]["torch"] = median_seconds(t_fwd)
    results[name_grad]["torch"] = median_seconds(t_fb)


def _leaves_of(g):
    from traversal import fleaves

    return [x for x in fleaves(g) if isinstance(x, np.ndarray)]


def scaling():
    per_leaf = {}
    for n in (100, 1600):
        model = chain_model(n)
        gradient = autodiff.grad(lambda m: total(sumsq, m))
        per_leaf[n] = median_seconds(lambda: gradient(model), repeats=5) / n  # noqa: B023
    return per_leaf


def run(quiet=False):
    torch = try_torch()
    results = {}
    _suite("seed total(norm)", "seed grad total(norm)", seed_model(), anp.linalg.norm,
           lambda t: t.norm(), torch, results)
    _suite("#171 total(sumsq)", "#171 grad total(sumsq)", optimisers171_model(), sumsq,
           lambda t: (t * t).sum(), torch, results)
    per_leaf = scaling()
    results["leaf scaling 1600/100"] = {"ratio": per_leaf[1600] / per_leaf[100],
                                        "per leaf at 100 (µs)": per_leaf[100] * 1e6,
                                        "per leaf at 1600 (µs)": per_leaf[1600] * 1e6}
    if not quiet:
        _print(results)
    return results


def _print(results):
    for name, row in results.items():
        goal, unit = GOALS[name]
        if "ratio" in row:
            held = row["ratio"] <= goal
            print(f"{name:>24}: {row['ratio']:.2f}{unit} (per leaf {row['per leaf at 100 (µs)']:.2f} → "
                  f"{row['per leaf at 1600 (µs)']:.2f} µs)  goal ≤ {goal}: {'held' if held else 'MISSED'}")
            continue
        ours = row["ours"] * 1e6
        torch_part = f"  torch {row['torch'] * 1e6:7.1f} µs  ratio {ours / (row['torch'] * 1e6):.2f}" \
            if "torch" in row else ""
        print(f"{name:>24}: ours {ours:7.1f} µs{torch_part}  goal ≤ {goal} {unit}: "
              f"{'held' if ours <= goal else 'MISSED'}")


if __name__ == "__main__":
    run()
