"""``autodiff.scipy.linalg``: triangular solves, Cholesky and LU factors, matrix functions, ``block_diag``.

``solve_triangular``, ``lu_factor``, ``expm``, ``sqrtm`` and ``logm`` are primitives, each with its
pullback and its pushforward; the rest are compositions.  A matrix function's pushforward is its Frechet
derivative ``L_f(A, E)``, read off the same function of the block matrix ``[[A, E], [0, A]]`` (Higham,
*Functions of Matrices*, 2008, thm 3.6), and its pullback is ``L_f(A^T, G)``, so both are written with the
function itself and nest.  Real input only: a complex matrix is refused, naming the function.

>>> import numpy as np
>>> import autodiff
>>> a = np.array([[2.0, 0.0], [1.0, 4.0]])
>>> autodiff.grad(lambda b: solve_triangular(a, b, lower=True).sum())(np.ones(2))
array([0.375, 0.25 ])
"""

import warnings

import numpy as np
import scipy.linalg as sl

from ..extend import defbatch, defjvp, defvjp, primitive
from ..numpy import NONDIFF, concatenate, linalg, matmul, moveaxis, multiply, negative, reshape, swapaxes
from ..numpy._batch_helpers import align, example_shape, per_example, whole
from ..numpy._broadcast import dtype_of, shape_of, unbroadcast
from ..numpy._sorting import permute_along
from ._linear_equations import solve_banded, solve_sylvester
from ._real import refuse_complex

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor", "lu_solve",
           "expm", "sqrtm", "logm", "block_diag", "solve_sylvester", "solve_banded"]


def _t(a):
    return swapaxes(a, -1, -2)


def _trans_flag(trans):
    flags = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}
    if trans not in flags:
        raise ValueError(f"autodiff.scipy.linalg: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return flags[trans]


def _empty_stacks(fun):
    """``fun``, a scipy routine over stacks of matrices (first argument), also given a stack of 0 matrices,
    which scipy refuses (vmap over an empty batch): it runs on a stack of one identity, the other empty
    arguments made one example of zeros, and keeps 0 of each result, the shapes a loop over no matrices stacks."""

    def run(a, *rest, **kwargs):
        batch = np.shape(a)[:-2]
        if 0 not in batch:
            return fun(a, *rest, **kwargs)
        one = np.broadcast_to(np.eye(np.shape(a)[-1], dtype=a.dtype), tuple(max(d, 1) for d in batch) + a.shape[-2:])
        rest = [np.zeros(tuple(max(d, 1) for d in np.shape(r)), np.result_type(r)) if np.size(r) == 0 else r
                for r in rest]
        keep = tuple(slice(0, 0) if d == 0 else slice(None) for d in batch)
        out = fun(one, *rest, **kwargs)
        return tuple(o[keep] for o in out) if type(out) in (tuple, list) else out[keep]

    return run


def _solve_triangular(a, b, trans, lower, unit_diagonal):
    refuse_complex("autodiff.scipy.linalg.solve_triangular", a, b)
    if np.size(a) == 0 or np.size(b) == 0:  # scipy refuses empty stacks (vmap over an empty batch)
        return np.zeros(_solved_shape(np.shape(a), np.shape(b)), np.result_type(a, b, 1.0))
    return sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def _solved_shape(a, b):
    """The shape of ``x`` in ``a x = b`` for a stack of matrices ``a``: ``b`` one vector, or matrices."""
    if len(b) == 1:
        return a[:-2] + b
    return np.broadcast_shapes(a[:-2], b[:-2]) + b[-2:]


_solve_triangular_p = primitive(_solve_triangular, "solve_triangular")


def _as_matrix(v, vector):
    return v[..., None] if vector else v


def _is_vector(b):
    """Does scipy read ``b`` as one right-hand side?  Only a 1-D ``b`` (beside a stack of matrices too)."""
    return len(shape_of(b)) == 1


def _triangle_mask(n, lower, unit_diagonal, dtype):
    keep = np.tril(np.ones((n, n))) if lower else np.triu(np.ones((n, n)))
    return (keep - np.eye(n) if unit_diagonal else keep).astype(dtype)


def _solve_triangular_ct_b(g, a, b, trans, lower, unit_diagonal):
    """``op(A)^-T g`` per system, as columns (a vector ``b``'s ``g`` made one column)."""
    return _solve_triangular_p(a, _as_matrix(g, _is_vector(b)), 1 - trans, lower, unit_diagonal)


def _solve_triangular_vjp_b(g, ans, a, b, trans, lower, unit_diagonal):
    gb = _solve_triangular_ct_b(g, a, b, trans, lower, unit_diagonal)
    return unbroadcast(gb[..., 0] if _is_vector(b) else gb, b)  # a shared b sums a stack's cotangents


def _solve_triangular_vjp_a(g, ans, a, b, trans, lower, unit_diagonal):
    gb = _solve_triangular_ct_b(g, a, b, trans, lower, unit_diagonal)
    x = _as_matrix(ans, _is_vector(b))
    outer = matmul(gb, _t(x)) if trans == 0 else matmul(x, _t(gb))  # op(A) x = b: d op(A) = -gb x^T
    mask = _triangle_mask(shape_of(a)[-1], lower, unit_diagonal, dtype_of(a))
    return unbroadcast(negative(multiply(outer, mask)), a)  # a shared a sums a stack's cotangents


defvjp(_solve_triangular_p, _solve_triangular_vjp_a, _solve_triangular_vjp_b)


def _solve_triangular_jvp_a(t, ans, a, b, trans, lower, unit_diagonal):
    """``op(A) x = b``: ``op(A) dx = -op(dA) x``, with ``dA`` kept to the triangle read."""
    vector = _is_vector(b)
    da = multiply(t, _triangle_mask(shape_of(a)[-1], lower, unit_diagonal, dtype_of(a)))
    moved = matmul(da if trans == 0 else _t(da), _as_matrix(ans, vector))
    dx = negative(_solve_triangular_p(a, moved, trans, lower, unit_diagonal))
    return dx[..., 0] if vector else dx


def _solve_triangular_jvp_b(t, ans, a, b, trans, lower, unit_diagonal):
    return _solve_triangular_p(a, t, trans, lower, unit_diagonal)


defjvp(_solve_triangular_p, _solve_triangular_jvp_a, _solve_triangular_jvp_b)


def _solve_triangular_batch(level, args, bdims, kwargs):
    """One solve for the whole batch.  A shared matrix solves every example's right-hand sides at once as
    the columns of one ``b``; a batched one is a stack of matrices (a vector ``b`` made a column)."""
    (a, b, *flags), (ba, bb) = args, bdims[:2]
    ashape, bshape = example_shape(a, ba), example_shape(b, bb)
    if ba is None and len(ashape) == 2 and len(bshape) <= 2:
        return _shared_matrix_solve(level.size, a, b, bshape, flags), 0
    vector = len(bshape) == 1
    if vector:  # one column, batched or not: scipy reads a stacked b's last two axes as a matrix
        b = reshape(b, shape_of(b) + (1,))
    rank = max(len(ashape), len(bshape) + vector)
    a = a if ba is None else align(a, rank)
    b = b if bb is None else align(b, rank)
    out = _solve_triangular_p(a, b, *flags)
    return (out[..., 0] if vector else out), 0


def _shared_matrix_solve(size, a, b, bshape, flags):
    """``op(a) X = [b_1 ... b_B]``: the batch's right-hand sides (``(B, n)`` or ``(B, n, k)``) as columns."""
    n, k = bshape[0], int(np.prod(bshape[1:]))
    columns = reshape(moveaxis(b, 0, -1), (n, k * size))  # column j * B + i is column j of example i
    out = reshape(_solve_triangular_p(a, columns, *flags), bshape + (size,))
    return moveaxis(out, -1, 0)


defbatch(_solve_triangular_p, _solve_triangular_batch)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
    """Solve ``op(a) x = b`` for triangular ``a`` (``op`` is ``a`` or ``a^T``); only that triangle is read.

    The gradient in ``a`` lies in the triangle read (without the diagonal when ``unit_diagonal``).
    Batched ``a`` (``(..., n, n)``) and ``b`` (``(..., n)`` or ``(..., n, k)``) work as in scipy.

    >>> import numpy as np
    >>> import autodiff
    >>> a = np.array([[2.0, 0.0], [1.0, 4.0]])
    >>> solve_triangular(a, np.array([2.0, 9.0]), lower=True)
    array([1., 2.])
    >>> autodiff.grad(lambda a: solve_triangular(a, np.array([2.0, 9.0]), lower=True)[1])(a)  # upper triangle: 0
    array([[ 0.125,  0.   ],
           [-0.25 , -0.5  ]])
    """
    return _solve_triangular_p(a, b, _trans_flag(trans), bool(lower), bool(unit_diagonal))


def cholesky(a, lower=False):
    """The Cholesky factor of a symmetric positive-definite ``a``: upper (scipy's default) or lower.

    >>> import numpy as np
    >>> import autodiff
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
    array([[2., 1.],
           [0., 2.]])
    >>> autodiff.grad(lambda a: cholesky(a)[0, 0])(np.array([[4.0, 2.0], [2.0, 5.0]]))  # d sqrt(a00)
    array([[0.25, 0.  ],
           [0.  , 0.  ]])
    """
    refuse_complex("autodiff.scipy.linalg.cholesky", a)
    factor = linalg.cholesky(a)
    return factor if lower else _t(factor)


def cho_factor(a, lower=False):
    """``(c, lower)`` for ``cho_solve``; ``c``'s other triangle is zero (scipy leaves it unspecified).

    >>> import numpy as np
    >>> cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]), lower=True)
    (array([[2., 0.],
           [1., 2.]]), True)
    """
    refuse_complex("autodiff.scipy.linalg.cho_factor", a)
    return cholesky(a, lower), lower


def cho_solve(c_and_lower, b):
    """Solve ``a x = b`` from ``cho_factor(a)``: two triangular solves, differentiable in ``c`` and ``b``.

    >>> import numpy as np
    >>> import autodiff
    >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> cho_solve(cho_factor(a), np.array([6.0, 7.0]))
    array([1., 1.])
    >>> g = autodiff.grad(lambda a: cho_solve(cho_factor(a), np.array([6.0, 7.0])).sum())(a)
    >>> full = -np.outer(np.linalg.solve(a, np.ones(2)), np.ones(2))  # -a^-1 1 x^T, for a general a
    >>> bool(np.allclose(g, (full + full.T) / 2))  # the Cholesky factor reads a symmetric a
    True
    """
    c, lower = c_and_lower
    refuse_complex("autodiff.scipy.linalg.cho_solve", c, b)
    y = solve_triangular(c, b, trans=0 if lower else 1, lower=lower)
    return solve_triangular(c, y, trans=1 if lower else 0, lower=lower)


def _row_permutation(piv):
    """LAPACK's sequential row swaps as one permutation: ``a[perm] = L @ U`` (over leading axes too)."""
    piv = np.asarray(piv)
    n = piv.shape[-1]
    swaps = piv.reshape(-1, n)
    perm, rows = np.tile(np.arange(n), (len(swaps), 1)), np.arange(len(swaps))
    for i in range(n):
        p = swaps[:, i]
        perm[rows, i], perm[rows, p] = perm[rows, p], perm[rows, i]
    return perm.reshape(piv.shape)


def _pivots(a):
    """scipy's pivots of ``a`` (integers, read without derivatives): one row per matrix, batched under vmap."""
    return per_example(lambda v: _empty_stacks(sl.lu_factor)(v)[1], a)


def _permutations(a):
    """``(perm, inverse)`` of ``a``'s pivoting: ``a[perm] = L U`` and ``(L U)[inverse] = a``, per matrix."""
    perm = per_example(_row_permutation, _pivots(a))
    return perm, NONDIFF["argsort"](perm, axis=-1)


def _take_rows(x, order):
    """``x[order]`` for each matrix: ``order`` (one permutation per matrix) reorders the rows (axis -2)."""
    return permute_along(x, order[..., None], -2)


def _lu_packed(a):
    refuse_complex("autodiff.scipy.linalg.lu_factor", a)
    return _empty_stacks(sl.lu_factor)(a)[0]


_lu_packed_p = primitive(_lu_packed, "lu_factor")


def _lu_factor_vjp(g, lu, a):
    """Packed ``lu`` holds ``L`` (unit, strict lower) and ``U``; pull both back through ``a[perm] = L U``."""
    n = shape_of(a)[-1]
    dtype = dtype_of(a)
    strict, upper = np.tril(np.ones((n, n)), -1).astype(dtype), np.triu(np.ones((n, n))).astype(dtype)
    low, up = _add_unit(multiply(lu, strict)), multiply(lu, upper)
    from_l = multiply(matmul(_t(low), multiply(g, strict)), strict)
    middle = from_l + multiply(matmul(multiply(g, upper), _t(up)), upper)
    left = solve_triangular(low, middle, trans=1, lower=True, unit_diagonal=True)
    ga_perm = _t(solve_triangular(up, _t(left), trans=0, lower=False))  # middle U^-T, row by row
    return _take_rows(ga_perm, _permutations(a)[1])


def _add_unit(strict_lower):
    return strict_lower + np.eye(shape_of(strict_lower)[-1], dtype=dtype_of(strict_lower))


defvjp(_lu_packed_p, _lu_factor_vjp)


def _lu_factor_jvp(t, lu, a):
    """``a[perm] = L U`` gives ``L^-1 da[perm] U^-1 = L^-1 dL + dU U^-1``: strictly lower plus upper."""
    n = shape_of(a)[-1]
    dtype = dtype_of(a)
    strict, upper = np.tril(np.ones((n, n)), -1).astype(dtype), np.triu(np.ones((n, n))).astype(dtype)
    low, up = _add_unit(multiply(lu, strict)), multiply(lu, upper)
    left = solve_triangular(low, _take_rows(t, _permutations(a)[0]), lower=True, unit_diagonal=True)
    x = _t(solve_triangular(up, _t(left), trans=1, lower=False))  # L^-1 da[perm] U^-1
    return matmul(low, multiply(x, strict)) + matmul(multiply(x, upper), up)


defjvp(_lu_packed_p, _lu_factor_jvp)
defbatch(_lu_packed_p, whole(_lu_packed_p))  # scipy factors a stack of matrices: the batch leads it


def lu_factor(a):
    """``(lu, piv)`` as scipy gives them: ``lu`` is differentiable, the pivots are integers.

    >>> import numpy as np
    >>> lu, piv = lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu, piv  # rows swapped: L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]]
    (array([[3.        , 4.        ],
           [0.33333333, 0.66666667]]), array([1, 1], dtype=int32))
    """
    refuse_complex("autodiff.scipy.linalg.lu_factor", a)
    if len(shape_of(a)) != 2 or shape_of(a)[0] != shape_of(a)[1]:
        raise ValueError(f"autodiff.scipy.linalg.lu_factor: expected a square matrix, got shape {shape_of(a)}")
    return _lu_packed_p(a), _pivots(a)


def lu_solve(lu_and_piv, b, trans=0):
    """Solve ``a x = b`` (``trans=1``: ``a^T x = b``) from ``lu_factor(a)``; differentiable in ``lu`` and ``b``.

    >>> import numpy as np
    >>> import autodiff
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> lu_solve(lu_factor(a), np.array([5.0, 11.0]))
    array([1., 2.])
    >>> g = autodiff.grad(lambda a: lu_solve(lu_factor(a), np.array([5.0, 11.0])).sum())(a)
    >>> bool(np.allclose(g, -np.outer(np.linalg.solve(a.T, np.ones(2)), [1.0, 2.0])))  # -a^-T 1 x^T
    True
    """
    lu, piv = lu_and_piv
    refuse_complex("autodiff.scipy.linalg.lu_solve", lu, b)
    perm = per_example(_row_permutation, piv)  # under vmap, a batched piv: one permutation per example
    if _trans_flag(trans) == 0:
        y = solve_triangular(lu, _reordered(b, perm), lower=True, unit_diagonal=True)
        return solve_triangular(lu, y, lower=False)
    y = solve_triangular(lu, b, trans=1, lower=False)
    x = solve_triangular(lu, y, trans=1, lower=True, unit_diagonal=True)
    return _reordered(x, NONDIFF["argsort"](perm))


def _reordered(b, order):
    """``b[order]`` (a vector, or a matrix's rows), a gather along axis 0 that batches with ``order``."""
    return permute_along(b, reshape(order, shape_of(order) + (1,) * (len(shape_of(b)) - 1)), 0)


def _frechet(f, a, e):
    """``L_f(a, e)``: the upper-right block of ``f([[a, e], [0, a]])``."""
    n = shape_of(a)[-1]
    zeros = np.zeros(shape_of(a), dtype=dtype_of(a))
    block = concatenate([concatenate([a, e], axis=-1), concatenate([zeros, a], axis=-1)], axis=-2)
    return f(block)[..., :n, n:]


def _real_matrix_function(name, scipy_f):
    """A primitive for ``scipy_f`` that refuses a complex result (the function is not smooth and real there)."""

    def forward(a):
        refuse_complex(f"autodiff.scipy.linalg.{name}", a)
        out = scipy_f(a)
        if np.iscomplexobj(out) and not np.iscomplexobj(a):
            # a rounding artefact is tiny; eigenvalues on the negative axis give imaginary parts near pi
            if np.abs(out.imag).max() > 1e-4 * max(1.0, np.abs(out).max()):
                raise ValueError(
                    f"autodiff.scipy.linalg.{name}: the result for this real matrix is complex (it has "
                    "eigenvalues on the closed negative real axis); pass a matrix whose eigenvalues avoid it"
                )
            out = out.real
        # a copy that owns its memory: sqrtm's result views a DLPack capsule, which numpy will not make
        # writeable again once a tape has protected it
        return np.array(out, dtype=np.result_type(a, np.float32))

    prim = primitive(forward, name)
    defvjp(prim, lambda g, ans, a: _frechet(prim, _t(a), g))
    defjvp(prim, lambda t, ans, a: _frechet(prim, a, t))
    defbatch(prim, whole(prim))  # scipy maps stacks of matrices: the batch is one more leading axis
    return prim


expm = _real_matrix_function("expm", sl.expm)
expm.__doc__ = """The matrix exponential (batched ``(..., n, n)`` too); float32 stays float32.

>>> import numpy as np
>>> import autodiff
>>> expm(np.array([[0.0, 1.0], [0.0, 0.0]]))
array([[1., 1.],
       [0., 1.]])
>>> autodiff.grad(lambda s: expm(s * np.eye(2))[0, 0])(1.0)  # d/ds e^s at s = 1
2.718281828459045
"""

sqrtm = _real_matrix_function("sqrtm", lambda a: sl.sqrtm(a))
sqrtm.__doc__ = """The principal square root, for real matrices without eigenvalues on the closed negative axis.

>>> import numpy as np
>>> import autodiff
>>> sqrtm(np.diag([4.0, 9.0]))
array([[2., 0.],
       [0., 3.]])
>>> autodiff.grad(lambda a: sqrtm(a)[1, 1])(np.diag([4.0, 9.0]))  # 1 / (2 sqrt 9) on the diagonal entry
array([[0.        , 0.        ],
       [0.        , 0.16666667]])
"""

@_empty_stacks
def _logm(a):
    with warnings.catch_warnings():  # scipy's accuracy estimate is pessimistic on the pullback's block matrices
        warnings.filterwarnings("ignore", "logm result may be inaccurate", RuntimeWarning)
        return sl.logm(a)


logm = _real_matrix_function("logm", _logm)
logm.__doc__ = """The principal logarithm, for real matrices without eigenvalues on the closed negative axis.

>>> import numpy as np
>>> import autodiff
>>> logm(np.e * np.eye(2))
array([[1., 0.],
       [0., 1.]])
>>> float(autodiff.grad(lambda s: logm(s * np.eye(2))[0, 0])(2.0))  # d/ds log s
0.5
"""


def block_diag(*arrs):
    """The block-diagonal matrix of ``arrs`` (each 0-, 1- or 2-d, as in scipy); differentiable in each block.

    >>> import numpy as np
    >>> import autodiff
    >>> block_diag(np.ones((1, 2)), 3.0)
    array([[1., 1., 0.],
           [0., 0., 3.]])
    >>> float(autodiff.grad(lambda s: block_diag(np.ones((1, 2)), s).sum())(3.0))
    1.0
    """
    refuse_complex("autodiff.scipy.linalg.block_diag", *arrs)
    blocks = [_as_block(a) for a in arrs]
    dtype = np.result_type(*[dtype_of(b) for b in blocks]) if blocks else np.float64
    widths = [shape_of(b)[1] for b in blocks]
    total = sum(widths)
    rows, left = [], 0
    for b, w in zip(blocks, widths):
        r = shape_of(b)[0]
        pieces = [np.zeros((r, left), dtype), b, np.zeros((r, total - left - w), dtype)]
        rows.append(concatenate(pieces, axis=1))
        left += w
    return concatenate(rows, axis=0) if rows else np.zeros((1, 0), dtype)


def _as_block(a):
    ndim = len(shape_of(a))
    if ndim > 2:
        raise ValueError(f"autodiff.scipy.linalg.block_diag: blocks must be at most 2-d, got shape {shape_of(a)}")
    return reshape(a, (1, -1)) if ndim < 2 else a
