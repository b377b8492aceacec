"""Structured Jacobians, after JAX's ``jacrev``/``jacfwd`` (``hessian``, ``jacfwd`` of the gradient: ``_hessian``).

``jacrev`` (alias ``jacobian``) pulls back one basis cotangent per output
element; ``jacfwd`` pushes forward one basis tangent per input element.

The result has the output's structure outside and the argument's structure
inside: at each output leaf of shape ``s`` sits the argument's structural
tangent whose leaf of shape ``a`` is the block of shape ``s + a``.  A
dataclass argument gives a ``Tangent``; a tied array's block sits where
``grad`` puts its gradient, ``None`` at the tie's other positions and
wherever the output does not reach (``design.md`` sections 2 and 9).
"""

import functools

import numpy as np

from . import _ops
from ._arguments import is_differentiable
from ._batching import example_shape
from ._calls import argnums_of, checked_aux, on_arguments, split_aux
from ._checks import refuse_argument, refuse_complex_inputs, refuse_real_inputs, refuse_real_output
from ._containers import node_of
from ._directions import Variables
from ._forward import dual, open_pushforward
from ._higher import materialise
from ._hooks import hooks
from ._traced import Traced, value_of
from ._trees import leaves, tangent_node, transform
from ._vjp import vjp
from ._vmap import vmap


def jacrev(f, argnums=0, has_aux=False, holomorphic=False, chunk_size=None):
    """Jacobian of ``f``: output structure outside, argument structure inside, leaves ``out.shape + x.shape``.

    ``argnums`` and ``has_aux`` mean what they mean for :func:`grad`; with
    ``has_aux`` ``f`` returns ``(out, aux)`` and the new function ``(jacobian, aux)``.
    The rows come from one pullback batched over the identity's rows (``vmap``), ``chunk_size`` rows at a
    time when given (to bound memory); if a rule cannot batch, from one pullback per row.

    A complex output is refused unless ``holomorphic=True``, JAX's promise that ``f`` is holomorphic: its
    inputs and outputs must then all be complex, and the blocks hold the complex derivative ``∂f_i/∂z_j``
    (each row pulls back a complex ``e_i``, and a holomorphic pullback is the plain transpose, docs/complex.md).

    >>> import numpy as np
    >>> jacobian(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    >>> j = jacobian(lambda p: {"y": p["w"] * p["s"]})({"w": np.ones(2), "s": 3.0})
    >>> j["y"]["w"].shape, j["y"]["s"]
    ((2, 2), array([1., 1.]))
    >>> jacobian(lambda x, c: (c * x, x.sum()), argnums=0, has_aux=True)(np.ones(2), 3.0)
    (array([[3., 0.],
           [0., 3.]]), np.float64(2.0))
    >>> jacobian(lambda z: z ** 2, holomorphic=True)(np.array([1j, 2.0 + 0j]))  # diag(2 z)
    array([[0.+2.j, 0.+0.j],
           [0.+0.j, 4.+0.j]])
    """

    def jacobian_f(*args, **kwargs):  # keyword arguments are held, as grad holds them
        nums = argnums_of(argnums, len(args), "jacobian")
        if holomorphic:
            checked_variables("jacobian", args, nums, True)
        primals = [args[n] for n in nums]
        f_nums = checked_aux(on_arguments(_holding(f, kwargs), args, nums), has_aux, "jacobian")
        out, pullback, *aux = vjp(f_nums, *primals, has_aux=has_aux)
        outs, treedef = hooks.flatten(out)
        per_leaf = [_at_output(pullback, outs, treedef, j, primals, chunk_size, holomorphic) for j in range(len(outs))]
        if not isinstance(argnums, (tuple, list)):
            per_leaf = [None if x is None else x[0] for x in per_leaf]
        jac = treedef.tangent(per_leaf)
        return (jac, aux[0]) if has_aux else jac

    return jacobian_f


jacobian = jacrev


def _holding(f, kwargs):
    """``f`` with the keyword arguments of the call fixed (they are never differentiated, as in ``grad``)."""
    return functools.partial(f, **kwargs) if kwargs else f


def _at_output(pullback, outs, treedef, j, primals, chunk_size=None, holomorphic=False):
    """The blocks of output leaf ``j``: one argument-shaped structure per primal (``None`` for a non-float leaf)."""
    if not is_differentiable(outs[j]):
        return None
    shape, dtype = example_shape(outs[j]), _dtype(outs[j])
    if holomorphic:
        refuse_real_output("jacobian", f"output {j}", outs[j])
    elif dtype.kind == "c":
        raise TypeError(
            f"jacobian: output {j} is complex ({dtype}); a row per output element pulls back a real 1, which "
            "keeps the real part's derivative only (torch.func and JAX refuse this too). Split the output, "
            "jacobian(lambda x: (anp.real(f(x)), anp.imag(f(x)))), or use jvp, or vjp with complex cotangents; "
            "for a holomorphic f, pass holomorphic=True"
        )
    size = int(np.prod(shape))
    basis = np.eye(size, dtype=dtype).reshape((size,) + shape) if size else np.zeros((1,) + shape, dtype)
    if size:
        try:
            return _batched_rows(pullback, treedef, len(outs), j, basis, primals, shape, chunk_size)
        except (TypeError, ValueError, NotImplementedError):  # a rule that cannot batch: one pullback per row
            pass
    rows = [pullback(_seed(treedef, len(outs), j, basis[k])) for k in range(len(basis))]
    return tuple(_stack(primal, [r[i] for r in rows], shape, size) for i, primal in enumerate(primals))


def _batched_rows(pullback, treedef, n, j, basis, primals, shape, chunk_size):
    """Every row of the Jacobian of output leaf ``j`` from one pullback batched over the basis (per chunk)."""
    pull = vmap(lambda row: pullback(_seed(treedef, n, j, row)))
    step = len(basis) if chunk_size is None else max(int(chunk_size), 1)
    chunks = [pull(basis[k:k + step]) for k in range(0, len(basis), step)]
    return tuple(_joined(primal, [c[i] for c in chunks], shape) for i, primal in enumerate(primals))


def _joined(primal, chunks, out_shape):
    """The argument-shaped structure of blocks ``out_shape + leaf.shape`` from batched gradients (per chunk)."""
    by_path = [dict(leaves(c)) for c in chunks]

    def block(path, leaf):
        got = [d.get(path) for d in by_path]
        if all(g is None for g in got):
            return None
        rows = np.concatenate([np.zeros((len(_rows_of(by_path, k)),) + example_shape(leaf), _dtype(leaf)) if g is None
                               else g for k, g in enumerate(got)]) if len(got) > 1 else got[0]
        return _ops.reshape(rows, out_shape + example_shape(rows)[1:])

    return transform(primal, block, tangent_node)


def _rows_of(by_path, k):
    """Any batched leaf of chunk ``k`` (its length is the chunk's)."""
    return next(g for g in by_path[k].values() if g is not None)


def _seed(treedef, n, j, row):
    """A cotangent for the output: ``row`` at leaf ``j``, ``None`` (no cotangent) at every other leaf."""
    cts = [None] * n
    cts[j] = row
    return treedef.unflatten(cts)


def _dtype(x):
    return np.result_type(value_of(x))


def _stack(primal, rows, out_shape, size):
    """The argument-shaped structure of blocks ``out_shape + leaf.shape`` from one gradient per row."""
    by_path = [dict(leaves(r)) for r in rows]

    def block(path, leaf):
        got = [d.get(path) for d in by_path]
        present = [g for g in got if g is not None]
        if not present:
            return None
        leaf_shape, dtype = example_shape(present[0]), _dtype(present[0])
        if not size:
            return np.zeros(out_shape + leaf_shape, dtype)
        got = [np.zeros(leaf_shape, dtype) if g is None else g for g in got]
        return _ops.reshape(_ops.stack(got), out_shape + leaf_shape)

    return transform(primal, block, tangent_node)


_JACFWD_INSTEAD = ("Use autodiff.jacrev (its rows follow docs/complex.md's convention), or autodiff.jvp along each "
                   "direction, 1j * e_k included; for a holomorphic f, pass holomorphic=True.")


def checked_variables(name, args, nums, holomorphic, instead=""):
    """The :class:`Variables` of ``args[nums]``, refusing a bare argument that cannot be differentiated (an int)
    and, as JAX does, a complex leaf (``instead`` says what to use), or with ``holomorphic`` a real one."""
    for n in nums:
        if node_of(args[n]) is None and not is_differentiable(args[n]):
            refuse_argument(args[n], n, name)
    variables = Variables(tuple(args[n] for n in nums))
    at = [((nums[p[0]],) + p[1:], leaf) for p, leaf in zip(variables.homes(), variables.leaves)]
    if holomorphic:
        refuse_real_inputs(name, at)
    else:
        refuse_complex_inputs(name, at, instead)
    return variables


def jacfwd(f, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian of ``f`` by forward mode: one ``jvp`` batched over the input's basis (``vmap``; one per input
    element if a rule cannot batch); structured as :func:`jacrev`.

    Cheaper than ``jacrev`` when the arguments have fewer elements than the output.
    ``argnums`` and ``has_aux`` are :func:`jacrev`'s.  Complex arguments are refused, as in JAX and
    ``torch.func``: pushing ``e_k`` alone would drop the direction ``1j * e_k`` (use ``jacrev`` or ``jvp``).
    With ``holomorphic=True`` (JAX's promise that ``f`` is holomorphic) inputs and outputs must all be complex,
    and ``e_k`` suffices: along ``1j * e_k`` a holomorphic ``f`` moves by ``1j`` times as much, so the
    blocks hold the complex derivative ``∂f_i/∂z_j``, as :func:`jacrev`'s do.

    >>> import numpy as np
    >>> jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    >>> j = jacfwd(lambda p: {"y": p["w"] * p["s"]})({"w": np.ones(2), "s": 3.0})
    >>> j["y"]["w"].shape, j["y"]["s"]
    ((2, 2), array([1., 1.]))
    >>> jacfwd(lambda z: z ** 2, holomorphic=True)(np.array([1j, 2.0 + 0j]))
    array([[0.+2.j, 0.+0.j],
           [0.+0.j, 4.+0.j]])
    """

    def jacfwd_f(*args, **kwargs):  # keyword arguments are held, as grad holds them
        nums = argnums_of(argnums, len(args), "jacfwd")
        variables = checked_variables("jacfwd", args, nums, holomorphic, _JACFWD_INSTEAD)
        f_nums = on_arguments(_holding(f, kwargs), args, nums)

        def f_of(xs):
            return split_aux(f_nums(*variables.substitute(xs)), has_aux, "jacfwd")

        out, aux = f_of(variables.leaves)
        outs, treedef = hooks.flatten(out)
        for j, leaf in enumerate(outs):
            if holomorphic and is_differentiable(leaf):
                refuse_real_output("jacfwd", f"output {j}", leaf)
        columns = [_columns(f_of, variables, v) for v in range(len(variables.leaves))]
        per_leaf = [_blocks(variables, columns, j, outs[j]) for j in range(len(outs))]
        if not isinstance(argnums, (tuple, list)):
            per_leaf = [None if x is None else x[0] for x in per_leaf]
        jac = treedef.tangent(per_leaf)
        return (jac, aux) if has_aux else jac

    return jacfwd_f


def _columns(f_of, variables, v):
    """For each basis direction of variable ``v``: the output leaves' tangents (``None`` where none flowed)."""
    leaf = variables.leaves[v]
    shape, dtype = example_shape(leaf), _dtype(leaf)
    size = int(np.prod(shape))
    basis = np.eye(size, dtype=dtype).reshape((size,) + shape)
    if isinstance(value_of(leaf), float):
        basis = [1.0]
    elif size:
        try:
            return _batched_columns(f_of, variables, v, basis)
        except (TypeError, ValueError, NotImplementedError):  # a rule that cannot batch: one push per column
            pass
    columns = []
    for e in basis:
        xs = list(variables.leaves)
        with open_pushforward() as level:
            xs[v] = dual(leaf, level, e)
            out = f_of(xs)[0]
        columns.append([materialise(x.tangent, x.value) if type(x) is Traced and x.tape is level else None
                        for x in hooks.flatten(out)[0]])
    return columns


def _batched_columns(f_of, variables, v, basis):
    """:func:`_columns` from one pushforward batched over the basis (``vmap``): ``f`` runs once."""
    leaf = variables.leaves[v]

    def push(e):
        xs = list(variables.leaves)
        with open_pushforward() as level:
            xs[v] = dual(leaf, level, e)
            out = f_of(xs)[0]
        return [materialise(x.tangent, x.value) if type(x) is Traced and x.tape is level else None
                for x in hooks.flatten(out)[0]]

    pushed = vmap(push)(basis)
    return [[None if t is None else t[k] for t in pushed] for k in range(len(basis))]


def _blocks(variables, columns, j, out_leaf):
    """The blocks of output leaf ``j``: one argument-shaped structure per primal (``None`` for a non-float leaf)."""
    if not is_differentiable(out_leaf):
        return None
    shape, dtype = example_shape(out_leaf), _dtype(out_leaf)
    blocks = [_block([c[j] for c in cols], shape, dtype, variables.leaves[v]) for v, cols in enumerate(columns)]
    # a bare argument always gets an array, as in grad
    return variables.as_gradient(blocks, zeros=lambda leaf: np.zeros(shape + example_shape(leaf), dtype))


def _block(tangents, out_shape, dtype, leaf):
    """Columns ``J e_k`` stacked into the block of shape ``out_shape + leaf.shape``; ``None`` if none flowed."""
    leaf_shape = example_shape(leaf)
    if not tangents:
        return np.zeros(out_shape + leaf_shape, dtype)
    if all(t is None for t in tangents):
        return None
    stacked = _ops.stack([np.zeros(out_shape, dtype) if t is None else t for t in tangents])
    stacked = _ops.reshape(stacked, leaf_shape + out_shape)
    n, m = len(leaf_shape), len(out_shape)
    return _ops.transpose(stacked, tuple(range(n, n + m)) + tuple(range(n)))
