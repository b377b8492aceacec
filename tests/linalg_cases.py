"""Domains and cases for the op table's issue-13 rows: construction, decompositions, einsum forms.

A decomposition's derivative exists only where its values are distinct, so
the domains put the generated matrix near a fixed diagonal with well-spread
entries (at least 1.5 apart, none below 1) and let the draws move it by a
little (the spectral norm of ``0.05 * x`` stays far below the gaps).
The functions of singular and eigen vectors are gauge invariant: squares of
entries, and products that rebuild a matrix.
"""

import hypothesis.strategies as st
import numpy as np

import autodiff.numpy as anp


def _spread_diagonal(m, n):
    k = min(m, n)
    d = np.zeros((m, n))
    d[range(k), range(k)] = 1.0 + 1.5 * np.arange(k)[::-1]
    return d


def separated(x):
    """Near a diagonal of distinct values >= 1: distinct singular values, and eigenvalues (real)."""
    return 0.05 * x + _spread_diagonal(*x.shape[-2:])


def complex_pair(x):
    """A 3x3 near one with eigenvalues 1 +- 2i and 4: eig comes out complex."""
    base = np.array([[1.0, 2.0, 0.0], [-2.0, 1.0, 0.0], [0.0, 0.0, 4.0]])
    return 0.05 * x + base


def _weights(shape, phase, like):
    """Fixed weights in ``like``'s dtype (float64 constants would widen a float32 result)."""
    return np.cos(np.arange(int(np.prod(shape))).reshape(shape) + phase).astype(anp.result_type(like))


def svd_invariants(a, full_matrices=False):
    """A gauge-invariant scalar function of all three factors."""
    u, s, vh = anp.linalg.svd(a, full_matrices=full_matrices)
    k = np.shape(s)[-1]
    rebuilt = anp.matmul(u[..., :, :k] * anp.expand_dims(s, -2) ** 2, vh[..., :k, :])
    squares = anp.sum(u * u * _weights(np.shape(u)[-2:], 0.0, a))
    squares = squares + anp.sum(vh * vh * _weights(np.shape(vh)[-2:], 1.0, a))
    return squares + anp.sum(s ** 3) + anp.sum(rebuilt * _weights(np.shape(a)[-2:], 2.0, a))


def svd_full_tall(a):
    """full_matrices=True on a tall matrix, using only the unique first columns of u."""
    u, s, vh = anp.linalg.svd(a, full_matrices=True)
    k = np.shape(s)[-1]
    return anp.sum(u[..., :, :k] ** 2 * _weights((np.shape(a)[-2], k), 0.5, a)) + anp.sum(s * vh[..., 0, :] ** 2)


def eigh_invariants(a, uplo="L"):
    """Real, and invariant under each column's sign (real input) or phase (complex): |v|^2 and V f(w) V^H."""
    w, v = anp.linalg.eigh(a, UPLO=uplo)
    n = np.shape(a)[-1]
    rebuilt = anp.matmul(v * anp.expand_dims(anp.exp(w * 0.3), -2), anp.conj(anp.swapaxes(v, -1, -2)))
    squares = anp.sum(anp.real(v * anp.conj(v)) * _weights((n, n), 0.0, w))
    return anp.sum(w ** 2) + squares + anp.sum(anp.real(rebuilt) * _weights((n, n), 1.0, w))


def eig_invariants(a):
    """Real and phase invariant: |v|^2 entries and the real part of a symmetric function of w."""
    w, v = anp.linalg.eig(a)
    n = np.shape(a)[-1]
    return anp.sum(anp.real(w * w)) + anp.sum(anp.real(v * anp.conj(v)) * _weights((n, n), 0.0, a))


rectangular = st.sampled_from([((3, 3),), ((4, 2),), ((2, 4),), ((2, 3, 2),), ((1, 1),)])
square = st.sampled_from([((3, 3),), ((2, 2),), ((2, 3, 3),), ((1, 1),)])
tall = st.sampled_from([((4, 2),), ((3, 1),), ((2, 3, 2),)])


def array_mixed(x, y):
    """Traced scalars (entries of x, and y), traced arrays and Python floats in one nested list."""
    return anp.array([[x[0], y * 2.0, 3.0], (x[1] * y, 1.0, y)])


def array_of_arrays(x, y):
    return anp.asarray((x, y * 2.0, x * y))


def array_rows(x, y):
    """A traced row beside a row built of traced scalars and a constant."""
    return anp.array([x, [y[0], 2.0, y[1] * x[0]]])


def reductions_of_lists(x, y):
    return (anp.mean([x, y, 3.0]) + anp.std([x * 2.0, y, 1.0]) + anp.var((x, y * y))
            + anp.linalg.norm([x, y, 2.0]))


EINSUM_FORMS = [
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("lli", [(2, 2, 3)]), ("iij,jk->ik", [(2, 2, 3), (3, 2)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]), ("...ij,...jk", [(1, 2, 3), (2, 3, 2)]), ("i...->...", [(2, 3)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]), ("bii,bj->bij", [(2, 3, 3), (2, 2)]), ("ij,jj->ij", [(2, 3), (3, 3)]),
]


@st.composite
def einsum_form_case(draw):
    subscripts, shapes = draw(st.sampled_from(EINSUM_FORMS))
    return tuple(shapes), {"subscripts": subscripts}


def einsum_sublists(x, y):
    return anp.einsum(x, [0, 1], y, [1, Ellipsis], [Ellipsis, 0])
