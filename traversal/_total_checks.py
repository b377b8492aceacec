"""What ``total`` checks: its ``only=`` as a test of one node, and ``f``'s failures and result shapes,
each reported with the key path of the parameter concerned."""

import numpy as np

from autodiff.extend import value_of

from ._collect import path_of
from ._walks import ExcludeWalk, FlattenWalk, execute


def predicate(only, model):
    """``only`` as a test of one node: the containers on a parameter's path and the parameter itself.

    A parameter is tested by its plain value (never a traced one), so the
    choice is the same under ``grad`` as outside it.

    >>> import numpy as np
    >>> predicate(np.ndarray, {})(np.ones(2)), predicate(None, {})
    (True, None)
    """
    if only is None:
        return None
    if isinstance(only, type) or (isinstance(only, tuple) and all(isinstance(t, type) for t in only)):
        return lambda node: isinstance(value_of(node), only)
    if callable(only):
        return lambda node: _ask(only, node, model)
    raise TypeError(
        f"total: only= must be a type, a tuple of types or a predicate on nodes, but got "
        f"{only!r}; e.g. only=Dense, only=(Dense, Conv2d) or only=lambda node: ..."
    )


def _ask(only, node, model):
    try:
        return bool(only(value_of(node)))
    except Exception as e:
        raise TypeError(
            f"total: the only= predicate raised {type(e).__name__} on the {type(node).__name__} at "
            f"{_path_to(model, node)}: {e}; it sees every container on the way to a parameter as well as "
            "the parameter, so test attributes with getattr, e.g. only=lambda n: getattr(n, 'ndim', 0) == 2"
        ) from e


def _path_to(model, node):
    """The key path of ``node``'s first occurrence in ``model`` (for error messages)."""
    found = []
    execute(ExcludeWalk(FlattenWalk(), lambda path, x: found.append(path), lambda x: x is node), model)
    return str(found[0]) if found else "(unknown position)"


def apply(f, group, model, match):
    """``f(*group)``; a failure names the parameter's key path, shape and dtype."""
    try:
        return f(*group)
    except Exception as e:
        leaf = value_of(group[0])
        raise RuntimeError(
            f"total: f failed on the parameter at {path_of(model, group[0], match)} "
            f"(shape {np.shape(leaf)}, dtype {np.result_type(leaf)}): {type(e).__name__}: {e}"
        ) from e


def check_shape(value, first, leaf, model, match):
    """``(shape, leaf)`` of the first value; a later value of another shape is refused, naming both paths."""
    shape = np.shape(value_of(value))
    if first is None:
        return (shape, leaf)
    if shape != first[0]:
        raise ValueError(
            f"total: f returned shape {shape} at {path_of(model, leaf, match)} but shape "
            f"{first[0]} at {path_of(model, first[1], match)}; f must return values of one "
            "shape (usually scalars) so they can be summed"
        )
    return first
