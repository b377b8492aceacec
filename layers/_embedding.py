"""Embedding: rows of a matrix picked by integer ids (the pullback scatter-adds repeated ids)."""

from dataclasses import dataclass

import numpy as np

import autodiff.numpy as anp


@dataclass
class Embedding:
    """A lookup table ``weight[ids]``.

    >>> Embedding.init(10, 4)(np.array([1, 1, 3])).shape
    (3, 4)
    """

    weight: np.ndarray

    @classmethod
    def init(cls, num, dim, seed=0, dtype=np.float32):
        return cls(np.random.default_rng(seed).standard_normal((num, dim)).astype(dtype))

    def forward(self, ids, train=False):
        return self(ids), self

    def __call__(self, ids):
        return anp.take(self.weight, ids, axis=0)  # ids batched by vmap too (per-example gradients of a language model)
