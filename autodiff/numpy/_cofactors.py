"""The cofactor matrix ``C(A) = adj(A)ᵀ``: ``det``'s gradient, and a primitive so that its own derivative (``det``'s
second) needs no derivative of the SVD it is computed through.

``C`` is a polynomial in ``A``'s entries, finite at a singular matrix, where ``det(A) A⁻ᵀ`` has no inverse.  For a
real ``A = U S Vᵀ`` it is ``σ U diag(p) Vᵀ`` with ``p_i = prod_{m != i} s_m`` and ``σ = det(U) det(Vᵀ) = ±1``.

Its derivative comes from ``C(X A Y) = C(X) C(A) C(Y)`` and ``C(Q) = det(Q) Q`` for an orthogonal ``Q``: with
``U``, ``V`` held fixed, ``C(A + E) = σ U C(S + M) Vᵀ`` exactly, ``M = Uᵀ E V``, and the derivative of ``C`` at
the diagonal ``S`` reads off Leibniz's sum (only the identity and the transpositions keep ``S``'s entries)::

    dC(A)[E] = σ U L(M) Vᵀ,   L(M)_ij = -M_ji P_ij (i != j),   L(M)_ii = sum_{k != i} M_kk P_ik,

with ``P_ij = prod_{m not in {i, j}} s_m``.  No ``1 / (s_i² - s_j²)`` anywhere, so the first and second
derivatives of ``det`` are exact at any singular real matrix, zero and repeated singular values included.
``dC`` is ``det``'s Hessian, a symmetric bilinear form, so the pullback is the same map: ``Ē = σ U L(Uᵀ G V) Vᵀ``.

Limit: the rules take ``U``, ``s``, ``Vᵀ`` from the differentiable ``svd``, so a third derivative of ``det`` goes
through the SVD's rule: exact away from singular matrices and near those of rank ``n - 1``, wrong near rank
``n - 2`` or less (two nearly zero singular values: their ``1 / (s_i² - s_j²)`` is huge), and refused
(NotImplementedError) wherever a singular value is exactly zero.

>>> import numpy as np
>>> cofactors(np.array([[1.0, 2.0], [3.0, 4.0]])).round(12)  # [[a22, -a21], [-a12, a11]]
array([[ 4., -3.],
       [-2.,  1.]])
"""

import numpy as np

from ..extend import defbatch, defjvp, defvjp, plain_value, primitive, value_of
from ._batch_helpers import differentiated, per_example, whole
from ._broadcast import dtype_of, shape_of
from ._decompositions import svd
from ._elementwise import add, multiply, negative, where
from ._linalg import diagonal, matmul
from ._reductions import cumprod, sum
from ._shape import concatenate, flip, reshape, swapaxes


def _t(a):
    return swapaxes(a, -1, -2)


def _row(v):
    """``(..., n)`` -> ``(..., 1, n)``."""
    return reshape(v, shape_of(v)[:-1] + (1,) + shape_of(v)[-1:])


def _pair_products(s):
    """``P_ij = prod_{m not in {i, j}} s_m`` over ``(..., n)``, ``P_ii = prod_{m != i} s_m``, in ``O(n²)`` memory.

    Row ``i`` of ``W`` is ``s`` with ``s_i = 1``; ``P_ij`` is that row's product without its ``j``-th entry, the
    product of the entries before ``j`` times that of those after it.  No division: exact with zeros among ``s``
    (a quotient ``prod(s) / (s_i s_j)`` would be 0/0 at two zeros), and where a product underflows, it is the
    true value that does."""
    n = shape_of(s)[-1]
    w = where(np.eye(n, dtype=bool), 1.0, _row(s))
    ones = np.ones(shape_of(w)[:-1] + (1,), dtype_of(s))
    before = concatenate([ones, cumprod(w[..., :-1], axis=-1)], axis=-1)
    after = concatenate([flip(cumprod(flip(w[..., 1:], -1), axis=-1), -1), ones], axis=-1)
    return multiply(before, after)


def _sign(u, vt):
    """``det(U) det(Vᵀ)``, ±1 per matrix: constant near ``A`` (the SVD's branch is), so read without derivatives."""
    return multiply(per_example(_det_of_each, u), per_example(_det_of_each, vt))


def _det_of_each(v):
    return np.linalg.det(v)[..., None, None]


def _cofactors_value(a):
    """``σ U diag(P_ii) Vᵀ``, stacks included."""
    u, s, vt = np.linalg.svd(a)
    p = _pair_products(s)
    return _sign(u, vt) * np.matmul(u * np.diagonal(p, 0, -2, -1)[..., None, :], vt)


cofactors = primitive(_cofactors_value, "cofactors")


def _transposed_scaled(m, p):
    """``L(M)``: ``-Mᵀ ∘ P`` off the diagonal, ``sum_{k != i} P_ik M_kk`` on it."""
    eye = np.eye(shape_of(p)[-1], dtype=bool)
    off = where(eye, 0.0, p)
    on = multiply(sum(multiply(off, _row(diagonal(m, 0, -2, -1))), axis=-1, keepdims=True), eye)
    return add(negative(multiply(_t(m), off)), on)


def _refuse_a_derivative_at_zeros(s):
    """The rules differentiated (``det``'s third derivative) at an exactly zero singular value: an error naming
    ``det``, where ``cumprod``'s rule (``P``'s products) would refuse the zero naming itself."""
    if differentiated(s) and np.any(plain_value(value_of(s)) == 0):  # in any example
        raise NotImplementedError(
            "autodiff.numpy.linalg.det: a third derivative at a matrix with an exactly zero singular value is "
            "not supported (the first and second derivatives are exact there); take it at a nonsingular matrix"
        )


def _derivative(a, x):
    """``σ U L(Uᵀ X V) Vᵀ``: the tangent for ``X = dA``; the map is self-adjoint, so the cotangent for ``X = G``."""
    u, s, vt = svd(a)
    _refuse_a_derivative_at_zeros(s)
    inner = _transposed_scaled(matmul(matmul(_t(u), x), _t(vt)), _pair_products(s))
    return multiply(_sign(u, vt), matmul(matmul(u, inner), vt))


defjvp(cofactors, lambda t, ans, a: _derivative(a, t))
defvjp(cofactors, lambda g, ans, a: _derivative(a, g))
defbatch(cofactors, whole(cofactors))
