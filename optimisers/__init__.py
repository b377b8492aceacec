"""Optimisers as walks over (model, state, gradient), in the manner of Optimisers.jl.

``setup(rule, model)`` builds a state tree (tied arrays share one leaf),
``update(state, model, grads)`` returns ``(state, model)`` without modifying
anything, ``freeze``/``thaw``/``adjust`` change the state tree.

>>> import numpy as np
>>> import autodiff, autodiff.numpy as anp
>>> from optimisers import Adam, setup, update
>>> model = {"w": np.array([1.0, -2.0])}
>>> state = setup(Adam(lr=0.1), model)
>>> state, model = update(state, model, autodiff.grad(lambda m: anp.sum(m["w"] ** 2))(model))
>>> model["w"]
array([ 0.9, -1.9])
"""

from ._accel import install as _install_accel
from ._rules import (
    Adam,
    AdamW,
    ClipGrad,
    ClipNorm,
    Descent,
    Momentum,
    Nesterov,
    OptimiserChain,
    SignDecay,
    WeightDecay,
)
from ._tree import Leaf, adjust, freeze, setup, thaw, update

_install_accel()  # update in one walk, beside the reference walks (off under AUTODIFF_REFERENCE=1)

__all__ = [
    "setup", "update", "freeze", "thaw", "adjust", "Leaf",
    "Descent", "Momentum", "Nesterov", "Adam", "AdamW", "WeightDecay", "SignDecay", "ClipGrad", "ClipNorm",
    "OptimiserChain",
]
