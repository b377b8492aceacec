"""MAML on sine-wave regression: meta-gradients differentiate through the inner SGD step (second order),
taken with ``optimisers.update`` as any training step is.
The meta-loss falls, and the meta-gradient matches torch's ``create_graph=True`` on the same weights and batch.

Run: ``python examples/maml.py`` or ``python -m examples.maml``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import autodiff
from examples import compare_with_torch, training_steps
from layers import MLP
from layers.losses import mse
from optimisers import Adam, Descent, setup, update
from traversal import trainables

INNER_LR = 0.01


def tasks(rng, n_tasks, k=10):
    """``n_tasks`` sine tasks, each a support and a query set of ``k`` points."""
    out = []
    for _ in range(n_tasks):
        amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)
        xs = rng.uniform(-5, 5, (2, k, 1))
        out.append([(x, amplitude * np.sin(x + phase)) for x in xs])
    return out


def adapt(model, x, y):
    """One inner SGD step through ``optimisers.update``: its gradient stays traced, and so does the step,
    so the meta-gradient sees through both."""
    g = autodiff.grad(lambda m: mse(m(x), y))(model)
    _, adapted = update(setup(Descent(INNER_LR), model), model, g)
    return adapted


def meta_loss(model, batch):
    total = 0.0
    for (xs, ys), (xq, yq) in batch:
        total = total + mse(adapt(model, xs, ys)(xq), yq)
    return total / len(batch)


def torch_meta_gradient(model, batch):
    import torch

    params = [torch.tensor(p, requires_grad=True) for p in trainables(model)]

    def net(ps, x):
        h = torch.tensor(x)
        for k in range(0, len(ps), 2):
            h = h @ ps[k].T + ps[k + 1]
            if k < len(ps) - 2:
                h = torch.tanh(h)
        return h

    total = 0.0
    for (xs, ys), (xq, yq) in batch:
        inner = ((net(params, xs) - torch.tensor(ys)) ** 2).mean()
        grads = torch.autograd.grad(inner, params, create_graph=True)
        adapted = [p - INNER_LR * g for p, g in zip(params, grads)]
        total = total + ((net(adapted, xq) - torch.tensor(yq)) ** 2).mean()
    return [g.numpy() for g in torch.autograd.grad(total / len(batch), params)]


def train(steps=300, meta_batch=4, seed=0):
    rng = np.random.default_rng(seed)
    model = MLP([1, 40, 40, 1], dtype=np.float64, seed=seed)
    state, curve = setup(Adam(1e-3), model), []
    for _ in range(steps):
        value, g = autodiff.value_and_grad(meta_loss)(model, tasks(rng, meta_batch))
        state, model = update(state, model, g)
        curve.append(float(value))
    return model, curve


def main(plot=True):
    model, curve = train(training_steps(1000, 10))
    first, last = np.mean(curve[:30]), np.mean(curve[-30:])
    print(f"meta-loss (mean of 30 steps): {first:.3f} at the start, {last:.3f} at the end")
    batch = tasks(np.random.default_rng(1), 4)
    if compare_with_torch():
        ours = trainables(autodiff.grad(meta_loss)(model, batch))
        gap = max(float(np.abs(a - b).max()) for a, b in zip(ours, torch_meta_gradient(model, batch)))
        print(f"largest difference to torch's meta-gradient: {gap:.2e}")
    if plot:
        from examples._plot import pyplot, save

        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(curve, linewidth=0.6, alpha=0.5)
        ax.plot(np.convolve(curve, np.ones(20) / 20, mode="valid"), label="20-step average")
        ax.set_xlabel("meta step")
        ax.set_ylabel("meta-loss after one inner step")
        ax.legend()
        print("saved", save(fig, "maml"))


if __name__ == "__main__":
    main()
