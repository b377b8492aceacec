"""A primitive's tuple result used as one array, as numpy allows (``np.sum(np.linalg.slogdet(a))``).

A primitive with several outputs (``slogdet``, ``eigh``, ``svd``) returns one traced value holding the
tuple; ``tuple_item`` reads its parts.  Any other primitive given that value reads it as numpy does, as
``np.asarray`` of the tuple.  A tape records the call as it is, but a ``vmap`` and a ``jvp`` cannot: under
``vmap`` each part carries the batch axis first (so numpy's array of the parts would put the parts' axis
before the batch's), and under ``jvp`` the tangent is the tuple of the parts' tangents, a ``ZeroTangent``
for a constant part (a real ``slogdet``'s sign).  So those levels stack the parts first, with ``tuple_item``
and ``stack``, and every rule then sees one array.
"""

from . import _ops
from ._traced import Traced
from ._traced import value_of as strip_all


def with_arrays(prim, level, args):
    """``args`` with each traced value of ``level`` that holds a tuple stacked into one array, or ``None`` when
    none does (or ``prim`` is ``tuple_item``, which reads the tuple)."""
    if prim is _ops.tuple_item or not any(_holds_tuple(a, level) for a in args):
        return None
    return [stacked(a, prim.__name__) if _holds_tuple(a, level) else a for a in args]


def _holds_tuple(a, level):
    return type(a) is Traced and a.level == level.level and type(strip_all(a)) is tuple


def stacked(t, name):
    """The traced tuple ``t`` as one array, its parts stacked (``name``, the function reading it, for the
    error when the parts' shapes differ)."""
    from ._batching import example_shape  # _batching imports this module

    parts = [_ops.tuple_item(t, k) for k in range(len(strip_all(t)))]
    shapes = [example_shape(p) for p in parts]
    if len(set(shapes)) > 1:
        raise ValueError(
            f"{name} got the result of a primitive with several outputs (slogdet, eigh, svd, ...) as one "
            f"array, but its parts have different shapes ({', '.join(map(str, shapes))}), so they make no array "
            "(numpy refuses it too); use the parts themselves: w, v = anp.linalg.eigh(a), then anp.sum(w)"
        )
    return _ops.stack(parts)
