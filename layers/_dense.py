"""Dense: ``x @ weight.T + bias``, weight laid out ``(out, in)`` as in torch.nn.Linear."""

from dataclasses import dataclass

import numpy as np

from autodiff.nn.functional import linear

from ._checks import positive_sizes


@dataclass
class Dense:
    """A fully connected layer.

    >>> layer = Dense.init(3, 2, seed=0)
    >>> layer.weight.shape, layer(np.ones((4, 3))).shape
    ((2, 3), (4, 2))
    """

    weight: np.ndarray
    bias: np.ndarray

    @classmethod
    def init(cls, n_in, n_out, seed=0, dtype=np.float32):
        """Uniform(-1/sqrt(n_in), 1/sqrt(n_in)) weights and biases, as torch.nn.Linear."""
        positive_sizes("Dense.init", n_in=n_in, n_out=n_out)
        rng = np.random.default_rng(seed)
        bound = 1 / np.sqrt(n_in)
        weight = rng.uniform(-bound, bound, (n_out, n_in)).astype(dtype)
        return cls(weight, rng.uniform(-bound, bound, n_out).astype(dtype))

    def forward(self, x, train=False):
        return self(x), self

    def __call__(self, x):
        return linear(x, self.weight, self.bias)
