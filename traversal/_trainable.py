"""Trainability: which leaves are parameters, and which children an optimiser may touch."""

import abc
import functools

import numpy as np

from autodiff._for_traversal import recheck_trainable_filter, set_trainable_filter, trainable_filter_version
from autodiff.extend import Traced, is_inexact

from ._cache import IdentityCache
from ._functor import children, rebuild
from ._walks import NOPRUNE, CachedWalk, ExcludeWalk, Expand, execute, split

__all__ = ["isnumeric", "trainable", "trainable_paths", "TrainableWalk", "trainable_version"]


def isnumeric(x):
    """True for numpy arrays of float or complex dtype (traced, dual or batched by ``vmap``, or not): the
    parameters.

    >>> isnumeric(np.ones(2)), isnumeric(np.arange(2)), isnumeric(1.0), isnumeric(np.ones(2) > 0)
    (True, False, False, False)
    """
    while type(x) is Traced:  # every level, a vmap's too: a batched array is one array per example
        x = x.value
    return isinstance(x, np.ndarray) and is_inexact(x.dtype)


@functools.singledispatch
def trainable(x):
    """The names of ``x``'s trainable children; all of them by default.

    Register a type to restrict it; the result filters, it never reorders:

    >>> import dataclasses
    >>> from traversal import trainables
    >>> @dataclasses.dataclass
    ... class Norm:
    ...     gamma: np.ndarray
    ...     beta: np.ndarray
    ...     running_mean: np.ndarray
    >>> @trainable.register(Norm)
    ... def _(layer):
    ...     return ("beta", "gamma")
    >>> trainables(Norm(np.ones(1), np.zeros(1), np.zeros(1)))
    [array([1.]), array([0.])]
    """
    return tuple(children(x))


_default_trainable = trainable.dispatch(object)
_plain_register = trainable.register


def _announced_register(cls, func=None):
    """``trainable.register``, telling autodiff once it has registered (it compares the rules of the types
    walks have met, so caches and jit signatures move only when one of those changed)."""
    result = _plain_register(cls, func)
    recheck_trainable_filter()
    if func is None and isinstance(cls, type):  # @trainable.register(cls): registers once applied

        def decorate(f):
            out = result(f)
            recheck_trainable_filter()
            return out

        return decorate
    return result


trainable.register = _announced_register


def trainable_version():
    """Changes whenever what ``trainable`` dispatches to has changed for a container type a walk has met: a
    registration, or a class registered with an ABC (``abc.get_cache_token``, which ``singledispatch`` itself
    watches), that changes nothing met leaves it alone."""
    return trainable_filter_version()


def is_customised(cls):
    """True when ``trainable`` restricts ``cls``'s children (a registration applies to it)."""
    return trainable.dispatch(cls) is not _default_trainable


def _trainable_filter(x):
    return trainable(x) if is_customised(type(x)) else None


# every transform: non-trainable children are constants
set_trainable_filter(_trainable_filter, trainable.dispatch, abc.get_cache_token)


class TrainableWalk:
    """Walk only into trainable children; rebuild with the others carried over unchanged.

    >>> from traversal import ExcludeWalk, execute
    >>> walk = ExcludeWalk(TrainableWalk(), lambda path, x: x * 0, isnumeric)
    >>> execute(walk, {"w": np.ones(2), "n": 3})
    {'w': array([0., 0.]), 'n': 3}
    """

    def visit(self, x, ys, path):
        keys = _trainable_keys(x, path)
        keys, xs, kid_ys = split(x, ys, path, keys)
        return Expand(keys, xs, kid_ys, lambda results: _rebuild_some(x, keys, results))


def _trainable_keys(x, path):
    kids = children(x)
    allowed = trainable(x)
    unknown = [k for k in allowed if k not in kids]
    if unknown:
        raise KeyError(
            f"trainable({type(x).__name__}) at {path} names {unknown}, which are not among its "
            f"children {list(kids)}; return names of fields that exist"
        )
    return [k for k in kids if k in allowed]


def _rebuild_some(x, keys, results):
    if not keys:
        return x
    kids = children(x)
    kids.update(zip(keys, results))
    return rebuild(x, kids)


def trainable_paths(model):
    """``[(KeyPath, array), ...]`` for the distinct trainable arrays of ``model``, each at its first occurrence:
    the walk that defines :func:`trainables` (the fast collectors follow it, and fall back to it for errors).

    >>> [(str(p), a) for p, a in trainable_paths({"w": np.ones(1), "n": 3})]
    [('w', array([1.]))]
    """
    found = []
    collect = ExcludeWalk(TrainableWalk(), lambda keypath, leaf: found.append((keypath, leaf)), isnumeric)
    execute(CachedWalk(collect, IdentityCache(), NOPRUNE), model)
    return found
