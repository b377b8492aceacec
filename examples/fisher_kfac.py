"""The empirical Fisher's diagonal of an MLP, and K-FAC's factors for one Dense layer, from per-example gradients.

``vmap(grad(loss), in_axes=(None, 0, 0))`` gives every example's gradient in the model's structure; the
empirical Fisher's diagonal is their mean square, leaf by leaf.  For a Dense layer ``s = W a + b`` an example's
weight gradient is the outer product ``g aᵀ`` of the gradient ``g = ∂loss/∂s`` and the layer's input ``a``, so
the layer's Fisher block ``E[vec(g aᵀ) vec(g aᵀ)ᵀ] = E[(g gᵀ) ⊗ (a aᵀ)]``; K-FAC (Martens & Grosse, 2015)
approximates it by ``G ⊗ A`` with ``A = E[a aᵀ]`` and ``G = E[g gᵀ]``, two small matrices.  The per-example ``g``
come from ``vmap(grad)`` of the rest of the network as a function of ``s``.

Run: ``python examples/fisher_kfac.py`` or ``python -m examples.fisher_kfac``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from autodiff import grad, vmap
from layers import MLP, Chain
from layers.losses import softmax_cross_entropy
from traversal import fmap

SIZES = [6, 8, 4]


def data(n=256, seed=0):
    """Inputs and labels that depend on them (a noisy linear rule)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, SIZES[0]))
    rule = rng.standard_normal((SIZES[0], SIZES[-1]))
    return x, np.argmax(x @ rule + 0.5 * rng.standard_normal((n, SIZES[-1])), axis=-1)


def loss(model, x, y):
    """One example's loss."""
    return softmax_cross_entropy(model(x), y)


def per_example_gradients(model, x, y):
    return vmap(grad(loss), in_axes=(None, 0, 0))(model, x, y)


def fisher_diagonal(model, x, y):
    """``E[g ⊙ g]`` over the examples, in the model's structure (``None`` where nothing is trainable)."""
    return fmap(lambda g: g if g is None else np.mean(g ** 2, axis=0), per_example_gradients(model, x, y))


def layer_inputs_and_output_gradients(model, k, x, y):
    """For the Dense layer ``model.layers[k]``: each example's input ``a`` ``(n, in)`` and ``g = ∂loss/∂s``
    ``(n, out)``, the gradient at its output ``s``, by ``vmap(grad)`` of the layers after it."""
    before, layer, after = Chain(model.layers[:k]), model.layers[k], Chain(model.layers[k + 1:])
    a = before(x)
    g = vmap(grad(lambda s, y: softmax_cross_entropy(after(s), y)))(layer(a), y)
    return a, g


def kfac_factors(model, k, x, y):
    """K-FAC's pair for the Dense layer ``model.layers[k]``: ``A = E[a aᵀ]`` (in, in) and ``G = E[g gᵀ]`` (out, out)."""
    a, g = layer_inputs_and_output_gradients(model, k, x, y)
    return a.T @ a / len(a), g.T @ g / len(g)


def fisher_block(model, k, x, y):
    """The exact empirical Fisher block of ``model.layers[k].weight`` (row-major ``vec``), from per-example
    gradients: ``(out·in, out·in)``."""
    w = per_example_gradients(model, x, y).layers[k].weight
    flat = w.reshape(len(w), -1)
    return flat.T @ flat / len(w)


def main(plot=True):
    x, y = data()
    model = MLP(SIZES, dtype=np.float64, seed=1)
    diagonal = fisher_diagonal(model, x, y)
    print("empirical Fisher diagonal, mean per leaf:",
          {f"layers[{k}].{name}": f"{getattr(diagonal.layers[k], name).mean():.2e}"
           for k in (0, 2) for name in ("weight", "bias")})
    k = 2
    a, g = layer_inputs_and_output_gradients(model, k, x, y)
    weights = per_example_gradients(model, x, y).layers[k].weight
    gap = float(np.abs(weights - np.einsum("ni,nj->nij", g, a)).max())
    print(f"layers[{k}]: the per-example weight gradient is g aᵀ (largest difference {gap:.1e})")
    A, G = kfac_factors(model, k, x, y)
    exact, approx = fisher_block(model, k, x, y), np.kron(G, A)
    error = np.linalg.norm(exact - approx) / np.linalg.norm(exact)
    print(f"layers[{k}]: K-FAC's G ⊗ A ({G.shape} ⊗ {A.shape}) against the exact Fisher block {exact.shape}: "
          f"relative error {error:.2f}")
    if plot:
        _plot(exact, approx)


def _plot(exact, approx):
    from examples._plot import pyplot, save

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    bound = np.abs(exact).max()
    for ax, block, title in zip(axes, (exact, approx), ("exact E[(g gᵀ) ⊗ (a aᵀ)]", "K-FAC  E[g gᵀ] ⊗ E[a aᵀ]")):
        image = ax.imshow(block, cmap="RdBu_r", vmin=-bound, vmax=bound)
        ax.set_title(title)
    fig.colorbar(image, ax=axes, shrink=0.8)
    print("saved", save(fig, "fisher_kfac"))


if __name__ == "__main__":
    main()
