"""The tanh MLP classifier several tasks share, and its torch twin on the same weights."""

import numpy as np

from layers import MLP
from layers.losses import softmax_cross_entropy
from traversal import trainables


def classifier(sizes, batch, seed=0):
    """``(model, x, labels)``: ``layers.MLP(sizes)`` in float64 with tanh, a standard normal batch, integer labels."""
    rng = np.random.default_rng(seed)
    model = MLP(sizes, dtype=np.float64, seed=seed)
    return model, rng.standard_normal((batch, sizes[0])), rng.integers(0, sizes[-1], batch)


def loss(model, x, labels):
    """Mean softmax cross-entropy of the model's logits."""
    return softmax_cross_entropy(model(x), labels)


def torch_params(torch, model, requires_grad=False):
    """The model's weights and biases as torch tensors, in ``trainables`` order (``destructure``'s)."""
    return [torch.tensor(p, requires_grad=requires_grad) for p in trainables(model)]


def torch_net(torch, ps, x):
    """``layers.MLP``'s forward in torch: ``linear`` (as ``nn.Linear``) with tanh between, weights ``(out, in)``."""
    linear = torch.nn.functional.linear
    h = x
    for k in range(0, len(ps), 2):
        h = linear(h, ps[k], ps[k + 1])
        if k < len(ps) - 2:
            h = torch.tanh(h)
    return h
