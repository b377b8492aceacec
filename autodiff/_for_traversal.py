"""The hooks ``traversal`` uses beyond a rule writer's door (``autodiff.extend``): internal, but documented.

- ``node_of(x)`` / ``Node``: how the container registry sees ``x`` (its children and how to rebuild it).
- ``registry_version()``: changes whenever a registration changes how a type already met flattens, so caches
  of walks can forget.
- ``set_trainable_filter(fn, rule, changes)``: tells ``grad`` which children are trainable, so a tie's gradient
  goes to its first trainable occurrence (``traversal.trainable`` sets it, and calls
  ``recheck_trainable_filter()`` after each of its registrations); ``trainable_filter_version()`` changes
  whenever that answer changes for a type already met.
- ``fields_getter``: a dataclass's or namedtuple's fields, read fast (traversal's accelerated collectors).
- ``is_known(f)``: is ``f`` a known reduction of one array (``total(sumsq, model, grads)`` applies it to
  each gradient alone); the slot ``hooks.known_total(f, xs, init)``: the fused model-wide path of such a
  reduction, or ``None`` when there is none (its reference: always ``None``; the ``reductions`` acceleration
  fills it).
- ``lazy_names(package, table)``: a package's names that load on first use (traversal's checkpoints).

>>> import numpy as np
>>> import autodiff.numpy as anp
>>> is_known(anp.sumsq), is_known(abs)
(True, False)
>>> from autodiff._hooks import hooks
>>> float(hooks.known_total(anp.sumsq, [np.array([3.0, 4.0])], 0.0) or anp.sumsq(np.array([3.0, 4.0])))
25.0
"""

from ._containers import (
    Node,
    fields_getter,
    node_of,
    recheck_trainable_filter,
    registry_version,
    set_trainable_filter,
    trainable_filter_version,
)
from ._hooks import slot
from ._lazy import lazy_names
from .numpy._named import is_known

__all__ = [
    "node_of", "Node", "registry_version", "set_trainable_filter", "trainable_filter_version",
    "recheck_trainable_filter", "fields_getter", "is_known", "lazy_names",
]


def _no_known_total(f, xs, init):
    """The reference: no fused path, so ``total`` sums ``f`` over the arrays one recorded call at a time."""
    return None


slot("known_total", _no_known_total, "total's fused model-wide path of a known reduction, or None (the "
     "accelerated twin: one compiled, threaded pass and one tape entry)")
