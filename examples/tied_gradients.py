"""Where tied gradients go: a tiny language model whose output projection reuses the embedding matrix.

The gradient puts the tie's accumulated total at its first occurrence (``None`` at the second), the global
gradient norm through ``total`` counts the tie once, and an optimiser step applies it once and keeps the tie.

Run: ``python examples/tied_gradients.py`` or ``python -m examples.tied_gradients``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dataclasses import dataclass

import numpy as np

import autodiff
import autodiff.numpy as anp
from layers import Dense, Embedding
from layers.losses import softmax_cross_entropy
from optimisers import Descent, setup, update
from traversal import total


@dataclass
class TiedLM:
    """Embed a token, mix it, and score the next token against the same embedding matrix."""

    embed: Embedding
    mix: Dense
    head: Dense  # head.weight is embed.weight

    def __call__(self, ids):
        return self.head(anp.tanh(self.mix(self.embed(ids))))


def model(vocab=12, dim=6, seed=0):
    embed = Embedding.init(vocab, dim, seed=seed)
    embed.weight = embed.weight.astype(np.float64)
    head = Dense(embed.weight, np.zeros(vocab))
    return TiedLM(embed, Dense.init(dim, dim, seed=seed + 1, dtype=np.float64), head)


def batch(vocab=12, n=32, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, n)
    return ids, (ids + 1) % vocab  # learn "the next token"


def loss(m, ids, targets):
    return softmax_cross_entropy(m(ids), targets)


def global_norm(m, g):
    return float(np.sqrt(total(lambda x, dx: autodiff.sumsq(dx), m, g)))


def contributions(m, ids, targets):
    """The tied matrix's gradient from its use as the embedding and from its use as the head, separately."""
    untied = model()
    untied.head = type(untied.head)(untied.embed.weight.copy(), untied.head.bias)
    g = autodiff.grad(loss)(untied, ids, targets)
    return g.embed.weight, g.head.weight


def main(plot=True):
    m, (ids, targets) = model(), batch()
    g = autodiff.grad(loss)(m, ids, targets)
    print(autodiff.show(g, "grad"))
    print(autodiff.ties(m, g, "model"))
    print(f"parameters counted by total: {int(total(np.size, m))} (the tied matrix once)")
    print(f"global gradient norm: {global_norm(m, g):.6f}")
    state = setup(Descent(0.5), m)
    state, stepped = update(state, m, g)
    print(f"after one step the tie holds: {stepped.embed.weight is stepped.head.weight}")
    if plot:
        from examples._plot import pyplot, save

        as_embed, as_head = contributions(m, ids, targets)
        panels = [(as_embed, "from the embedding"), (as_head, "from the output head"),
                  (g.embed.weight, "grad at embed.weight (the sum)")]
        plt = pyplot()
        fig, axes = plt.subplots(1, 3, figsize=(9, 3.2))
        scale = max(float(np.abs(a).max()) for a, _ in panels)
        for ax, (a, title) in zip(axes, panels):
            ax.imshow(a, cmap="RdBu", vmin=-scale, vmax=scale)
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("embedding dim")
        axes[0].set_ylabel("token")
        fig.suptitle("the tied matrix's gradient; grad at head.weight is None", fontsize=10)
        print("saved", save(fig, "tied_gradients"))


if __name__ == "__main__":
    main()
