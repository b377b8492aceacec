"""Transforms built on vjp: jvp, jacobian, hessian and hvp."""

import numpy as np

from . import numpy as anp
from ._arguments import is_differentiable, zeros_like_primal
from ._transforms import _argnums, grad, vjp
from ._trees import leaves, rebuild_node, transform
from .numpy._broadcast import dtype_of, shape_of


def jvp(f, primals, tangents):
    """Forward-mode product ``J v`` by the double-vjp trick; returns ``(out, J v)``.

    The pullback ``u -> J^T u`` is linear in ``u``, so pulling ``v`` back
    through it once more gives ``J v``.  ``tangents`` mirrors ``primals``.

    >>> import autodiff.numpy as anp
    >>> out, tangent = jvp(anp.sin, (0.0,), (3.0,))
    >>> float(out), float(tangent)
    (0.0, 3.0)
    """
    primals, tangents = tuple(primals), tuple(tangents)
    flat, rebuild = _flatten_differentiable(primals)
    directions = _matching_leaves(tangents, primals)

    def f_flat(*xs):
        return f(*rebuild(xs))

    out, pullback = vjp(f_flat, *flat)
    _, pull_twice = vjp(pullback, _zeros_like_tree(out))
    return out, pull_twice(tuple(directions))[0]


def _flatten_differentiable(tree):
    """The differentiable leaves of ``tree`` by position, and a function putting new ones back."""
    flat = [leaf for _, leaf in leaves(tree) if is_differentiable(leaf)]

    def rebuild(xs):
        it = iter(xs)
        return transform(tree, lambda p, leaf: next(it) if is_differentiable(leaf) else leaf, rebuild_node)

    return flat, rebuild


def _matching_leaves(tangents, primals):
    pairs = list(zip(leaves(primals), leaves(tangents)))
    if len(leaves(primals)) != len(pairs) or len(leaves(tangents)) != len(pairs):
        raise ValueError("jvp: tangents must have the same structure as primals")
    return [t for (_, p), (_, t) in pairs if is_differentiable(p)]


def _zeros_like_tree(x):
    def leaf_fn(path, leaf):
        return zeros_like_primal(leaf) if is_differentiable(leaf) else leaf

    return transform(x, leaf_fn, rebuild_node)


def jacobian(f, argnums=0):
    """Jacobian of ``f`` by reverse mode: shape ``out.shape + x.shape``.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> jacobian(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """

    def jacobian_f(*args):
        nums = _argnums(argnums, len(args))
        rows = [_jacobian_one(f, args, n) for n in nums]
        return tuple(rows) if isinstance(argnums, (tuple, list)) else rows[0]

    return jacobian_f


def _jacobian_one(f, args, n):
    def f_n(x):
        return f(*args[:n], x, *args[n + 1:])

    out, pullback = vjp(f_n, args[n])
    out_shape, in_shape = shape_of(out), shape_of(args[n])
    size = int(np.prod(out_shape))
    basis = np.eye(size, dtype=dtype_of(out)).reshape((size,) + out_shape)
    rows = [pullback(basis[k])[0] for k in range(size)]
    if not rows:
        return np.zeros(out_shape + in_shape, dtype_of(args[n]))
    return anp.reshape(anp.stack(rows), out_shape + in_shape)


def hessian(f, argnums=0):
    """Hessian of a scalar ``f``: the Jacobian of its gradient.

    >>> import numpy as np
    >>> hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return jacobian(grad(f, argnums), argnums)


def hvp(f, primals, tangents):
    """Hessian-vector product ``H v`` (reverse over reverse), in the structure of the primals.

    >>> import numpy as np
    >>> hvp(lambda x: (x ** 3).sum(), (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))
    (array([ 6., 12.]),)
    """
    primals, tangents = tuple(primals), tuple(tangents)
    nums = tuple(range(len(primals)))

    def inner(*xs):
        return tree_vdot(grad(f, nums)(*xs), tangents)

    return grad(inner, nums)(*primals)


def tree_vdot(a, b):
    """Sum over matching leaves of ``sum(a * b)`` (its real part for complex leaves: the pairing of
    docs/complex.md, so hvp works at complex primals); ``None`` leaves in ``a`` are skipped."""
    total = 0.0
    for (_, x), (_, y) in zip(leaves(a), leaves(b)):
        if x is not None and y is not None:
            term = anp.sum(x * y)
            total = total + (anp.real(term) if dtype_of(term).kind == "c" else term)
    return total
