"""Embedding: rows of a matrix picked by integer ids (the pullback scatter-adds repeated ids)."""

from dataclasses import dataclass

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import plain_value, value_of

from ._checks import positive_sizes


@dataclass
class Embedding:
    """A lookup table ``weight[ids]``.

    >>> Embedding.init(10, 4)(np.array([1, 1, 3])).shape
    (3, 4)
    """

    weight: np.ndarray

    @classmethod
    def init(cls, num, dim, seed=0, dtype=np.float32):
        positive_sizes("Embedding.init", num=num, dim=dim)
        return cls(np.random.default_rng(seed).standard_normal((num, dim)).astype(dtype))

    def forward(self, ids, train=False):
        return self(ids), self

    def __call__(self, ids):
        self._check(ids)
        return anp.take(self.weight, ids, axis=0)  # ids batched by vmap too (per-example gradients of a language model)

    def _check(self, ids):
        """Refuse ids outside ``[0, num)``, as torch does (numpy would read ``-1`` as the last row)."""
        ids, num = np.asarray(plain_value(ids)), np.shape(value_of(self.weight))[0]  # batched ids: every example's
        if ids.dtype.kind not in "iu":
            raise TypeError(f"Embedding: ids must be integers, got {ids.dtype} ids; pass class or token ids as "
                            "ints (ids.astype(int) when they are whole numbers held as floats)")
        bad = ids[(ids < 0) | (ids >= num)]
        if bad.size:
            raise IndexError(f"Embedding: ids must lie in [0, {num}) for a table of {num} rows, got {bad[0]}; "
                             f"map it to a valid id, or make the table larger (Embedding.init(num, dim))")
