"""``det``'s derivatives at and near singular matrices: the cofactor matrix, finite there, where ``det(A) A⁻ᵀ``
raised LinAlgError at a singular matrix and, near one, gave second derivatives off by order one without a word.

The oracle is the cofactor matrix written out from its minors (Leibniz's sum over permutations), and the
central differences of that polynomial: no LAPACK call, so the same numbers on every CPU.  PyTorch was the
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


SINGULAR = {
    "rank 1 of 2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "rank 2 of 3": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    "near rank 2": _near_singular(),
    "rank 1 of 3": np.outer([1.0, -2.0, 0.5], [3.0, 1.0, 2.0]),
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


def _derivative_of_cofactor_sum(a, h=1e-3):
    """``d/dA sum(cofactors(A))`` by central differences: the cofactors of an n x n matrix are polynomials of
    degree n - 1 <= 2 here, whose central differences are exact up to rounding."""
    out = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = h
        out[idx] = (_cofactors(a + e).sum() - _cofactors(a - e).sum()) / (2 * h)
    return out


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_gradient_and_its_derivative_at_a_singular_matrix_equal_the_cofactors(name):
    a = SINGULAR[name]
    g, h = _cofactors(a), _derivative_of_cofactor_sum(a)
    np.testing.assert_allclose(grad(anp.linalg.det)(a), g, atol=1e-12)
    np.testing.assert_allclose(grad(lambda x: anp.sum(grad(anp.linalg.det)(x)))(a), h, atol=1e-9)
    np.testing.assert_allclose(jvp(anp.linalg.det, a, np.ones_like(a))[1], g.sum(), atol=1e-12)
    np.testing.assert_allclose(hvp(anp.linalg.det, a, np.ones_like(a)), h, atol=1e-9)


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_at_a_singular_matrix_passes_gradcheck_to_second_order(name):
    """Orders 1 and 2, in both modes.  A third derivative there goes through the SVD's own second-order rule,
    which a zero singular value breaks (a limit ``_cofactors`` names)."""
    assert gradcheck(anp.linalg.det, SINGULAR[name], order=2)
    assert gradcheck(lambda x: jvp(anp.linalg.det, x, np.ones_like(x))[1], SINGULAR[name], order=1)


def test_det_of_the_zero_matrix_has_gradient_zero():
    """Rank 0 of 2: the cofactors vanish."""
    np.testing.assert_array_equal(grad(anp.linalg.det)(np.zeros((2, 2))), _cofactors(np.zeros((2, 2))))


def test_det_per_example_over_a_batch_with_singular_matrices_equals_a_loop():
    stack = np.stack([SINGULAR["rank 1 of 2"], np.array([[0.0, 1.0], [3.0, 2.0]]), np.zeros((2, 2))])
    per = vmap(grad(anp.linalg.det))(stack)
    np.testing.assert_allclose(per, np.stack([grad(anp.linalg.det)(a) for a in stack]), atol=1e-13)
    np.testing.assert_allclose(grad(lambda s: anp.sum(anp.linalg.det(s)))(stack), per, atol=1e-13)


def test_det_of_a_singular_complex_matrix_still_raises():
    """The complex SVD's rule gives wrong second derivatives here, so the complex rule keeps the inverse."""
    a = np.array([[1.0 + 1j, 2.0], [2.0 + 2j, 4.0]])
    with pytest.raises(np.linalg.LinAlgError):
        grad(lambda x: anp.real(anp.linalg.det(x)))(a)
