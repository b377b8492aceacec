"""Trees read through the public traversal API, for tests that compare structures leaf by leaf.

>>> import numpy as np
>>> w = np.ones(2)
>>> [(str(p), type(v).__name__) for p, v in leaves({"a": w, "b": [w, None]})]
[('a', 'ndarray'), ('b[0]', 'ndarray'), ('b[1]', 'NoneType')]
>>> [str(p) for p, _ in trainable_paths({"a": w, "b": [w, 3]})]
['a']
"""

import traversal as tv


def leaves(tree):
    """``[(key path, leaf), ...]`` in traversal order, duplicates kept (ties at each of their positions), ``None``
    leaves too; an empty dict, list or tuple holds no leaf."""
    found = []
    tv.fmap_with_path(lambda path, leaf: None if _empty(leaf) else found.append((path, leaf)), tree, cache=False)
    return found


def _empty(x):
    return type(x) in (dict, list, tuple) and not x


def trainable_paths(model):
    """``[(key path, array), ...]`` for the distinct trainable arrays of ``model``, each at its first occurrence:
    the walk that defines ``traversal.trainables``."""
    found = []
    collect = tv.ExcludeWalk(tv.TrainableWalk(), lambda path, leaf: found.append((path, leaf)), tv.isnumeric)
    tv.execute(tv.CachedWalk(collect, tv.IdentityCache(), tv.NOPRUNE), model)
    return found
