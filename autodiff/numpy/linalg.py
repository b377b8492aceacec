"""``autodiff.numpy.linalg``: differentiable linear algebra (norm for now; more to come).

>>> import math

import numpy as np
>>> import autodiff
>>> autodiff.grad(norm)(np.array([3.0, 4.0]))
array([0.6, 0.8])
"""

import math

import numpy as np

from .._hooks import hooks
from ..extend import ZeroTangent, defbatch, defjvp, defvjp, is_inexact, primitive
from ._batch_helpers import whole
from ._batch_ops import solve_rule
from ._broadcast import dtype_of, shape_of, unbroadcast
from ._cofactors import cofactors
from ._complex import conj, imag, real, real_dtype
from ._construction import from_nested
from ._decompositions import eig, eigh, matrix_norm, pinv, svd
from ._elementwise import absolute, add, multiply, negative, power
from ._kinks import inverse_norm, root
from ._linalg import diagonal, matmul, vdot
from ._reductions import abs_squared, max, min, sum
from ._shape import reshape, swapaxes

__all__ = ["norm", "inv", "solve", "det", "slogdet", "cholesky", "svd", "eigh", "eig", "pinv", "matrix_norm"]


def _norm_value(x):
    return real_dtype(x).type(math.sqrt(hooks.sumsq64(x)))  # accumulated in float64 (numpy/_reductions.py)


_norm = primitive(_norm_value, "norm")


def _norm_vjp(g, ans, x):
    """``g conj(x) / |x|`` (JAX's convention); at the zero vector 0, and NaN in every higher order (``_kinks``)."""
    return multiply(conj(x) if dtype_of(x).kind == "c" else x, multiply(g, inverse_norm(ans)))


defvjp(_norm, _norm_vjp)


def _norm_jvp(t, ans, x):
    """``Re<x, t> / |x|``, the pullback transposed."""
    inner = real(vdot(x, t)) if dtype_of(x).kind == "c" else vdot(x, t)  # one BLAS dot, conj(x) for complex
    return multiply(inner, inverse_norm(ans))


defjvp(_norm, _norm_jvp)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms (ord None/2, 1, inf, -inf, p; over ``axis``) and matrix norms ('fro', 'nuc', 2, -2).

    ``ord=None`` over the whole array runs one float64-accumulating kernel;
    the rest are compositions of differentiable ops ('nuc', 2 and -2 through
    the singular values: :func:`matrix_norm`).  A float32 input gives a float32
    norm.  Matrix ord 1, -1, inf and -inf are not supported.

    >>> import numpy as np
    >>> float(norm(np.diag([3.0, -4.0]), "nuc"))
    7.0
    """
    x = from_nested(x)
    if not is_inexact(dtype_of(x)):
        raise TypeError(f"autodiff.numpy.linalg.norm: expected a float array, got dtype {dtype_of(x)}")
    ndim = len(shape_of(x))
    matrix = isinstance(axis, tuple) and len(axis) == 2 or (axis is None and ndim == 2 and ord is not None)
    if ord in (None, "fro") and (axis is None or matrix) and not keepdims:
        return _sum_of_squares_norm(x, axis, ndim)
    if matrix:
        return _matrix_norm(x, ord, axis, keepdims)
    return _vector_norm(x, ord, axis, keepdims)


def _sum_of_squares_norm(x, axis, ndim):
    """The 2-norm of all of ``x`` (one kernel) or the Frobenius norm over ``axis``, keepdims off."""
    whole = axis is None or {a % ndim for a in axis} == set(range(ndim))
    return _norm(x) if whole else _frobenius(x, axis)


def _matrix_norm(x, ord, axis, keepdims):
    """A matrix norm over the 2-tuple ``axis``; ``ord=None`` is the Frobenius norm, as in numpy."""
    if ord in (None, "fro"):
        return _frobenius(x, axis if axis is not None else (0, 1), keepdims)
    if ord in ("nuc", 2, -2):
        return matrix_norm(x, ord, axis if axis is not None else (-2, -1), keepdims)
    raise NotImplementedError(
        f"autodiff.numpy.linalg.norm: the matrix norm ord={ord!r} is not supported; "
        "use ord='fro', 'nuc', 2 or -2, or a vector norm over one axis"
    )


def _frobenius(x, axis, keepdims=False):
    # x ** 2 (x * conj(x)), not |x| * |x|: sign's zero derivative would lose the Hessian at exact zeros
    return root(sum(abs_squared(x), axis=axis, keepdims=keepdims))


def _vector_norm(x, ord, axis, keepdims):
    if ord in (None, 2):
        return _frobenius(x, axis, keepdims)
    a = absolute(x)
    if ord == 1:
        return sum(a, axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, (int, float)) and ord > 0:
        return root(sum(power(a, float(ord)), axis=axis, keepdims=keepdims), p=float(ord))
    raise NotImplementedError(f"autodiff.numpy.linalg.norm: ord={ord!r} is not supported for vectors")


def _t(a):
    return swapaxes(a, -1, -2)


inv = primitive(np.linalg.inv, "inv")
defvjp(inv, lambda g, ans, a: negative(matmul(matmul(_t(ans), g), _t(ans))))
defjvp(inv, lambda t, ans, a: negative(matmul(matmul(ans, t), ans)))  # d(A^-1) = -A^-1 dA A^-1
defbatch(inv, whole(inv))

solve = primitive(np.linalg.solve, "solve")


def _solve_vjp_b(g, ans, a, b):
    return unbroadcast(_solve_ct_b(g, a, b), b)  # sums a stack's cotangents for a shared b; a real b gets a real one


def _solve_ct_b(g, a, b):
    """``A^-T g`` per system.  numpy 2 reads ``b`` as a vector only when it is 1-D; beside a stack of
    matrices each system's ``g`` is then made a column and back."""
    if len(shape_of(b)) == 1 and len(shape_of(a)) > 2:
        return reshape(solve(_t(a), _column(g)), shape_of(g))
    return solve(_t(a), g)


def _solve_vjp_a(g, ans, a, b):
    """``-gb x^T`` per system: a matmul, the rank-1 product ``(n, 1) @ (1, n)`` for a vector ``b``."""
    gb = _solve_ct_b(g, a, b)
    if len(shape_of(b)) == 1:
        return unbroadcast(negative(matmul(_column(gb), _row(ans))), a)
    return unbroadcast(negative(matmul(gb, _t(ans))), a)


def _column(v):
    return reshape(v, shape_of(v) + (1,))


def _row(v):
    return reshape(v, shape_of(v)[:-1] + (1,) + shape_of(v)[-1:])


defvjp(solve, _solve_vjp_a, _solve_vjp_b)


def _solve_jvp_a(t, ans, a, b):
    """dx = -A^-1 dA x; a vector ``x`` (one fewer axis than ``a``) is made a column and back."""
    if len(shape_of(ans)) == len(shape_of(a)) - 1:
        column = reshape(ans, shape_of(ans) + (1,))
        return reshape(negative(solve(a, matmul(t, column))), shape_of(ans))
    return negative(solve(a, matmul(t, ans)))


defjvp(solve, _solve_jvp_a, lambda t, ans, a, b: solve(a, t))
defbatch(solve, solve_rule)


def _expand2(v):
    return reshape(v, shape_of(v) + (1, 1))


det = primitive(np.linalg.det, "det")


def _cofactors(a, ans):
    """``d det / dA``, the cofactor matrix ``adj(A)ᵀ``: for a real ``A`` the primitive :func:`cofactors`, finite at a
    singular matrix (where ``det(A) A⁻ᵀ`` has no inverse: numpy raised LinAlgError), and near one free of the
    catastrophic cancellation of that product's own derivative (a rank-2 3x3 matrix in floating point: second
    derivatives off by order one).  Its derivative, ``det``'s second, needs no SVD derivative, so the first and
    second derivatives of ``det`` are exact at any singular real matrix, whatever its rank; a third one at or near
    a matrix of rank ``n - 2`` or less goes wrong through the SVD's rule (``_cofactors``' limit).  A complex ``A`` keeps
    ``det(A) A⁻ᵀ``, and a singular one still raises: the complex SVD's rule, through its phases, gives wrong
    second derivatives here, and an error beats a silently wrong number (tests/rules/test_det_singular.py)."""
    if dtype_of(a).kind == "c":
        return multiply(_expand2(ans), _t(inv(a)))
    return cofactors(a)


defvjp(det, lambda g, ans, a: multiply(_expand2(g), _cofactors(a, ans)))
defjvp(det, lambda t, ans, a: sum(multiply(_cofactors(a, ans), t), axis=(-2, -1)))  # Jacobi: tr(adj(A) dA)
defbatch(det, whole(det))


def _trace_of_solve(a, t):
    """``tr(A^-1 dA)`` over the last two axes: one solve, no inverse."""
    return sum(diagonal(solve(a, t), 0, -2, -1), axis=-1)


def _slogdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign, logdet


slogdet = primitive(_slogdet, "slogdet")


def _slogdet_vjp(g, ans, a):
    """Both outputs move with ``tr(A^-1 dA)``: logdet by its real part, a complex sign by ``1j`` times its
    imaginary part (a real sign is constant).  So the cotangent of ``tr(A^-1 dA)`` is
    ``g_logdet + 1j * imag(g_sign * sign)``, and ``c * tr(A^-1 dA)`` pulls back to ``c * A^-T``."""
    g_sign, g_logdet = g
    c = None if isinstance(g_logdet, ZeroTangent) else _expand2(g_logdet)
    if dtype_of(a).kind == "c" and not isinstance(g_sign, ZeroTangent):
        turn = _expand2(multiply(imag(multiply(g_sign, ans[0])), 1j))
        c = turn if c is None else add(c, turn)
    return ZeroTangent() if c is None else multiply(c, _t(inv(a)))


defvjp(slogdet, _slogdet_vjp)


def _slogdet_jvp(t, ans, a):
    """``(d sign, d logdet) = (sign * 1j * Im tr, Re tr)`` with ``tr = tr(A^-1 dA)``; a real sign is constant."""
    tr = _trace_of_solve(a, t)
    if dtype_of(a).kind != "c":
        return ZeroTangent(), tr
    return multiply(ans[0], multiply(imag(tr), 1j)), real(tr)


defjvp(slogdet, _slogdet_jvp)
defbatch(slogdet, whole(slogdet))

cholesky = primitive(np.linalg.cholesky, "cholesky")


def _real_cholesky_only(a):
    if dtype_of(a).kind == "c":  # the rules here are for real symmetric input; a Hermitian one needs its own
        raise NotImplementedError(
            "autodiff.numpy.linalg.cholesky: the derivative at a complex (Hermitian) matrix is not supported; "
            "differentiate a real symmetric matrix, or split a Hermitian one into real blocks [[A, -B], [B, A]]"
        )


def _phi(L):
    """Murray's Phi as a mask: the lower triangle, the diagonal halved."""
    n = shape_of(L)[-1]
    return (np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(dtype_of(L))


def _cholesky_vjp(g, L, a):
    """Murray (2016): S = L^-T Phi(L^T G) L^-1, symmetrised; Phi keeps the lower triangle, half diagonal."""
    _real_cholesky_only(a)
    phi = _phi(L)
    p = multiply(matmul(_t(L), g), phi)
    y = solve(_t(L), p)
    s = _t(solve(_t(L), _t(y)))
    return multiply(add(s, _t(s)), 0.5)


defvjp(cholesky, _cholesky_vjp)


def _cholesky_jvp(t, L, a):
    """dL = L Phi(L^-1 S L^-T) for the symmetric part S of dA (the pullback's symmetrised gradient transposed)."""
    _real_cholesky_only(a)
    s = multiply(add(t, _t(t)), 0.5)
    x = solve(L, _t(solve(L, s)))  # L^-1 (L^-1 S)^T = L^-1 S L^-T, S symmetric
    return matmul(L, multiply(x, _phi(L)))


defjvp(cholesky, _cholesky_jvp)
defbatch(cholesky, whole(cholesky))
