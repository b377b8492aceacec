"""``autodiff.scipy.linalg``: triangular solves, Cholesky and LU factors, matrix functions, ``block_diag``.

``solve_triangular``, ``lu_factor``, ``expm``, ``sqrtm`` and ``logm`` are primitives; the rest are
compositions.  A matrix function's pullback is its Frechet derivative at ``A^T`` applied to the
cotangent, read off the same function of the block matrix ``[[A^T, G], [0, A^T]]`` (Higham,
*Functions of Matrices*, 2008, thm 3.6), so it is written with the function itself and nests.

>>> import numpy as np
>>> import autodiff
>>> a = np.array([[2.0, 0.0], [1.0, 4.0]])
>>> autodiff.grad(lambda b: solve_triangular(a, b, lower=True).sum())(np.ones(2))
array([0.375, 0.25 ])
"""

import warnings

import numpy as np
import scipy.linalg as sl

from ..extend import defvjp, primitive
from ..numpy import concatenate, linalg, matmul, multiply, negative, reshape, swapaxes
from ..numpy._broadcast import dtype_of, shape_of
from ._plain import plain

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor", "lu_solve",
           "expm", "sqrtm", "logm", "block_diag"]


def _t(a):
    return swapaxes(a, -1, -2)


def _trans_flag(trans):
    flags = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}
    if trans not in flags:
        raise ValueError(f"autodiff.scipy.linalg: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return flags[trans]


def _solve_triangular(a, b, trans, lower, unit_diagonal):
    return sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


_solve_triangular_p = primitive(_solve_triangular, "solve_triangular")


def _as_matrix(v, vector):
    return v[..., None] if vector else v


def _triangle_mask(n, lower, unit_diagonal, dtype):
    keep = np.tril(np.ones((n, n))) if lower else np.triu(np.ones((n, n)))
    return (keep - np.eye(n) if unit_diagonal else keep).astype(dtype)


def _solve_triangular_vjp_b(g, ans, a, b, trans, lower, unit_diagonal):
    return _solve_triangular_p(a, g, 1 - trans, lower, unit_diagonal)


def _solve_triangular_vjp_a(g, ans, a, b, trans, lower, unit_diagonal):
    vector = len(shape_of(b)) == len(shape_of(a)) - 1
    gb = _as_matrix(_solve_triangular_p(a, g, 1 - trans, lower, unit_diagonal), vector)
    x = _as_matrix(ans, vector)
    outer = matmul(gb, _t(x)) if trans == 0 else matmul(x, _t(gb))  # op(A) x = b: d op(A) = -gb x^T
    return negative(multiply(outer, _triangle_mask(shape_of(a)[-1], lower, unit_diagonal, dtype_of(a))))


defvjp(_solve_triangular_p, _solve_triangular_vjp_a, _solve_triangular_vjp_b)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
    """Solve ``op(a) x = b`` for triangular ``a`` (``op`` is ``a`` or ``a^T``); only that triangle is read.

    The gradient in ``a`` lies in the triangle read (without the diagonal when ``unit_diagonal``).
    Batched ``a`` (``(..., n, n)``) and ``b`` (``(..., n)`` or ``(..., n, k)``) work as in scipy.
    """
    return _solve_triangular_p(a, b, _trans_flag(trans), bool(lower), bool(unit_diagonal))


def cholesky(a, lower=False):
    """The Cholesky factor of a symmetric positive-definite ``a``: upper (scipy's default) or lower."""
    factor = linalg.cholesky(a)
    return factor if lower else _t(factor)


def cho_factor(a, lower=False):
    """``(c, lower)`` for ``cho_solve``; ``c``'s other triangle is zero (scipy leaves it unspecified)."""
    return cholesky(a, lower), lower


def cho_solve(c_and_lower, b):
    """Solve ``a x = b`` from ``cho_factor(a)``: two triangular solves, differentiable in ``c`` and ``b``."""
    c, lower = c_and_lower
    y = solve_triangular(c, b, trans=0 if lower else 1, lower=lower)
    return solve_triangular(c, y, trans=1 if lower else 0, lower=lower)


def _row_permutation(piv):
    """LAPACK's sequential row swaps as one permutation: ``a[perm] = L @ U``."""
    perm = np.arange(len(piv))
    for i, p in enumerate(piv):
        perm[[i, p]] = perm[[p, i]]
    return perm


def _lu_packed(a):
    return sl.lu_factor(a)[0]


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
    perm = _row_permutation(sl.lu_factor(plain(a))[1])
    return ga_perm[np.argsort(perm)]


def _add_unit(strict_lower):
    return strict_lower + np.eye(shape_of(strict_lower)[-1], dtype=dtype_of(strict_lower))


defvjp(_lu_packed_p, _lu_factor_vjp)


def lu_factor(a):
    """``(lu, piv)`` as scipy gives them: ``lu`` is differentiable, the pivots are integers."""
    if len(shape_of(a)) != 2 or shape_of(a)[0] != shape_of(a)[1]:
        raise ValueError(f"autodiff.scipy.linalg.lu_factor: expected a square matrix, got shape {shape_of(a)}")
    return _lu_packed_p(a), sl.lu_factor(plain(a))[1]


def lu_solve(lu_and_piv, b, trans=0):
    """Solve ``a x = b`` (``trans=1``: ``a^T x = b``) from ``lu_factor(a)``; differentiable in ``lu`` and ``b``."""
    lu, piv = lu_and_piv
    perm = _row_permutation(piv)
    if _trans_flag(trans) == 0:
        y = solve_triangular(lu, b[perm], lower=True, unit_diagonal=True)
        return solve_triangular(lu, y, lower=False)
    y = solve_triangular(lu, b, trans=1, lower=False)
    x = solve_triangular(lu, y, trans=1, lower=True, unit_diagonal=True)
    return x[np.argsort(perm)]


def _frechet_adjoint(f, a, g):
    """``L_f(a^T, g)``: the upper-right block of ``f([[a^T, g], [0, a^T]])``."""
    n = shape_of(a)[-1]
    at = _t(a)
    zeros = np.zeros(shape_of(a), dtype=dtype_of(a))
    block = concatenate([concatenate([at, g], axis=-1), concatenate([zeros, at], axis=-1)], axis=-2)
    return f(block)[..., :n, n:]


def _real_matrix_function(name, scipy_f):
    """A primitive for ``scipy_f`` that refuses a complex result (the function is not smooth and real there)."""

    def forward(a):
        out = scipy_f(a)
        if np.iscomplexobj(out) and not np.iscomplexobj(a):
            # a rounding artefact is tiny; eigenvalues on the negative axis give imaginary parts near pi
            if np.abs(out.imag).max() > 1e-4 * max(1.0, np.abs(out).max()):
                raise ValueError(
                    f"autodiff.scipy.linalg.{name}: the result for this real matrix is complex (it has "
                    "eigenvalues on the closed negative real axis); pass a matrix whose eigenvalues avoid it"
                )
            out = out.real
        return out.astype(np.result_type(a, np.float32), copy=False)

    prim = primitive(forward, name)
    defvjp(prim, lambda g, ans, a: _frechet_adjoint(prim, a, g))
    return prim


expm = _real_matrix_function("expm", sl.expm)
expm.__doc__ = """The matrix exponential (batched ``(..., n, n)`` too); float32 stays float32."""

sqrtm = _real_matrix_function("sqrtm", lambda a: sl.sqrtm(a))
sqrtm.__doc__ = """The principal square root, for real matrices without eigenvalues on the closed negative axis."""

def _logm(a):
    with warnings.catch_warnings():  # scipy's accuracy estimate is pessimistic on the pullback's block matrices
        warnings.filterwarnings("ignore", "logm result may be inaccurate", RuntimeWarning)
        return sl.logm(a)


logm = _real_matrix_function("logm", _logm)
logm.__doc__ = """The principal logarithm, for real matrices without eigenvalues on the closed negative axis."""


def block_diag(*arrs):
    """The block-diagonal matrix of ``arrs`` (each 0-, 1- or 2-d, as in scipy); differentiable in each block."""
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
