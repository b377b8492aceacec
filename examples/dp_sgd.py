"""DP-SGD (Abadi et al., 2016): every example's gradient clipped to norm ``C``, then summed, noised and averaged.

The per-example gradients of a ``layers.MLP`` come from one batched call, ``vmap(grad(loss), in_axes=(None, 0,
0))``, in the model's structure with a leading batch axis on every leaf; they equal ``torch.func.vmap(grad)`` on
the same weights.  A few private steps train the classifier on three Gaussian blobs.

Run: ``python examples/dp_sgd.py`` or ``python -m examples.dp_sgd``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from autodiff import grad, vmap
from examples import compare_with_torch, training_steps
from layers import MLP
from layers.losses import softmax_cross_entropy
from optimisers import Descent, setup, update
from traversal import fmap, total, trainables

CLIP, NOISE, BATCH, LR = 1.0, 0.8, 64, 0.5
SIZES = [2, 32, 3]


def data(n=512, seed=0):
    """Three Gaussian blobs in the plane, 0/1/2 by blob."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    centres = np.array([[0.0, 1.5], [-1.3, -0.75], [1.3, -0.75]])
    return centres[labels] + 0.6 * rng.standard_normal((n, 2)), labels


def loss(model, x, y):
    """One example's loss: ``x`` of shape ``(2,)`` and one label."""
    return softmax_cross_entropy(model(x), y)


def per_example_gradients(model, x, y):
    """The model's structure with a leading batch axis on every gradient leaf: one ``grad`` per example, in one call."""
    return vmap(grad(loss), in_axes=(None, 0, 0))(model, x, y)


def norms(per_example):
    """Each example's gradient norm over every leaf (``total`` counts a tied array once)."""
    return np.sqrt(total(lambda g: np.sum(g ** 2, axis=tuple(range(1, g.ndim))), per_example))


def clipped_sum(per_example, clip=CLIP):
    """``Σ_i g_i · min(1, C / ‖g_i‖)``, in the model's structure."""
    factors = np.minimum(1.0, clip / np.maximum(norms(per_example), 1e-12))
    return fmap(lambda g: g if g is None else np.tensordot(factors, g, axes=1), per_example)


def private_gradient(model, x, y, rng, clip=CLIP, noise=NOISE):
    """The clipped sum plus Gaussian noise of standard deviation ``noise · C`` on every entry, over the batch size."""
    summed = clipped_sum(per_example_gradients(model, x, y), clip)
    return fmap(lambda g: g if g is None else (g + noise * clip * rng.standard_normal(g.shape)) / len(x), summed)


def accuracy(model, x, labels):
    return float(np.mean(np.argmax(model(x), axis=-1) == labels))


def train(steps=150, seed=0):
    """DP-SGD on random batches; the full-data loss and accuracy after every step."""
    rng = np.random.default_rng(seed)
    x, labels = data()
    model = MLP(SIZES, dtype=np.float64, seed=seed)
    state, curve = setup(Descent(LR), model), []
    for _ in range(steps):
        pick = rng.choice(len(x), BATCH, replace=False)
        state, model = update(state, model, private_gradient(model, x[pick], labels[pick], rng))
        curve.append((float(softmax_cross_entropy(model(x), labels)), accuracy(model, x, labels)))
    return model, np.array(curve)


def torch_per_example_gradients(model, x, y):
    """``torch.func.vmap(grad)`` of torch's cross-entropy on the same weights, in ``trainables`` order."""
    import torch
    from torch.func import functional_call
    from torch.func import grad as tgrad
    from torch.func import vmap as tvmap

    net = torch.nn.Sequential(torch.nn.Linear(*SIZES[:2]), torch.nn.Tanh(), torch.nn.Linear(*SIZES[1:])).double()
    names = ["0.weight", "0.bias", "2.weight", "2.bias"]
    params = {k: torch.tensor(v) for k, v in zip(names, trainables(model))}

    def tloss(p, x, y):
        return torch.nn.functional.cross_entropy(functional_call(net, p, (x[None],)), y[None])

    out = tvmap(tgrad(tloss), in_dims=(None, 0, 0))(params, torch.tensor(x), torch.tensor(y))
    return [out[k].numpy() for k in names]


def main(plot=True):
    model, curve = train(training_steps(150, 5))
    x, labels = data()
    print(f"DP-SGD (C={CLIP}, σ={NOISE}, batch {BATCH}): loss {curve[0, 0]:.3f} -> {curve[-1, 0]:.3f}, "
          f"accuracy {curve[0, 1]:.2f} -> {curve[-1, 1]:.2f}")
    g = per_example_gradients(model, x[:BATCH], labels[:BATCH])
    print(f"per-example gradients: {[a.shape for a in trainables(g)]}")
    if compare_with_torch():
        gap = max(float(np.abs(a - b).max())
                  for a, b in zip(trainables(g), torch_per_example_gradients(model, x[:BATCH], labels[:BATCH])))
        print(f"largest difference to torch.func.vmap(grad): {gap:.2e}")
    if plot:
        start = per_example_gradients(MLP(SIZES, dtype=np.float64), x[:BATCH], labels[:BATCH])
        _plot(curve, norms(start), norms(g))


def _plot(curve, first, last):
    from examples._plot import pyplot, save

    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(curve[:, 0], label="loss")
    left.plot(curve[:, 1], label="accuracy")
    left.set_xlabel("DP-SGD step")
    left.legend()
    right.hist([first, last], bins=20, label=["at initialisation", "after training"])
    right.axvline(CLIP, color="k", linestyle="--", label=f"clip C = {CLIP}")
    right.set_xlabel("per-example gradient norm")
    right.legend()
    print("saved", save(fig, "dp_sgd"))


if __name__ == "__main__":
    main()
