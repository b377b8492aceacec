"""Polynomials as coefficient arrays (highest power first), and the convolution that multiplies them:
``convolve``, ``correlate``, ``polymul``, ``polyadd``, ``polysub``, ``polyder``, ``polyint``, ``polyval`` and
``vander``.

``convolve(a, v)`` sums the products ``a[j] v[i]`` with the same ``i + j``: the outer product scatter-added
(``add_at``) along its anti-diagonals, so it is differentiable in both arrays to any order and batches under
``vmap`` through the scatter's rule.  The rest are slices, pads, sums and products of ours.

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(lambda c: polyval(c, 2.0))(np.array([1.0, 0.0, 3.0]))  # c0 x^2 + c1 x + c2
array([4., 2., 1.])
"""

import numpy as np

from ._arraylike import as_array
from ._broadcast import dtype_of, shape_of
from ._complex import conj
from ._elementwise import add, divide, multiply, power, subtract
from ._indexing import getitem
from ._joining import concatenate, stack
from ._linalg import outer
from ._scatter import add_at


def _vector(name, x):
    x = as_array(x)
    if len(shape_of(x)) != 1 or not shape_of(x)[0]:
        raise ValueError(f"autodiff.numpy.{name}: expected a non-empty 1-D array, got shape {shape_of(x)}")
    return x


def convolve(a, v, mode="full"):
    """The discrete convolution of two 1-D arrays, numpy's ``convolve`` (``mode`` ``'full'``, ``'same'`` or
    ``'valid'``).

    >>> convolve(np.array([1.0, 2.0]), np.array([1.0, 1.0, 1.0]))
    array([1., 3., 3., 2.])
    """
    a, v = _vector("convolve", a), _vector("convolve", v)
    n, m = shape_of(a)[0], shape_of(v)[0]
    products = outer(a, v)
    dtype = np.result_type(dtype_of(a), dtype_of(v))
    full = add_at(np.zeros(n + m - 1, dtype), np.add.outer(np.arange(n), np.arange(m)), products)
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return full
    if mode == "same":
        return getitem(full, slice((short - 1) // 2, (short - 1) // 2 + long))
    if mode == "valid":
        return getitem(full, slice(short - 1, long))
    raise ValueError(f"autodiff.numpy.convolve: mode={mode!r}; pass 'full', 'same' or 'valid'")


def correlate(a, v, mode="valid"):
    """The cross-correlation of two 1-D arrays, numpy's ``correlate``: ``convolve(a, conj(v)[::-1])``.

    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0]))
    array([2., 3.])
    """
    v = _vector("correlate", v)
    v = conj(v) if dtype_of(v).kind == "c" else v
    return convolve(a, getitem(v, slice(None, None, -1)), mode)


def polymul(a1, a2):
    """The product of two polynomials (``convolve``).

    >>> polymul([1.0, 1.0], [1.0, -1.0])
    array([ 1.,  0., -1.])
    """
    return convolve(a1, a2)


def _aligned(a1, a2):
    a1, a2 = as_array(a1), as_array(a2)
    n1, n2 = shape_of(a1)[0], shape_of(a2)[0]
    pad = [np.zeros(abs(n1 - n2), np.result_type(dtype_of(a1), dtype_of(a2)))]
    return (concatenate(pad + [a1]) if n1 < n2 else a1), (concatenate(pad + [a2]) if n2 < n1 else a2)


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded with leading zeros).

    >>> polyadd([1.0, 2.0], [1.0, 1.0, 1.0])
    array([1., 2., 3.])
    """
    return add(*_aligned(a1, a2))


def polysub(a1, a2):
    """The difference of two polynomials.

    >>> polysub([1.0, 2.0], [1.0, 1.0, 1.0])
    array([-1.,  0.,  1.])
    """
    return subtract(*_aligned(a1, a2))


def polyder(p, m=1):
    """The ``m``-th derivative of the polynomial ``p``.

    >>> polyder([1.0, 1.0, 1.0])
    array([2., 1.])
    """
    p = as_array(p)
    for _ in range(m):
        n = shape_of(p)[0] - 1
        p = multiply(getitem(p, slice(0, max(n, 0))), np.arange(n, 0, -1))
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of ``p``, each integration constant from ``k`` (zeros by default).

    >>> polyint([3.0, 2.0], k=5.0)
    array([1.5, 2. , 5. ])
    """
    p = as_array(p)
    constants = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k, np.float64), (m,))
    for c in constants:
        n = shape_of(p)[0]
        p = concatenate([divide(p, np.arange(n, 0, -1)), [c]])
    return p


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's rule.

    >>> polyval([1.0, 0.0, -1.0], np.array([2.0, 3.0]))
    array([3., 8.])
    """
    p, y = as_array(p), 0.0
    for k in range(shape_of(p)[0]):
        y = add(multiply(y, x), getitem(p, k))
    return y


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed when ``increasing``).

    >>> vander(np.array([2.0, 3.0]), 3)
    array([[4., 2., 1.],
           [9., 3., 1.]])
    """
    x = as_array(x)
    if len(shape_of(x)) != 1:
        raise ValueError(f"autodiff.numpy.vander: x must be 1-D, got shape {shape_of(x)}")
    n = shape_of(x)[0] if N is None else N
    columns = [np.ones(shape_of(x), dtype_of(x)) if k == 0 else power(x, k) for k in range(n)]
    return stack(columns if increasing else columns[::-1], axis=1)
