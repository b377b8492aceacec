"""Decompositions: svd (and its singular values), eigh, eig, pinv, and the matrix norms built on svd.

Each pullback is written in differentiable ops, so second derivatives work
wherever the first derivative is defined: distinct singular values (and
nonzero ones when the matrix is not square), distinct eigenvalues, a
constant rank for ``pinv``.

Complex inputs follow the engine's (JAX's) convention: a cotangent is the
conjugate of the "adjoint" gradient that PyTorch returns.  The formulas below
are written as adjoints with conjugate transposes (as in the papers), and
:func:`_in_convention` conjugates before and after for complex inputs.
Batched inputs (``(..., m, n)``) work throughout.
"""

import numpy as np

from ..extend import ZeroTangent, defbatch, defjvp, defvjp, plain_value, primitive, unthunk, value_of
from ._batch_helpers import whole
from ._broadcast import cast, dtype_of, shape_of
from ._complex import conj, real
from ._elementwise import absolute, add, divide, multiply, negative, subtract
from ._joining import concatenate
from ._linalg import diagonal, matmul
from ._reductions import max, min, sum
from ._shape import moveaxis, reshape, swapaxes


def _t(a):
    return swapaxes(a, -1, -2)


def _h(a):
    """The conjugate transpose."""
    return _t(conj(a)) if dtype_of(a).kind == "c" else _t(a)


def _is_zero(c):
    return c is None or isinstance(c, ZeroTangent)


def _eye(n, like):
    return np.eye(n, dtype=dtype_of(like))


def _diag_embed(v):
    """``(..., k)`` -> ``(..., k, k)`` with ``v`` on the diagonal."""
    k = shape_of(v)[-1]
    return multiply(_as_row(v), np.eye(k, dtype=dtype_of(v)))


def _as_row(v):
    """``(..., k)`` -> ``(..., 1, k)``: multiplying by it scales columns."""
    return reshape(v, shape_of(v)[:-1] + (1, shape_of(v)[-1]))


def _as_column(v):
    """``(..., k)`` -> ``(..., k, 1)``: multiplying by it scales rows."""
    return reshape(v, shape_of(v) + (1,))


def _gaps(w):
    """``E[..., i, j] = w_j - w_i`` off the diagonal and 1 on it (so dividing by it is safe there)."""
    k = shape_of(w)[-1]
    return add(subtract(_as_row(w), _as_column(w)), np.eye(k, dtype=dtype_of(w)))


def _in_convention(a, adjoint, *cotangents):
    """The engine's cotangent from an adjoint written the PyTorch way: ``conj(adjoint(conj(g)))``.

    The result is cast to ``a``'s dtype: the real part for a real input whose
    decomposition is complex (``eig``).
    """
    complex_in = dtype_of(a).kind == "c" or any(dtype_of(c).kind == "c" for c in cotangents if not _is_zero(c))
    if not complex_in:
        return adjoint(*cotangents)
    ct = conj(adjoint(*[c if _is_zero(c) else conj(c) for c in cotangents]))
    return ct if dtype_of(ct) == dtype_of(a) else cast(ct, dtype_of(a))


# ---- svd ------------------------------------------------------------------------------------------------


def _svd_value(a, full_matrices=True):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


svd_p = primitive(_svd_value, "svd")


def _svd_vjp(g, ans, a, full_matrices=True):
    gu, gs, gvh = (unthunk(c) for c in g)
    u, s, vh = ans[0], ans[1], ans[2]
    m, n = shape_of(a)[-2:]
    if full_matrices and m != n:
        k = shape_of(s)[-1]
        gu, gvh = _thin_cotangent(gu, k, -1), _thin_cotangent(gvh, k, -2)
        u, vh = u[..., :, :k], vh[..., :k, :]
    return _in_convention(a, lambda gu, gs, gvh: _svd_adjoint(gu, gs, gvh, u, s, vh, m, n), gu, gs, gvh)


def _thin_cotangent(c, k, axis):
    """The cotangent of the first ``k`` singular vectors; the others are not unique, so nothing may depend on them."""
    if _is_zero(c):
        return c
    extra = value_of(c)[..., :, k:] if axis == -1 else value_of(c)[..., k:, :]
    if np.any(plain_value(extra) != 0):  # in any example
        raise NotImplementedError(
            "autodiff.numpy.linalg.svd: with full_matrices=True the singular vectors beyond min(m, n) are not "
            "unique, so a function of them has no derivative; use full_matrices=False (or only the first "
            "min(m, n) columns of u and rows of vh)"
        )
    return c[..., :, :k] if axis == -1 else c[..., :k, :]


def _svd_adjoint(gu, gs, gvh, u, s, vh, m, n):
    """Townsend (2016), thin case: u [J S / E + S K / E + diag(gs)] vh plus the parts outside u's and v's span."""
    inner = _svd_inner(gu, gs, gvh, u, s, vh)
    ga = matmul(matmul(u, inner), vh) if inner is not None else None
    if m > shape_of(s)[-1] and not _is_zero(gu):  # the component of gu orthogonal to u's columns
        out = matmul(divide(subtract(gu, matmul(u, matmul(_h(u), gu))), _as_row(s)), vh)
        ga = out if ga is None else add(ga, out)
    if n > shape_of(s)[-1] and not _is_zero(gvh):
        out = matmul(u, divide(subtract(gvh, matmul(matmul(gvh, _h(vh)), vh)), _as_column(s)))
        ga = out if ga is None else add(ga, out)
    return ga if ga is not None else ZeroTangent()


def _svd_inner(gu, gs, gvh, u, s, vh):
    terms = [] if _is_zero(gs) else [_diag_embed(cast(gs, dtype_of(u)) if dtype_of(u) != dtype_of(gs) else gs)]
    if not (_is_zero(gu) and _is_zero(gvh)):
        gaps = _gaps(multiply(s, s))
        if not _is_zero(gu):
            j = _skew(matmul(_h(u), gu))
            terms.append(divide(multiply(j, _as_row(s)), gaps))
            if dtype_of(u).kind == "c":  # the phase of each pair (u_i, v_i): only the part that u fixes
                terms.append(_diag_embed(divide(multiply(_imag_part(diagonal(j, 0, -2, -1)), 0.5j), s)))
        if not _is_zero(gvh):
            kk = _skew(matmul(vh, _h(gvh)))
            terms.append(divide(multiply(_as_column(s), kk), gaps))
    if not terms:
        return None
    total = terms[0]
    for term in terms[1:]:
        total = add(total, term)
    return total


def _skew(x):
    return subtract(x, _h(x))


def _imag_part(z):
    """Im(z) for the diagonal of a skew-Hermitian matrix (purely imaginary): ``-i z`` taken real."""
    return real(multiply(z, -1j))


def _svdvals_value(a):
    return np.linalg.svd(a, compute_uv=False)


svdvals = primitive(_svdvals_value, "svdvals")


def _svdvals_vjp(g, ans, a):
    u, _, vh = svd_p(a, full_matrices=False)
    return _in_convention(a, lambda g: matmul(multiply(u, _as_row(cast(g, dtype_of(u)))), vh), g)


defvjp(svd_p, _svd_vjp)
defvjp(svdvals, _svdvals_vjp)


def _svd_jvp(t, ans, a, full_matrices=True):
    """With dP = U^H dA V on the thin factors: ds = Re diag(dP), and the vectors' tangents below."""
    u, s, vh = ans[0], ans[1], ans[2]
    k = shape_of(s)[-1]
    uk = u[..., :, :k] if shape_of(u)[-1] > k else u  # full_matrices' extra vectors are completed at the end
    v = _h(vh[..., :k, :] if shape_of(vh)[-2] > k else vh)
    p = matmul(matmul(_h(uk), t), v)
    du, dv = _thin_vector_tangents(t, p, uk, s, v)
    if uk is not u:
        du = _completed(du, u, k)
    if shape_of(vh)[-2] > k:
        dv = _completed(dv, _h(vh), k)
    ds = diagonal(p, 0, -2, -1)
    return du, real(ds) if dtype_of(ds).kind == "c" else ds, _h(dv)


def _thin_vector_tangents(t, p, u, s, v):
    """dU = U (F o (dP S + S dP^H)) + (I - U U^H) dA V / S, and dV the same with dA^H, U and V swapped;
    F_ij = 1 / (s_j^2 - s_i^2) off the diagonal.  A complex U also turns by i Im diag(dP) / S (the pair's
    phase, which U carries as in the pullback)."""
    k = shape_of(s)[-1]
    f = divide(1.0 - np.eye(k, dtype=dtype_of(s)), _gaps(multiply(s, s)))
    f = f if dtype_of(f) == dtype_of(p) else cast(f, dtype_of(p))
    du = matmul(u, multiply(f, _hermitian_part(multiply(p, _as_row(s)))))
    dv = matmul(v, multiply(f, _hermitian_part(multiply(_as_column(s), p))))
    if dtype_of(p).kind == "c":
        du = add(du, matmul(u, _diag_embed(divide(multiply(_imag_part(diagonal(p, 0, -2, -1)), 1j), s))))
    if shape_of(u)[-2] > k:
        du = add(du, divide(_outside(matmul(t, v), u), _as_row(s)))
    if shape_of(v)[-2] > k:
        dv = add(dv, divide(_outside(matmul(_h(t), u), v), _as_row(s)))
    return du, dv


def _hermitian_part(x):
    return add(x, _h(x))


def _outside(x, q):
    """The part of ``x``'s columns orthogonal to ``q``'s (orthonormal) columns."""
    return subtract(x, matmul(q, matmul(_h(q), x)))


def _completed(dq, q, k):
    """The tangent of a full orthonormal ``q`` whose first ``k`` columns move by ``dq``: the others (not unique)
    move by ``-q_k dq^H q_rest``, the least change that keeps ``q`` orthonormal to first order."""
    rest = q[..., :, k:]
    return concatenate([dq, negative(matmul(q[..., :, :k], matmul(_h(dq), rest)))], axis=-1)


def _svdvals_jvp(t, ans, a):
    """ds_i = Re(u_i^H dA v_i), with the thin singular vectors."""
    u, _, vh = svd_p(a, full_matrices=False)
    ds = sum(multiply(conj(u), matmul(t, _h(vh))), axis=-2)
    return real(ds) if dtype_of(ds).kind == "c" else ds


defjvp(svd_p, _svd_jvp)
defbatch(svd_p, whole(svd_p))
defjvp(svdvals, _svdvals_jvp)
defbatch(svdvals, whole(svdvals))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``numpy.linalg.svd``, differentiable: ``(u, s, vh)``, or ``s`` alone with ``compute_uv=False``.

    Singular values are differentiable wherever they are distinct (and, for
    the singular vectors of a non-square matrix, nonzero).  A function of
    ``u`` and ``vh`` must not depend on each pair's sign (real) or phase
    (complex), the gauge the decomposition leaves free.  With
    ``full_matrices=True`` and ``m != n`` the extra vectors are not unique:
    differentiating through them raises.  ``hermitian`` is accepted and
    ignored (the general algorithm gives a valid decomposition).

    >>> import numpy as np
    >>> import autodiff
    >>> a = np.array([[3.0, 0.0], [0.0, 1.0]])
    >>> autodiff.grad(lambda a: svd(a, compute_uv=False)[0])(a)
    array([[1., 0.],
           [0., 0.]])
    """
    if not compute_uv:
        return svdvals(a)
    return svd_p(a, full_matrices=full_matrices)


# ---- eigh -----------------------------------------------------------------------------------------------


def _eigh_value(a, UPLO="L"):
    w, v = np.linalg.eigh(a, UPLO)
    return w, v


eigh_p = primitive(_eigh_value, "eigh")


def _eigh_vjp(g, ans, a, UPLO="L"):
    gw, gv = (unthunk(c) for c in g)
    w, v = ans[0], ans[1]
    if dtype_of(a).kind == "c":
        return _in_convention(a, lambda gw, gv: _eigh_hermitian_adjoint(gw, gv, w, v, UPLO), gw, gv)
    inner = None if _is_zero(gw) else _diag_embed(gw)
    if not _is_zero(gv):  # dV = V (F o V^T dA V), F_ij = 1 / (w_j - w_i) off the diagonal
        off = 1.0 - np.eye(shape_of(w)[-1], dtype=dtype_of(w))
        term = divide(multiply(matmul(_t(v), gv), off), _gaps(w))
        inner = term if inner is None else add(inner, term)
    if inner is None:
        return ZeroTangent()
    return _read_triangle(matmul(matmul(v, inner), _t(v)), UPLO)


def _read_triangle(x, uplo):
    """eigh reads one triangle of ``a`` as a symmetric matrix: the cotangent of each entry it reads."""
    n = shape_of(x)[-1]
    strict = (np.tril if uplo.upper() == "L" else np.triu)(np.ones((n, n)), -1 if uplo.upper() == "L" else 1)
    return add(multiply(add(x, _t(x)), strict.astype(dtype_of(x))), multiply(x, np.eye(n, dtype=dtype_of(x))))


def _eigh_hermitian_adjoint(gw, gv, w, v, uplo):
    """V (diag(gw) + F o V^H gV) V^H, read back onto ``uplo``'s triangle.  F's zero diagonal drops
    Im diag(V^H gV): the phase of each column, which the gauge diag(V^H dV) = 0 fixes (as the JVP does)."""
    inner = None if _is_zero(gw) else _diag_embed(gw)
    if not _is_zero(gv):
        off = 1.0 - np.eye(shape_of(w)[-1], dtype=dtype_of(w))
        term = divide(multiply(matmul(_h(v), gv), off), _gaps(w))
        inner = term if inner is None else add(inner, term)
    if inner is None:
        return ZeroTangent()
    return _read_hermitian_triangle(matmul(matmul(v, inner), _h(v)), uplo)


def _read_hermitian_triangle(x, uplo):
    """The adjoint of :func:`_hermitian_from_triangle`: a strict entry feeds ``x_ij`` and conj of ``x_ji``,
    a diagonal entry only its real part (LAPACK ignores the imaginary part there)."""
    n = shape_of(x)[-1]
    strict = _strict_triangle(n, uplo).astype(dtype_of(x))
    return add(multiply(add(x, _h(x)), strict), _diag_embed(real(diagonal(x, 0, -2, -1))))


def _strict_triangle(n, uplo):
    lower = uplo.upper() == "L"
    return (np.tril if lower else np.triu)(np.ones((n, n)), -1 if lower else 1)


defvjp(eigh_p, _eigh_vjp)


def _eigh_jvp(t, ans, a, UPLO="L"):
    """dw = diag(V^T dA V), dV = V (F o V^T dA V), F_ij = 1 / (w_j - w_i) off the diagonal; dA is the
    symmetric matrix that ``UPLO``'s triangle of the tangent stands for."""
    w, v = ans[0], ans[1]
    if dtype_of(a).kind == "c":
        return _eigh_hermitian_jvp(t, w, v, UPLO)
    p = matmul(matmul(_t(v), _symmetric_from_triangle(t, UPLO)), v)
    f = divide(1.0 - np.eye(shape_of(w)[-1], dtype=dtype_of(w)), _gaps(w))
    return diagonal(p, 0, -2, -1), matmul(v, multiply(f, p))


def _symmetric_from_triangle(x, uplo):
    n = shape_of(x)[-1]
    strict = (np.tril if uplo.upper() == "L" else np.triu)(np.ones((n, n)), -1 if uplo.upper() == "L" else 1)
    part = multiply(x, (strict + np.eye(n)).astype(dtype_of(x)))
    return subtract(add(part, _t(part)), multiply(x, np.eye(n, dtype=dtype_of(x))))


def _eigh_hermitian_jvp(t, w, v, uplo):
    """dw = Re diag(P), dV = V (F o P) with P = V^H dA V; F's zero diagonal is the gauge diag(V^H dV) = 0."""
    p = matmul(matmul(_h(v), _hermitian_from_triangle(t, uplo)), v)
    f = divide(1.0 - np.eye(shape_of(w)[-1], dtype=dtype_of(w)), _gaps(w))
    return real(diagonal(p, 0, -2, -1)), matmul(v, multiply(f, p))


def _hermitian_from_triangle(x, uplo):
    """The Hermitian matrix LAPACK reads from ``uplo``'s triangle: the strict part, its conjugate mirrored,
    and the real part of the diagonal."""
    part = multiply(x, _strict_triangle(shape_of(x)[-1], uplo).astype(dtype_of(x)))
    return add(add(part, _h(part)), _diag_embed(real(diagonal(x, 0, -2, -1))))


defjvp(eigh_p, _eigh_jvp)
defbatch(eigh_p, whole(eigh_p))


def eigh(a, UPLO="L"):
    """``numpy.linalg.eigh`` of a real symmetric or complex Hermitian matrix, differentiable: ``(w, v)``,
    ascending real ``w``.

    Like numpy it reads only the ``UPLO`` triangle (for complex input, the
    conjugate mirrored and the diagonal's real part), so the gradient lives on
    that triangle (the strict part collects both mirrored entries).  The
    eigenvectors are differentiable where the eigenvalues are distinct; a
    function of ``v`` must not depend on each column's sign (real) or phase
    (complex: ``abs(v)``, ``v * conj(v)``, ``v @ diag(f(w)) @ v^H`` are fine).

    >>> import numpy as np
    >>> import autodiff
    >>> autodiff.grad(lambda a: eigh(a)[0][-1])(np.array([[2.0, 1.0], [1.0, 2.0]]))
    array([[0.5, 0. ],
           [1. , 0.5]])
    >>> np.round(autodiff.grad(lambda a: eigh(a)[0][-1])(np.array([[2.0, 1j], [-1j, 2.0]]))[1, 0], 12)
    np.complex128(1j)
    """
    if str(UPLO).upper() not in ("L", "U"):
        raise ValueError(f"autodiff.numpy.linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return eigh_p(a, UPLO=UPLO)


# ---- eig ------------------------------------------------------------------------------------------------


def _eig_value(a):
    w, v = np.linalg.eig(a)
    return w, v


eig_p = primitive(_eig_value, "eig")


def _eig_vjp(g, ans, a):
    gw, gv = (unthunk(c) for c in g)
    w, v = ans[0], ans[1]
    return _in_convention(a, lambda gw, gv: _eig_adjoint(gw, gv, w, v), gw, gv)


def _eig_adjoint(gw, gv, w, v):
    """V^-H (diag(gw) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)) V^H (the unit-norm columns fix the scale)."""
    from .linalg import solve

    inner = None if _is_zero(gw) else _diag_embed(gw)
    if not _is_zero(gv):
        vhgv = matmul(_h(v), gv)
        unit = matmul(matmul(_h(v), v), _diag_embed(real(diagonal(vhgv, 0, -2, -1))))
        off = 1.0 - np.eye(shape_of(w)[-1])
        term = divide(multiply(subtract(vhgv, unit), off), conj(_gaps(w)) if dtype_of(w).kind == "c" else _gaps(w))
        inner = term if inner is None else add(inner, term)
    if inner is None:
        return ZeroTangent()
    return solve(_h(v), matmul(inner, _h(v)))


defvjp(eig_p, _eig_vjp)


def _eig_jvp(t, ans, a):
    """With dP = V^-1 dA V: dw = diag(dP), dV = V (F o dP) less V Re diag(V^H V (F o dP)) (unit-norm
    columns); F_ij = 1 / (w_j - w_i) off the diagonal."""
    from .linalg import solve

    w, v = ans[0], ans[1]
    p = solve(v, matmul(t, v))
    f = divide(1.0 - np.eye(shape_of(w)[-1], dtype=dtype_of(w)), _gaps(w))
    dv = matmul(v, multiply(f, p))
    unit = real(sum(multiply(conj(v), dv), axis=-2)) if dtype_of(v).kind == "c" else sum(multiply(v, dv), axis=-2)
    return diagonal(p, 0, -2, -1), subtract(dv, multiply(v, _as_row(unit)))


defjvp(eig_p, _eig_jvp)
defbatch(eig_p, whole(eig_p))


def eig(a):
    """``numpy.linalg.eig``, differentiable: ``(w, v)`` with unit-norm eigenvector columns.

    Valid when the function of ``(w, v)`` is real-valued and does not depend
    on each eigenvector's phase (``abs(v)``, ``v * conj(v)``, sums over ``w``
    are fine; ``v`` itself is not), and the eigenvalues are distinct.  That is
    the user's contract: the pullback cannot check it.  As in numpy, ``w`` and
    ``v`` are complex unless every eigenvalue of a real input is real.

    >>> import numpy as np
    >>> import autodiff
    >>> import autodiff.numpy as anp
    >>> autodiff.grad(lambda a: anp.sum(anp.real(eig(a)[0] ** 2)))(np.array([[1.0, 2.0], [0.0, 3.0]]))
    array([[2., 0.],
           [4., 6.]])
    """
    return eig_p(a)


# ---- pinv -----------------------------------------------------------------------------------------------


def _pinv_value(a, rcond=None, hermitian=False, rtol=None):
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian, rtol=rtol)


pinv_p = primitive(_pinv_value, "pinv")


def _pinv_adjoint(g, a, x):
    """Golub & Pereyra (1973), dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X, transposed."""
    gh = _h(g)
    first = matmul(matmul(_h(x), g), _h(x))
    gxx = matmul(gh, matmul(x, _h(x)))  # G^H X X^H
    second = subtract(gxx, matmul(matmul(a, x), gxx))  # (I - A X) G^H X X^H
    xxg = matmul(matmul(_h(x), x), gh)  # X^H X G^H
    third = subtract(xxg, matmul(xxg, matmul(x, a)))  # X^H X G^H (I - X A)
    return add(subtract(second, first), third)


def _pinv_vjp(g, ans, a, rcond=None, hermitian=False, rtol=None):
    return _in_convention(a, lambda g: _pinv_adjoint(g, a, ans), g)


defvjp(pinv_p, _pinv_vjp)


def _pinv_jvp(t, ans, a, rcond=None, hermitian=False, rtol=None):
    """Golub & Pereyra (1973): dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X."""
    x, th = ans, _h(t)
    first = matmul(matmul(x, t), x)
    xxt = matmul(matmul(x, _h(x)), th)  # X X^H dA^H
    second = subtract(xxt, matmul(xxt, matmul(a, x)))
    txx = matmul(th, matmul(_h(x), x))  # dA^H X^H X
    third = subtract(txx, matmul(matmul(x, a), txx))
    return add(subtract(second, first), third)


defjvp(pinv_p, _pinv_jvp)
defbatch(pinv_p, whole(pinv_p))


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """``numpy.linalg.pinv``, differentiable where the rank is locally constant (no singular value near the cutoff).

    >>> import numpy as np
    >>> import autodiff
    >>> autodiff.grad(lambda a: pinv(a)[0, 0])(np.array([[2.0, 0.0], [0.0, 4.0]]))
    array([[-0.25,  0.  ],
           [ 0.  ,  0.  ]])
    """
    return pinv_p(a, rcond=rcond, hermitian=hermitian, rtol=rtol)


# ---- matrix norms on svd --------------------------------------------------------------------------------

_MATRIX_NORMS = {"nuc": sum, 2: max, -2: min}  # reductions of the singular values


def matrix_norm(x, ord="fro", axis=(-2, -1), keepdims=False):
    """Matrix norms over ``axis``: ``'fro'``, nuclear (``'nuc'``), largest (``2``) or smallest (``-2``) singular value.

    The defaults follow ``numpy.linalg.matrix_norm`` (which this also serves
    when called on a traced value).  ``'fro'`` is ``linalg.norm``'s; the others
    reduce :func:`svd`'s singular values, so they are differentiable where the
    extreme singular value is unique (``2``, ``-2``) or all are nonzero (``'nuc'``).

    >>> import numpy as np
    >>> float(matrix_norm(np.array([[3.0, 0.0], [0.0, -4.0]]), "nuc"))
    7.0
    """
    if ord == "fro":
        from .linalg import norm

        return norm(x, "fro", axis=tuple(axis), keepdims=keepdims)
    reduce = _MATRIX_NORMS.get(ord)
    if reduce is None:
        raise NotImplementedError(
            f"autodiff.numpy.linalg.matrix_norm: ord={ord!r} is not supported; use 'fro', 'nuc', 2 or -2, or "
            "write it from differentiable ops (ord=1 is anp.max(anp.sum(anp.abs(x), axis=-2), axis=-1))"
        )
    ndim = len(shape_of(x))
    rows, cols = (axis[0] % ndim, axis[1] % ndim)
    # |s|, not s: a zero singular value's vectors are LAPACK's arbitrary choice, and abs'(0) = 0 leaves them
    # out, so the gradient is the least-norm subgradient (0 at the zero matrix, as every norm's; design.md 11)
    value = reduce(absolute(svdvals(moveaxis(x, (rows, cols), (-2, -1)))), axis=-1)
    if keepdims:
        kept = tuple(1 if i in (rows, cols) else n for i, n in enumerate(shape_of(x)))
        value = reshape(value, kept)
    return value
