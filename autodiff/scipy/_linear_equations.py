"""Two of scipy.linalg's equation solvers: ``solve_sylvester`` (a primitive) and ``solve_banded`` (a composition).

``X = solve_sylvester(A, B, Q)`` solves ``A X + X B = Q``.  Differentiating it, ``A dX + dX B = dQ - dA X - X dB``:
the pushforward is one more Sylvester solve, and the pullback solves the adjoint equation
``A^T Y + Y B^T = G``, giving ``Q: Y``, ``A: -Y X^T``, ``B: -X^T Y``.  Both call the primitive itself, so every
order works in both modes.

``solve_banded((l, u), ab, b)`` spreads the band ``ab`` (scipy's layout: ``A[i, j] = ab[u + i - j, j]``) into
the full matrix with one gather and solves with ``autodiff.numpy.linalg.solve``: differentiable in ``ab`` and
``b`` to every order, at the cost of a dense solve (``O(n^3)``, not the banded ``O(n (l + u)^2)``).
"""

import numpy as np
import scipy.linalg as sl

from ..extend import batch_loop, defbatch, defjvp, defvjp, primitive
from ..numpy import linalg, matmul, negative, swapaxes, where
from ..numpy._broadcast import shape_of
from ._real import refuse_complex

__all__ = ["solve_sylvester", "solve_banded"]


def _sylvester(a, b, q):
    return sl.solve_sylvester(a, b, q)


_sylvester_p = primitive(_sylvester, "solve_sylvester")


def _adjoint(g, a, b):
    """``Y`` with ``A^T Y + Y B^T = G``."""
    return _sylvester_p(swapaxes(a, -1, -2), swapaxes(b, -1, -2), g)


defvjp(
    _sylvester_p,
    lambda g, x, a, b, q: negative(matmul(_adjoint(g, a, b), swapaxes(x, -1, -2))),
    lambda g, x, a, b, q: negative(matmul(swapaxes(x, -1, -2), _adjoint(g, a, b))),
    lambda g, x, a, b, q: _adjoint(g, a, b),
)
defjvp(
    _sylvester_p,
    lambda t, x, a, b, q: _sylvester_p(a, b, negative(matmul(t, x))),
    lambda t, x, a, b, q: _sylvester_p(a, b, negative(matmul(x, t))),
    lambda t, x, a, b, q: _sylvester_p(a, b, t),
)
defbatch(_sylvester_p, lambda level, args, bdims, kwargs: batch_loop(_sylvester_p, level, args, bdims, kwargs))


def solve_sylvester(a, b, q):
    """``X`` with ``a X + X b = q`` (scipy's Bartels-Stewart), differentiable in ``a``, ``b`` and ``q``.

    >>> import numpy as np
    >>> import autodiff
    >>> a, b, q = 2.0 * np.eye(2), np.eye(2), np.ones((2, 2))
    >>> solve_sylvester(a, b, q)  # (2 + 1) X = q
    array([[0.33333333, 0.33333333],
           [0.33333333, 0.33333333]])
    >>> float(autodiff.grad(lambda s: solve_sylvester(s * a, b, q)[0, 0])(1.0))  # d/ds 1 / (2 s + 1) at s = 1
    -0.2222222222
    """
    refuse_complex("autodiff.scipy.linalg.solve_sylvester", a, b, q)
    return _sylvester_p(a, b, q)


def _band_indices(l_and_u, n):
    """``(rows, columns, inside)``: where each entry of the ``n x n`` matrix sits in the band array."""
    lower, upper = l_and_u
    i, j = np.indices((n, n))
    rows = upper + i - j
    inside = (rows >= 0) & (rows <= lower + upper)
    return np.where(inside, rows, 0), j, inside


def solve_banded(l_and_u, ab, b):
    """``x`` with ``A x = b``, ``A`` given by its band ``ab`` as in scipy (``l`` sub- and ``u`` super-diagonals);
    differentiable in ``ab`` and ``b``.  Solved densely: see the module's note.

    >>> import numpy as np
    >>> import autodiff
    >>> ab = np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]])  # tridiagonal 1, 4, 1
    >>> bool(np.allclose(solve_banded((1, 1), ab, np.ones(3)), np.linalg.solve(
    ...     np.diag([4.0] * 3) + np.diag([1.0] * 2, 1) + np.diag([1.0] * 2, -1), np.ones(3))))
    True
    >>> autodiff.grad(lambda b: solve_banded((1, 1), ab, b).sum())(np.ones(3)).round(6)  # A^-T 1
    array([0.214286, 0.142857, 0.214286])
    """
    refuse_complex("autodiff.scipy.linalg.solve_banded", ab, b)
    lower, upper = (int(v) for v in l_and_u)
    if len(shape_of(ab)) != 2 or shape_of(ab)[0] != lower + upper + 1:
        raise ValueError(
            f"autodiff.scipy.linalg.solve_banded: ab must have l + u + 1 = {lower + upper + 1} rows (scipy's band "
            f"layout, ab[u + i - j, j] = a[i, j]), got shape {shape_of(ab)}"
        )
    rows, cols, inside = _band_indices((lower, upper), shape_of(ab)[1])
    return linalg.solve(where(inside, ab[rows, cols], 0.0), b)
