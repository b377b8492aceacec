"""Products: matmul and dot."""

import math
import string

import numpy as np

from ..extend import Thunk, defbatch, deflinear, defvjp, defvjp_joint, primitive, value_of
from ._batch_ops import diagonal_rule, einsum_rule, matmul_rule, put_diagonal_rule
from ._broadcast import broadcast_to, cast, dtype_of, shape_of, unbroadcast
from ._contract import contract
from ._einsum_forms import canonical, from_sublists
from ._elementwise import multiply
from ._shape import reshape, swapaxes

matmul = primitive(np.matmul, "matmul")


def _matmul_nt(a, b):
    return np.matmul(a, np.asarray(b).swapaxes(-1, -2))  # the method: np.swapaxes adds two Python frames


def _matmul_tn(a, b):
    return np.matmul(np.asarray(a).swapaxes(-1, -2), b)


# The two transposed GEMM forms, over the last two axes of operands of two or more: matmul_nt(a, b) = a bᵀ and
# matmul_tn(a, b) = aᵀ b (BLAS reads the transposed operand in place).  The pullbacks of matmul, matmul_nt and
# matmul_tn are products of these three forms, so a derivative of any order records no transpose: without them
# MAML's meta-gradient recorded 804 transposes among its 2922 ops.
matmul_nt = primitive(_matmul_nt, "matmul_nt")
matmul_tn = primitive(_matmul_tn, "matmul_tn")


def _matmul_vjp_x(g, ans, x, y):
    """``g y^T``, as a matmul of the right shape in every form (never a broadcast product and a sum)."""
    if len(shape_of(y)) == 1:  # (..., n, k) @ (k,) -> (...): the rank-1 product g y^T
        return unbroadcast(_outer(g, y), x)
    if len(shape_of(x)) == 1:  # (k,) @ (..., k, m) -> (..., m): y g, a GEMV per matrix of y
        if len(shape_of(y)) == 2:
            return unbroadcast(matmul(y, g), x)
        return unbroadcast(_drop_last(matmul(y, _append_axis(g))), x)
    return unbroadcast(matmul_nt(g, y), x)


def _matmul_vjp_y(g, ans, x, y):
    """``x^T g``, as a matmul of the right shape; x's leading axes fold into rows when y has none."""
    nx, ny = len(shape_of(x)), len(shape_of(y))
    if ny == 1 and nx == 1:  # (k,) @ (k,): g x
        return unbroadcast(_outer(g, x), y)
    if ny == 1:  # (..., n, k) @ (k,): sum over every row of g_row x_row, one GEMV g @ x
        return unbroadcast(matmul(_rows(g, ()), _rows(x, shape_of(x)[-1:])), y)
    if nx == 1:  # (k,) @ (..., k, m): the rank-1 product x g^T per matrix of g
        return unbroadcast(matmul(_append_axis(x), _insert_axis(g)), y)
    if ny == 2 and nx > 2:  # (..., n, k) @ (k, m): one GEMM over the folded rows, no batch to sum
        return unbroadcast(matmul_tn(_rows(x, shape_of(x)[-1:]), _rows(g, shape_of(g)[-1:])), y)
    return unbroadcast(matmul_tn(x, g), y)


def _outer(u, v):
    """``u[..., None] * v`` for a vector ``v``, as the matmul ``(..., 1) @ (1, k)`` (its pullbacks are GEMVs)."""
    return matmul(_append_axis(u), reshape(v, (1,) + shape_of(v)))


def _rows(a, tail):
    """``a`` with every leading axis folded into one: ``(..., *tail) -> (rows, *tail)`` (no copy when contiguous)."""
    shape = shape_of(a)
    lead = shape[:len(shape) - len(tail)]
    return a if len(lead) == 1 else reshape(a, (math.prod(lead),) + tuple(tail))


def _append_axis(a):
    return reshape(a, shape_of(a) + (1,))


def _insert_axis(a):
    s = shape_of(a)
    return reshape(a, s[:-1] + (1, s[-1]))


def _drop_last(a):
    return reshape(a, shape_of(a)[:-1])


defvjp(matmul, _matmul_vjp_x, _matmul_vjp_y, reads=("y", "x"))  # each reads the other, and itself for its shape
deflinear(matmul)  # one matmul per argument with a tangent: (x + tx)(y + ty) - xy, to first order
defbatch(matmul, matmul_rule)
defvjp(matmul_nt, lambda g, ans, a, b: unbroadcast(matmul(g, b), a),  # a bᵀ: g b and gᵀ a
       lambda g, ans, a, b: unbroadcast(matmul_tn(g, a), b), reads=("b", "a"))
defvjp(matmul_tn, lambda g, ans, a, b: unbroadcast(matmul_nt(b, g), a),  # aᵀ b: b gᵀ and a g
       lambda g, ans, a, b: unbroadcast(matmul(a, g), b), reads=("b", "a"))
deflinear(matmul_nt)
deflinear(matmul_tn)
defbatch(matmul_nt, lambda level, args, bdims, kwargs: matmul_rule(  # as matmul: one GEMM over folded rows
    level, (args[0], swapaxes(args[1], -1, -2)), bdims, kwargs))
defbatch(matmul_tn, lambda level, args, bdims, kwargs: matmul_rule(
    level, (swapaxes(args[0], -1, -2), args[1]), bdims, kwargs))


def dot(x, y):
    """``numpy.dot`` for scalars, vectors and matrices (matmul or multiply underneath)."""
    nx, ny = len(shape_of(x)), len(shape_of(y))
    if nx == 0 or ny == 0:
        return multiply(x, y)
    if nx <= 2 and ny <= 2:
        return matmul(x, y)
    return tensordot(x, y, axes=([-1], [-2 if ny > 1 else -1]))


def _parse(subscripts, n):
    """``'ij,jk->ik'`` -> ``(['ij', 'jk'], 'ik')``; an implicit output is numpy's (letters used once, sorted)."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins = subscripts
        letters = ins.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = ins.split(",")
    if len(ins) != n:
        raise ValueError(f"autodiff.numpy.einsum: {len(ins)} operands in {subscripts!r} but {n} given")
    return ins, out


def _einsum(subscripts, *operands):
    if len(operands) == 2:  # GEMV/GEMM through one matmul (numpy.einsum's own loops never call BLAS)
        return contract(subscripts, *operands)
    return np.einsum(subscripts, *operands, optimize=len(operands) > 2)


_einsum_p = primitive(_einsum, "einsum")


def _einsum_vjp(g, ans, subscripts, *operands):
    ins, out = _parse(subscripts, len(operands))
    return [None] + [Thunk(lambda k=k: _einsum_operand_ct(g, ins, out, operands, k)) for k in range(len(operands))]


def _einsum_operand_ct(g, ins, out, operands, k):
    """The cotangent of operand ``k``: an einsum of ``g`` with the other operands.

    A letter repeated within operand ``k`` (a diagonal, ``'ii->i'``) is renamed
    and tied by an identity matrix, which puts the cotangent on that diagonal;
    a letter summed only inside operand ``k`` gets the cotangent broadcast along
    it.  The result has operand ``k``'s dtype: the real part for a real operand
    of a complex product.
    """
    shape, dtype = shape_of(operands[k]), dtype_of(operands[k])
    used = set("".join(ins) + out)
    target, deltas = _untie(ins[k], shape, used, np.empty(0, dtype).real.dtype)
    others = [(ins[j], operands[j]) for j in range(len(operands)) if j != k] + deltas
    known = set(out).union(*[set(s) for s, _ in others])
    kept = "".join(c for c in target if c in known)
    ct = _einsum_p(",".join([out] + [s for s, _ in others]) + "->" + kept, g, *[op for _, op in others])
    if kept != target:  # constant along the axes summed away only inside this operand
        ct = broadcast_to(reshape(ct, tuple(n if c in known else 1 for c, n in zip(target, shape))), shape)
    return ct if dtype_of(ct) == dtype else cast(ct, dtype)


def _untie(term, shape, used, dtype):
    """``'iij'`` -> ``('izj', [('iz', eye)])``: each repeated letter renamed, tied to the first by an identity."""
    fresh = (c for c in _LABELS if c not in used)
    renamed, deltas = "", []
    for c, n in zip(term, shape):
        if c in renamed:
            new = next(fresh, None)
            if new is None:
                raise ValueError("autodiff.numpy.einsum: too many axes to differentiate (52 labels in all)")
            deltas.append((c + new, np.eye(n, dtype=dtype)))
            c = new
        renamed += c
    return renamed, deltas


defvjp_joint(_einsum_p, _einsum_vjp)
deflinear(_einsum_p)  # the subscripts are a constant, each operand enters linearly
defbatch(_einsum_p, einsum_rule)


def einsum(*operands, optimize=False, **unsupported):
    """``numpy.einsum``, differentiable: every form numpy accepts.

    Subscript strings or the sublist form (``einsum(x, [0, 1], [1, 0])``),
    ``...``, an implicit output (no ``->``), repeated indices within one
    operand (``'ii->i'``, ``'ii'``), and size-1 axes that broadcast.
    ``optimize`` is accepted and ignored: a product of two operands is one
    (batched) matmul, so GEMV or GEMM (see ``_contract``), and so is every
    pullback of it; products of three or more operands are always optimised.

    >>> import numpy as np
    >>> import autodiff
    >>> autodiff.grad(lambda x: einsum('ii', x))(np.ones((2, 2)))
    array([[1., 0.],
           [0., 1.]])
    """
    if unsupported:
        raise TypeError(
            f"autodiff.numpy.einsum: {', '.join(f'{k}=' for k in unsupported)} is not supported; "
            "drop it and cast the result with autodiff.numpy.astype if you need another dtype"
        )
    if not operands:
        raise TypeError("autodiff.numpy.einsum: expected subscripts and operands, got nothing")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], list(operands[1:])
    else:
        subscripts, arrays = from_sublists(operands)
    subscripts, arrays = canonical(subscripts, arrays)
    return _einsum_p(subscripts, *arrays)


_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_LABELS = string.ascii_letters


def _own_dtype(x, other):
    """``x``, cast to its own dtype when ``other``'s differs: an identity whose pullback casts the
    cotangent back (a real operand of a complex product gets a real cotangent, float32 stays float32),
    as ``unbroadcast`` does for multiply and matmul; einsum's pullback gives it in the product's dtype."""
    from ._broadcast import cast

    dtype = dtype_of(x)
    return x if dtype == dtype_of(other) else cast(x, dtype)


def tensordot(a, b, axes=2):
    """Sum products over the given axes: an einsum underneath, so one GEMV or GEMM, as ``numpy.tensordot``.

    >>> import numpy as np
    >>> tensordot(np.ones((2, 3)), np.arange(3.0), axes=1)
    array([3., 3.])
    """
    na, nb = len(shape_of(a)), len(shape_of(b))
    if isinstance(axes, int):
        axes_a, axes_b = list(range(na - axes, na)), list(range(axes))
    else:
        axes_a, axes_b = [list(np.atleast_1d(ax)) for ax in axes]
    axes_a, axes_b = [x % na for x in axes_a], [x % nb for x in axes_b]
    sa = list(_LETTERS[:na])
    sb = list(_LETTERS[na:na + nb])
    for i, j in zip(axes_a, axes_b):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in axes_a] + [c for j, c in enumerate(sb) if j not in axes_b]
    return _einsum_p("".join(sa) + "," + "".join(sb) + "->" + "".join(out), _own_dtype(a, b), _own_dtype(b, a))


def inner(a, b):
    """Inner product over the last axes."""
    if len(shape_of(a)) == 0 or len(shape_of(b)) == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def outer(a, b):
    """Outer product of the flattened inputs."""
    from ._shape import ravel

    return _einsum_p("i,j->ij", ravel(_own_dtype(a, b)), ravel(_own_dtype(b, a)))


def vdot(a, b):
    """Dot product of the flattened inputs, conjugating the first."""
    from ._complex import conj
    from ._shape import ravel

    a = conj(a) if np.result_type(value_of(a)).kind == "c" else a
    return _einsum_p("i,i->", ravel(_own_dtype(a, b)), ravel(_own_dtype(b, a)))


def _diagonal(x, offset=0, axis1=0, axis2=1):
    return np.diagonal(x, offset, axis1, axis2).copy()


diagonal = primitive(_diagonal, "diagonal")


def _diagonal_index(shape, offset, axis1, axis2):
    n1, n2 = shape[axis1], shape[axis2]
    k = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    rows = np.arange(k) - min(offset, 0)
    cols = np.arange(k) + max(offset, 0)
    return rows, cols


def _put_diagonal(g, shape, dtype, offset, axis1, axis2):
    out = np.zeros(shape, dtype)
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    rows, cols = _diagonal_index(shape, offset, axis1, axis2)
    view[..., rows, cols] = g
    return out


put_diagonal = primitive(_put_diagonal, "put_diagonal")
defvjp(diagonal, lambda g, ans, x, offset=0, axis1=0, axis2=1: put_diagonal(
    g, shape_of(x), dtype_of(x), offset, axis1 % len(shape_of(x)), axis2 % len(shape_of(x))))
defvjp(put_diagonal, lambda h, ans, g, shape, dtype, offset, axis1, axis2: diagonal(h, offset, axis1, axis2))
deflinear(diagonal)
defbatch(diagonal, diagonal_rule)
deflinear(put_diagonal)
defbatch(put_diagonal, put_diagonal_rule)


def diag(v, k=0):
    """The ``k``-th diagonal of a matrix, or a matrix with ``v`` on its ``k``-th diagonal."""
    shape = shape_of(v)
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise ValueError("autodiff.numpy.diag: input must be 1-D or 2-D")
    n = shape[0] + abs(k)
    return put_diagonal(v, (n, n), dtype_of(v), k, 0, 1)


def trace(x, offset=0, axis1=0, axis2=1):
    """Sum along a diagonal."""
    from ._reductions import sum

    return sum(diagonal(x, offset, axis1, axis2), axis=-1)
