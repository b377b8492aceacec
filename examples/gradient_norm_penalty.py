"""Gradient-norm penalty: train with ``loss + μ·total((x, dx) -> sumsq(dx), m, grad(loss)(m))``, a double
backward through ``total``.  Its gradients agree with torch's ``create_graph=True`` on the same weights.

Run: ``python examples/gradient_norm_penalty.py`` or ``python -m examples.gradient_norm_penalty``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import autodiff
from examples import compare_with_torch, training_steps
from layers import MLP
from layers.losses import softmax_cross_entropy
from optimisers import Adam, setup, update
from traversal import total, trainables

MU = 0.1


def data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4))
    return x, (x[:, 0] * x[:, 1] > 0).astype(int) + (x[:, 2] > 1).astype(int)


def loss(model, x, labels):
    return softmax_cross_entropy(model(x), labels)


def penalised(model, x, labels):
    value, g = autodiff.value_and_grad(loss)(model, x, labels)
    return value + MU * total(lambda p, dp: autodiff.sumsq(dp), model, g)


def torch_gradients(model, x, labels):
    """The same objective in torch, differentiated with create_graph=True."""
    import torch

    params = [torch.tensor(p, requires_grad=True) for p in trainables(model)]
    h = torch.tensor(x)
    for k in range(0, len(params), 2):
        h = h @ params[k].T + params[k + 1]
        if k < len(params) - 2:
            h = torch.tanh(h)
    value = torch.nn.functional.cross_entropy(h, torch.tensor(labels))
    grads = torch.autograd.grad(value, params, create_graph=True)
    penalty = sum((g * g).sum() for g in grads)
    return [g.numpy() for g in torch.autograd.grad(value + MU * penalty, params)]


def train(steps=150):
    model = MLP([4, 16, 16, 3], dtype=np.float64, seed=1)
    x, labels = data()
    state, curve = setup(Adam(0.02), model), []
    for _ in range(steps):
        value, g = autodiff.value_and_grad(penalised)(model, x, labels)
        state, model = update(state, model, g)
        curve.append(float(value))
    return model, curve


def main(plot=True):
    model, curve = train(training_steps(150, 5))
    x, labels = data()
    if compare_with_torch():
        ours = trainables(autodiff.grad(penalised)(model, x, labels))
        theirs = torch_gradients(model, x, labels)
        gap = max(float(np.abs(a - b).max()) for a, b in zip(ours, theirs))
        print(f"largest difference to torch's double backward: {gap:.2e}")
    print(f"penalised loss: {curve[0]:.4f} -> {curve[-1]:.4f}")
    if plot:
        from examples._plot import pyplot, save

        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(curve)
        ax.set_xlabel("step")
        ax.set_ylabel("loss + μ‖∇loss‖²")
        print("saved", save(fig, "gradient_norm_penalty"))


if __name__ == "__main__":
    main()
