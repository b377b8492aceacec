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

from ._timing import median_seconds, try_torch

GOALS = {"mlp step / numpy floor": 1.15, "big hvp / torch": 1.3, "grad-norm penalty / torch": 1.3,
         "small hvp / torch": 2.0}


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


def _close(ours, theirs, rtol=2e-3, atol=1e-5):
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def step_suite(torch, results):
    params, x, onehot = make([784, 512, 512, 10], 128)
    ours = autodiff.grad(loss)
    floor = numpy_step(params, x, onehot)
    _close([ours(params, x, onehot)[k] for k in params], [floor[k] for k in params])
    row = {"ours": median_seconds(lambda: ours(params, x, onehot)),
           "floor": median_seconds(lambda: numpy_step(params, x, onehot))}
    if torch is not None:
        ts, tx, toh = _torch_setup(torch, params, x, onehot)
        row["torch"] = median_seconds(lambda: torch.autograd.grad(torch_loss(torch, ts, tx, toh), ts))
    results["mlp step / numpy floor"] = row


def hvp_suite(torch, results, sizes, batch, name):
    params, x, onehot = make(sizes, batch, seed=1)
    v = {k: np.random.default_rng(2).standard_normal(p.shape).astype(np.float32) for k, p in params.items()}

    def ours():
        return autodiff.hvp(lambda p: loss(p, x, onehot), (params,), (v,))[0]

    row = {"ours": median_seconds(ours)}
    if torch is not None:
        ts, tx, toh = _torch_setup(torch, params, x, onehot)
        tv = [torch.tensor(v[k]) for k in params]

        def theirs():
            gs = torch.autograd.grad(torch_loss(torch, ts, tx, toh), ts, create_graph=True)
            return torch.autograd.grad(sum((g * w).sum() for g, w in zip(gs, tv)), ts)

        _close([ours()[k] for k in params], [t.numpy() for t in theirs()])
        row["torch"] = median_seconds(theirs)
    results[name] = row


def penalty_suite(torch, results):
    params, x, onehot = make([784, 512, 512, 10], 128, seed=3)

    def penalised(p):
        value, g = autodiff.value_and_grad(lambda q: loss(q, x, onehot))(p)
        return value + 0.1 * total(autodiff.sumsq, g)

    ours = autodiff.grad(penalised)
    row = {"ours": median_seconds(lambda: ours(params))}
    if torch is not None:
        ts, tx, toh = _torch_setup(torch, params, x, onehot)

        def theirs():
            lval = torch_loss(torch, ts, tx, toh)
            gs = torch.autograd.grad(lval, ts, create_graph=True)
            return torch.autograd.grad(lval + 0.1 * sum((g * g).sum() for g in gs), ts)

        _close([ours(params)[k] for k in params], [t.numpy() for t in theirs()])
        row["torch"] = median_seconds(theirs)
    results["grad-norm penalty / torch"] = row


def run(quiet=False):
    torch = try_torch(threads=None)
    results = {}
    step_suite(torch, results)
    hvp_suite(torch, results, [784, 512, 512, 10], 128, "big hvp / torch")
    penalty_suite(torch, results)
    hvp_suite(torch, results, [64, 64, 10], 32, "small hvp / torch")
    if not quiet:
        for name, row in results.items():
            base = row.get("floor") if "floor" in name else row.get("torch")
            ratio = row["ours"] / base if base else float("nan")
            cells = "  ".join(f"{k} {v * 1e3:8.3f} ms" for k, v in row.items())
            verdict = "held" if ratio <= GOALS[name] else "MISSED"
            print(f"{name:>26}: {cells}  ratio {ratio:.2f} (goal ≤ {GOALS[name]}: {verdict})")
    return results


if __name__ == "__main__":
    run()
