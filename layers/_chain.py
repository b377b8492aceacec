"""Composition: Chain, a residual wrapper, an MLP helper, and ``forward`` for any layer or function."""

from dataclasses import dataclass, field

import numpy as np

from ._dense import Dense


def forward(layer, x, train=False):
    """``(y, new_layer)`` for a layer, or ``(layer(x), layer)`` for a plain function such as ``np.tanh``."""
    step = getattr(layer, "forward", None)
    if step is None:
        return layer(x), layer
    return step(x, train)


@dataclass
class Chain:
    """Apply layers in order; in training, stateful layers come back updated.

    >>> Chain([np.negative, np.exp])(np.zeros(2))
    array([1., 1.])
    """

    layers: list = field(default_factory=list)

    def __post_init__(self):
        if not isinstance(self.layers, (list, tuple)):
            raise TypeError(f"Chain: expected a list of layers, got a {type(self.layers).__name__}; pass "
                            "Chain([layer, ...]), each a layer or a function")
        for k, layer in enumerate(self.layers):
            if not callable(layer):
                raise TypeError(f"Chain: layers[{k}] is a {type(layer).__name__}, which cannot be called; pass "
                                "layers and functions only (Chain([Dense.init(2, 3), np.tanh]))")

    def forward(self, x, train=False):
        new = []
        for layer in self.layers:
            x, layer = forward(layer, x, train)
            new.append(layer)
        return x, Chain(new)

    def __call__(self, x):
        return self.forward(x)[0]


@dataclass
class Residual:
    """``activation(inner(x) + shortcut(x))``; ``shortcut=None`` is the identity.

    >>> Residual(Chain([np.negative]))(np.ones(2))
    array([0., 0.])
    """

    inner: object
    shortcut: object = None
    activation: object = None

    def forward(self, x, train=False):
        y, inner = forward(self.inner, x, train)
        skip, shortcut = (x, None) if self.shortcut is None else forward(self.shortcut, x, train)
        out = y + skip
        if self.activation is not None:
            out = self.activation(out)
        return out, Residual(inner, shortcut, self.activation)

    def __call__(self, x):
        return self.forward(x)[0]


def MLP(sizes, activation=np.tanh, seed=0, dtype=np.float32):
    """Dense layers of the given sizes with ``activation`` between them.

    >>> MLP([4, 8, 2])(np.ones((3, 4))).shape
    (3, 2)
    """
    layers = []
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(Dense.init(n_in, n_out, seed=seed + k, dtype=dtype))
        if k < len(sizes) - 2:
            layers.append(activation)
    return Chain(layers)
