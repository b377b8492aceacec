"""Regularised training: an MLP trained with ``loss + λ·total(sumsq, m)`` and with an L1 penalty through
``total(abssum, m)``.  The L2 path equals ``WeightDecay``, gradient for gradient.

Run: ``python examples/regularised_training.py`` or ``python -m examples.regularised_training``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import autodiff
from examples import training_steps
from layers import MLP
from layers.losses import mse
from optimisers import Descent, OptimiserChain, WeightDecay, setup, update
from traversal import total

LAM = 1e-2


def data(n=128, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (n, 2))
    return x, np.sin(x[:, :1]) * np.cos(x[:, 1:])


def loss(model, x, y):
    return mse(model(x), y)


def l2_loss(model, x, y):
    return loss(model, x, y) + LAM / 2 * total(autodiff.sumsq, model)


def l1_loss(model, x, y):
    return loss(model, x, y) + LAM * total(autodiff.abssum, model)


def train(objective, steps=300, lr=0.1, seed=0):
    model = MLP([2, 32, 32, 1], dtype=np.float64, seed=seed)
    x, y = data()
    state = setup(Descent(lr), model)
    curve = []
    for _ in range(steps):
        value, g = autodiff.value_and_grad(objective)(model, x, y)
        state, model = update(state, model, g)
        curve.append(float(value))
    return model, curve


def penalty_equals_weight_decay(model, x, y):
    """One step on ``loss + λ/2 Σ‖p‖²`` with Descent, and one on ``loss`` with WeightDecay(λ) then Descent."""
    _, by_penalty = update(setup(Descent(0.1), model), model, autodiff.grad(l2_loss)(model, x, y))
    chain = OptimiserChain(WeightDecay(LAM), Descent(0.1))
    _, by_decay = update(setup(chain, model), model, autodiff.grad(loss)(model, x, y))
    return by_penalty, by_decay


def main(plot=True):
    x, y = data()
    n = training_steps(300, 10)
    (l2_model, l2_curve), (l1_model, l1_curve) = train(l2_loss, n), train(l1_loss, n)
    a, b = penalty_equals_weight_decay(l2_model, x, y)
    from traversal import trainables

    gap = max(float(np.abs(p - q).max()) for p, q in zip(trainables(a), trainables(b)))
    print(f"final loss with L2 penalty: {l2_curve[-1]:.5f}, with L1 penalty: {l1_curve[-1]:.5f}")
    print(f"L1 model: {sum(int((np.abs(p) < 1e-3).sum()) for p in trainables(l1_model))} weights below 1e-3")
    print(f"L2 penalty step vs WeightDecay step, largest difference: {gap:.2e}")
    if plot:
        from examples._plot import pyplot, save

        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.semilogy(l2_curve, label="loss + λ/2·total(sumsq)")
        ax.semilogy(l1_curve, label="loss + λ·total(abssum)")
        ax.set_xlabel("step")
        ax.set_ylabel("objective")
        ax.legend()
        print("saved", save(fig, "regularised_training"))


if __name__ == "__main__":
    main()
