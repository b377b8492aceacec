"""Layers for models built on autodiff and traversal: dataclasses, walkable and differentiable.

Every layer has ``forward(x, train=False) -> (y, new_layer)`` (a stateful layer such
as ``BatchNorm`` returns itself with updated running statistics in training, a
stateless one returns itself) and ``__call__(x)`` for evaluation.

>>> import numpy as np
>>> import autodiff
>>> from layers import Dense, Chain
>>> model = Chain([Dense.init(3, 4, seed=0), np.tanh, Dense.init(4, 2, seed=1)])
>>> model(np.ones((5, 3))).shape
(5, 2)
"""

from . import _onednn
from ._chain import MLP, Chain, Residual, forward
from ._conv import Conv2d
from ._dense import Dense
from ._embedding import Embedding
from ._norm import BatchNorm, LayerNorm
from ._pool import AvgPool2d, MaxPool2d, global_avg_pool
from ._resnet import BasicBlock, ResNet, resnet18
from ._torch import load_torch_state_dict, save_torch_state_dict

_onednn.install()  # the optional oneDNN convolutions (the [onednn] extra), beside the numpy reference

__all__ = [
    "Dense", "Conv2d", "BatchNorm", "LayerNorm", "Embedding", "Chain", "Residual", "MLP",
    "MaxPool2d", "AvgPool2d", "global_avg_pool", "BasicBlock", "ResNet", "resnet18",
    "load_torch_state_dict", "save_torch_state_dict", "forward",
]
