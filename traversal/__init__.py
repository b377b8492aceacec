"""traversal: Functors/Optimisers-style walks over nested models.

Here now: the functor protocol (shared with ``autodiff``), key paths and
trainability.  The composable walks (``fmap`` and family), ``destructure``
and ``total`` arrive with their issues; nothing here pretends to do them.

>>> import numpy as np
>>> import traversal
>>> traversal.trainables({"w": np.ones(2), "n": 3})
[array([1., 1.])]
"""

from ._functor import children, isleaf, leaf, rebuild, register, register_leaf
from ._keypath import KeyPath, getkeypath, haskeypath, setkeypath
from ._trainable import isnumeric, trainable, trainables

__all__ = [
    "children", "rebuild", "register", "register_leaf", "leaf", "isleaf",
    "KeyPath", "getkeypath", "haskeypath", "setkeypath",
    "isnumeric", "trainable", "trainables",
]
