"""``det``'s derivatives at and near singular matrices: the cofactor matrix, finite there, where ``det(A) A⁻ᵀ``
raised LinAlgError at a singular matrix and, near one, gave second derivatives off by order one without a word.

The oracle is the cofactor matrix written out from its minors (Leibniz's sum over permutations), and the
five-point central differences of that polynomial: no LAPACK call, so the same numbers on every CPU.  PyTorch was the
oracle here until issue 36: its second derivative of ``det`` at the rank-1 3x3 matrix is all-NaN on an AMD
EPYC (Zen 4) and finite on Intel, depending on the path its LU takes at an exactly singular matrix.
"""

import itertools

import numpy as np
import pytest

import autodiff.numpy as anp
from autodiff import grad, gradcheck, hvp, jvp, vmap


def _near_singular():
    """A 3x3 matrix whose third row is the first plus twice the second: rank 2, up to rounding."""
    a = np.random.default_rng(0).standard_normal((3, 3))
    a[2] = a[0] + 2 * a[1]
    return a


def _rank(r, n):
    """An ``n x n`` matrix of rank ``r``: a product of ``n x r`` and ``r x n`` random factors."""
    rng = np.random.default_rng(r + 10 * n)
    return rng.standard_normal((n, r)) @ rng.standard_normal((r, n))


SINGULAR = {
    "rank 1 of 2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "rank 2 of 3": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    "near rank 2": _near_singular(),
    "rank 1 of 3": np.outer([1.0, -2.0, 0.5], [3.0, 1.0, 2.0]),
    "rank 0 of 3": np.zeros((3, 3)),
    "rank 0 of 1": np.zeros((1, 1)),
    "rank 1 of 4": np.outer([1.0, -2.0, 0.5, 1.5], [3.0, 1.0, 2.0, -1.0]),
    "rank 2 of 4": _rank(2, 4),
}


def _leibniz_det(m):
    """``det(m)`` as the sum over permutations of signed products: exact arithmetic order, no pivoting."""
    n = len(m)
    total = 0.0
    for p in itertools.permutations(range(n)):
        inversions = sum(p[i] > p[j] for i in range(n) for j in range(i + 1, n))
        total += (-1) ** inversions * np.prod([m[i, p[i]] for i in range(n)])
    return total


def _cofactors(a):
    """``d det / dA``: ``(-1)^(i+j)`` times the minor without row ``i`` and column ``j``."""
    n = len(a)
    minor = lambda i, j: np.delete(np.delete(a, i, 0), j, 1)  # noqa: E731
    return np.array([[(-1) ** (i + j) * _leibniz_det(minor(i, j)) for j in range(n)] for i in range(n)])


def _derivative_of_cofactors(a, v, h=0.25):
    """``d/dt cofactors(A + t V)`` at 0 by five-point central differences: the cofactors of an n x n matrix are
    polynomials of degree n - 1 <= 3 here, whose five-point differences are exact up to rounding for any ``h``."""
    c = lambda t: _cofactors(a + t * v)  # noqa: E731
    return (8 * (c(h) - c(-h)) - (c(2 * h) - c(-2 * h))) / (12 * h)


def _direction(a):
    return np.random.default_rng(len(a)).standard_normal(a.shape)


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_gradient_and_its_derivative_at_a_singular_matrix_equal_the_cofactors(name):
    a = SINGULAR[name]
    v = _direction(a)
    g, h = _cofactors(a), _derivative_of_cofactors(a, v)
    np.testing.assert_allclose(grad(anp.linalg.det)(a), g, atol=1e-12)
    np.testing.assert_allclose(grad(lambda x: anp.sum(grad(anp.linalg.det)(x) * v))(a), h, atol=1e-9)
    np.testing.assert_allclose(jvp(anp.linalg.det, a, v)[1], np.sum(g * v), atol=1e-12)
    np.testing.assert_allclose(jvp(grad(anp.linalg.det), a, v)[1], h, atol=1e-9)
    for mode in ("reverse_over_forward", "forward_over_reverse"):
        np.testing.assert_allclose(hvp(anp.linalg.det, a, v, mode=mode), h, atol=1e-9)


def test_the_oracle_differences_are_those_of_the_polynomial():
    """The five-point differences of the cofactors, checked on the 2x2 case written out: ``C(A) = [[a22, -a21],
    [-a12, a11]]`` is linear, so its derivative along ``V`` is ``C(V)``."""
    a, v = SINGULAR["rank 1 of 2"], _direction(SINGULAR["rank 1 of 2"])
    written_out = np.array([[v[1, 1], -v[1, 0]], [-v[0, 1], v[0, 0]]])
    np.testing.assert_allclose(_derivative_of_cofactors(a, v), written_out, atol=1e-14)


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_at_a_singular_matrix_passes_gradcheck_to_second_order(name):
    """Orders 1 and 2, in both modes.  A third derivative there goes through the SVD's own second-order rule,
    which a zero singular value breaks (a limit ``_cofactors`` names)."""
    assert gradcheck(anp.linalg.det, SINGULAR[name], order=2)
    assert gradcheck(lambda x: jvp(anp.linalg.det, x, np.ones_like(x))[1], SINGULAR[name], order=1)


def test_det_of_the_zero_matrix_has_gradient_zero():
    """Rank 0 of 2: the cofactors vanish."""
    np.testing.assert_array_equal(grad(anp.linalg.det)(np.zeros((2, 2))), _cofactors(np.zeros((2, 2))))


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_det_at_a_random_matrix_passes_gradcheck_to_third_order(n):
    """Away from singular matrices the cofactors' rules go through the SVD's, so every order is exact."""
    a = np.random.default_rng(n).standard_normal((n, n))
    assert gradcheck(anp.linalg.det, a, order=2)
    assert gradcheck(lambda x: hvp(anp.linalg.det, x, np.ones_like(x)), a, order=1)


def test_det_per_example_over_a_batch_with_singular_matrices_equals_a_loop():
    stack = np.stack([SINGULAR["rank 1 of 2"], np.array([[0.0, 1.0], [3.0, 2.0]]), np.zeros((2, 2))])
    per = vmap(grad(anp.linalg.det))(stack)
    np.testing.assert_allclose(per, np.stack([grad(anp.linalg.det)(a) for a in stack]), atol=1e-13)
    np.testing.assert_allclose(grad(lambda s: anp.sum(anp.linalg.det(s)))(stack), per, atol=1e-13)


@pytest.mark.parametrize("name", ["rank 1 of 2", "rank 2 of 3", "near rank 2"])
def test_det_third_derivative_near_rank_n_minus_1_passes_gradcheck(name):
    """One singular value near zero: the SVD's rule, which the cofactors' rules go through, is exact there."""
    assert gradcheck(lambda x: hvp(anp.linalg.det, x, _direction(x)), SINGULAR[name], order=1)


def test_det_third_derivative_at_an_exactly_zero_singular_value_is_refused():
    """The limit ``_cofactors`` names: an error naming ``det``, not a NaN or a wrong number."""
    with pytest.raises(NotImplementedError, match="linalg.det: a third derivative"):
        gradcheck(lambda x: hvp(anp.linalg.det, x, _direction(x)), SINGULAR["rank 1 of 3"], order=1)


def test_det_second_derivatives_per_example_over_singular_matrices_of_every_rank():
    """Ranks 0, 1, 2 and 3 of 3 in one batch: ``vmap`` of the gradient, of ``hvp`` and of the gradient of the
    gradient, each against the oracle per example; and ``det`` of the whole stack, batched by numpy, too."""
    stack = np.stack([np.zeros((3, 3)), SINGULAR["rank 1 of 3"], SINGULAR["rank 2 of 3"], _rank(3, 3)])
    v = _direction(stack[0])
    g = np.stack([_cofactors(a) for a in stack])
    h = np.stack([_derivative_of_cofactors(a, v) for a in stack])
    np.testing.assert_allclose(vmap(grad(anp.linalg.det))(stack), g, atol=1e-12)
    np.testing.assert_allclose(vmap(lambda a: hvp(anp.linalg.det, a, v))(stack), h, atol=1e-9)
    np.testing.assert_allclose(vmap(grad(lambda a: anp.sum(grad(anp.linalg.det)(a) * v)))(stack), h, atol=1e-9)
    whole = grad(lambda s: anp.sum(grad(lambda t: anp.sum(anp.linalg.det(t)))(s) * v))(stack)
    np.testing.assert_allclose(whole, h, atol=1e-9)


def test_det_of_a_singular_complex_matrix_still_raises():
    """The complex SVD's rule gives wrong second derivatives here, so the complex rule keeps the inverse."""
    a = np.array([[1.0 + 1j, 2.0], [2.0 + 2j, 4.0]])
    with pytest.raises(np.linalg.LinAlgError):
        grad(lambda x: anp.real(anp.linalg.det(x)))(a)
