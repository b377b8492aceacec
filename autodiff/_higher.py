"""Products with a direction, built on vjp: ``jvp`` (``J v``) and ``hvp`` (``H v``).

Primals are a tuple of positional arguments, or one bare argument (a model,
an array) with its tangent.  Tangents mirror the primals and are checked leaf
by leaf: structure, shape and dtype, and one direction per tied array
(:mod:`autodiff._directions`).
"""

from ._arguments import is_differentiable, zeros_like_primal
from ._directions import Variables, as_arguments
from ._transforms import grad, vjp
from ._trees import rebuild_node, transform


def jvp(f, primals, tangents):
    """Forward-mode product ``J v`` by the double-vjp trick; returns ``(out, J v)``.

    The pullback ``u -> J^T u`` is linear in ``u``, so pulling ``v`` back
    through it once more gives ``J v``.  ``tangents`` mirrors ``primals``
    (``None`` for a zero subtree); ``jvp(f, m, v)`` is ``jvp(f, (m,), (v,))``.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> out, tangent = jvp(anp.sin, (0.0,), (3.0,))
    >>> float(out), float(tangent)
    (0.0, 3.0)
    >>> jvp(lambda p: p["w"] * p["s"], {"w": np.ones(2), "s": 2.0}, {"w": np.ones(2), "s": None})[1]
    array([2., 2.])
    """
    primals, tangents, bare = as_arguments("jvp", primals, tangents)
    variables = Variables(primals)
    directions = variables.directions("jvp", tangents, bare)

    def f_flat(*xs):
        return f(*variables.substitute(xs))

    out, pullback = vjp(f_flat, *variables.leaves)
    _, pull_twice = vjp(pullback, _zeros_like_tree(out))
    directions = [zeros_like_primal(x) if d is None else d for x, d in zip(variables.leaves, directions)]
    return out, pull_twice(tuple(directions))[0]


def _zeros_like_tree(x):
    def leaf_fn(path, leaf):
        return zeros_like_primal(leaf) if is_differentiable(leaf) else leaf

    return transform(x, leaf_fn, rebuild_node)


def hvp(f, primals, tangents):
    """Hessian-vector product ``H v`` (reverse over reverse), in the structure of the primals.

    A tuple of primals gives a tuple, one gradient-shaped result per primal; a
    bare primal gives one: ``hvp(f, m, v)`` is ``hvp(f, (m,), (v,))[0]``.

    >>> import numpy as np
    >>> hvp(lambda x: (x ** 3).sum(), (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))
    (array([ 6., 12.]),)
    >>> hvp(lambda p: (p["a"] ** 3).sum(), {"a": np.array([1.0, 2.0])}, {"a": np.ones(2)})
    {'a': array([ 6., 12.])}
    """
    primals, tangents, bare = as_arguments("hvp", primals, tangents)
    variables = Variables(primals)
    directions = variables.directions("hvp", tangents, bare)
    nums = tuple(range(len(primals)))

    def grad_dot_direction(*xs):
        return variables.dot(grad(f, nums)(*xs), directions)

    result = grad(grad_dot_direction, nums)(*primals)
    return result[0] if bare else result
