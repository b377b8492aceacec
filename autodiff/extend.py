"""The door for rule writers: define primitives and their pullbacks.

Every built-in op, ``traversal`` and user code define rules through this
module alone.

>>> import numpy as np
>>> import autodiff
>>> from autodiff.extend import primitive, defvjp
>>> cube = primitive(lambda x: x ** 3, name="cube")
>>> defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
>>> autodiff.grad(cube)(2.0)
12.0
>>> autodiff.grad(autodiff.grad(cube))(2.0)  # the pullback is differentiable
12.0
"""

from ._arguments import is_differentiable
from ._containers import (
    Node,
    fields_getter,
    node_of,
    register_container,
    register_leaf,
    registry_version,
    set_trainable_filter,
)
from ._layouts import Layout, LayoutCache, compile_layout
from ._primitive import Primitive, _rules, joint_rule, per_argument_rule
from ._tangents import NoTangent, Tangent, Thunk, ZeroTangent, add_tangents, unthunk
from ._traced import Traced, value_of
from ._via_ad import vjp_via_ad

__all__ = [
    "primitive", "defvjp", "defvjp_joint", "Primitive", "Traced", "value_of",
    "is_differentiable", "register_container", "register_leaf", "node_of", "Node", "registry_version",
    "fields_getter", "set_trainable_filter", "compile_layout", "Layout", "LayoutCache",
    "ZeroTangent", "NoTangent", "Thunk", "Tangent", "unthunk", "add_tangents", "vjp_via_ad",
    "known_reduction",
]


def primitive(fun, name=None):
    """Wrap ``fun`` (a function on plain values) as a primitive; give it a rule with ``defvjp``."""
    return Primitive(fun, name)


def defvjp(prim, *vjps):
    """Register one pullback per positional argument of ``prim``.

    ``vjps[i](g, ans, *args, **kwargs)`` returns the cotangent of argument
    ``i`` given the output cotangent ``g`` and the forward output ``ans``.  It
    must be written with differentiable ops (``autodiff.numpy``) so that
    higher derivatives work, and may return ``ZeroTangent()`` or a ``Thunk``.
    ``None`` marks an argument that cannot be differentiated.
    """
    _rules[prim] = per_argument_rule(prim.__name__, vjps)


def defvjp_joint(prim, pullback):
    """Register one pullback for all arguments at once.

    ``pullback(g, ans, *args, **kwargs)`` returns a sequence with one
    cotangent per positional argument.  Only those of traced arguments are
    used: wrap costly ones in ``Thunk`` so that a constant's is never computed.
    """
    _rules[prim] = joint_rule(pullback)


def known_reduction(f):
    """If ``f`` is a known model-wide reduction (``sum``, ``linalg.norm``, ``sumsq``, ``abssum``,
    ``maxabs``), its plain ``value(x)`` and differentiable ``vjp(g, x)``; else ``None``.

    >>> import autodiff.numpy as anp
    >>> known_reduction(anp.sumsq).name
    'sumsq'
    """
    global _lookup
    if _lookup is None:  # the numpy namespace imports this module, so its table is fetched on first use
        from .numpy._named import lookup

        _lookup = lookup
    return _lookup(f)


_lookup = None
