"""traversal: Functors/Optimisers-style walks over nested models.

The functor protocol (shared with ``autodiff``), composable walks and the
``fmap`` family, key paths, trainability, ``destructure`` and ``total``.

>>> import numpy as np
>>> import traversal
>>> traversal.trainables({"w": np.ones(2), "n": 3})
[array([1., 1.])]
"""

from autodiff._for_traversal import lazy_names

from ._accel import collect as _accel_collect
from ._cache import IdentityCache, usecache
from ._collect import trainables
from ._dense import hessian_from_dense, hessian_to_dense
from ._destructure import destructure
from ._functor import children, isleaf, leaf, rebuild, register, register_leaf
from ._keypath import KeyPath, getkeypath, haskeypath, setkeypath
from ._maps import NOPRUNE, fcollect, fleaves, fmap, fmap_with_path, fmapstructure, fmapstructure_with_path
from ._total import total
from ._trainable import TrainableWalk, isnumeric, trainable
from ._tree_compare import TreeComparison, assert_tree_allclose, assert_tree_equal, tree_allclose, tree_equal
from ._walks import (
    CachedWalk,
    CollectWalk,
    DefaultWalk,
    Done,
    ExcludeWalk,
    Expand,
    FlattenWalk,
    MissingWalk,
    StructuralWalk,
    execute,
    split,
)

_accel_collect.install()  # total's fast collectors, beside the reference walks (off under AUTODIFF_REFERENCE=1)

__all__ = [
    "children", "rebuild", "register", "register_leaf", "leaf", "isleaf",
    "fmap", "fmapstructure", "fmap_with_path", "fmapstructure_with_path", "fleaves", "fcollect", "NOPRUNE",
    "KeyPath", "getkeypath", "haskeypath", "setkeypath",
    "isnumeric", "trainable", "trainables", "destructure", "hessian_to_dense", "hessian_from_dense", "total",
    "save", "load", "CheckpointError", "CheckpointWarning",
    "DefaultWalk", "StructuralWalk", "FlattenWalk", "ExcludeWalk", "CachedWalk", "CollectWalk", "MissingWalk",
    "TrainableWalk", "Done", "Expand", "execute", "split", "IdentityCache", "usecache",
    "tree_equal", "tree_allclose", "assert_tree_equal", "assert_tree_allclose", "TreeComparison",
]


# Checkpoints load on first use: most programs never save one, and they cost import time.
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(("save", "load", "CheckpointError", "CheckpointWarning"),
                                                          "._checkpoint"))
