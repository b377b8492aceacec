"""Order, weighted and paired statistics: ``ptp``, ``average``, ``quantile``, ``percentile``, ``median``,
``cov`` and ``corrcoef``.

A quantile is read off the sorted values (``sort`` gathers through the sorting permutation) by numpy's default
``'linear'`` method: between the two order statistics around position ``q (n - 1)``, weighted by how far the
position lies between them.  So its derivative goes to those two entries (half each for the median of an even
count), as in JAX; torch's ``median`` picks the lower one.

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(median)(np.array([4.0, 1.0, 3.0, 2.0]))
array([0. , 0. , 0.5, 0.5])
"""

import numpy as np

from ..extend import plain_value
from ._arraylike import as_array
from ._binary import clip
from ._broadcast import broadcast_to, dtype_of, shape_of
from ._complex import conj, imag, real
from ._construction import astype
from ._elementwise import add, divide, multiply, sqrt, subtract
from ._indexing import take
from ._joining import concatenate
from ._linalg import diagonal, matmul
from ._numpy_order import keepdims_given, method_given
from ._reductions import _float_dtype, max, mean, min, sum
from ._shape import moveaxis, reshape, transpose
from ._sorting import sort


def ptp(a, axis=None, keepdims=False):
    """The range, ``max - min``, along ``axis`` (ties of either share its derivative, as for ``max``).

    >>> ptp(np.array([[1.0, 5.0], [2.0, 2.0]]), axis=1)
    array([4., 0.])
    """
    a, keepdims = as_array(a), keepdims_given("ptp", "out", keepdims)
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The mean along ``axis``, or with ``weights`` the weighted mean ``sum(a w) / sum(w)``; differentiable in
    both.  ``weights`` has ``a``'s shape, or is 1-D along the one ``axis``.  With ``returned``, also the sum of
    the weights (broadcast to the result's shape).

    >>> average(np.array([1.0, 3.0]), weights=np.array([3.0, 1.0]))
    np.float64(1.5)
    """
    a = as_array(a)
    if weights is None:
        total = sum(a, axis=axis, keepdims=keepdims)
        count = np.asarray(a.size if axis is None else _count(shape_of(a), axis), _float_dtype(a))
        scale = broadcast_to(count, shape_of(total))
        return (divide(total, count), scale) if returned else divide(total, count)
    w = _weights_like(a, as_array(weights), axis)
    scale = sum(w, axis=axis, keepdims=keepdims)
    if np.any(np.asarray(plain_value(scale)) == 0):
        raise ZeroDivisionError("autodiff.numpy.average: the weights along an axis sum to zero, as numpy refuses")
    out = divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), scale)
    return (out, broadcast_to(scale, shape_of(out))) if returned else out


def _count(shape, axis):
    axes = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([shape[k] for k in axes]))


def _weights_like(a, w, axis):
    """``w`` shaped to broadcast against ``a``: as it is when the shapes agree, else 1-D along ``axis``."""
    shape, wshape = shape_of(a), shape_of(w)
    if wshape == shape:
        return w
    if axis is None or isinstance(axis, tuple) or len(wshape) != 1 or wshape[0] != shape[axis]:
        raise ValueError(f"autodiff.numpy.average: weights of shape {wshape} differ from a's shape {shape}; give "
                         "them a's shape, or 1-D along the one axis= they weigh, as numpy requires")
    return reshape(w, tuple(n if k == axis % len(shape) else 1 for k, n in enumerate(shape)))


def quantile(a, q, axis=None, method="linear", keepdims=False):
    """The ``q``-th quantile(s) along ``axis`` (the flattened array when ``None``), numpy's ``'linear'`` method;
    ``q`` in ``[0, 1]`` is a plain number or array, whose axes lead the result, as in numpy.

    >>> quantile(np.array([1.0, 2.0, 3.0, 4.0]), [0.25, 0.5])
    array([1.75, 2.5 ])
    """
    if method_given("quantile", method) != "linear":
        raise NotImplementedError(f"autodiff.numpy.quantile: method={method!r}; only numpy's default, 'linear', "
                                  "is supported")
    q = np.asarray(q, np.float64)
    if np.any((q < 0) | (q > 1)):
        raise ValueError("autodiff.numpy.quantile: q must lie in [0, 1]")
    a = as_array(a)
    ndim, whole = len(shape_of(a)), axis is None
    ordered = sort(a, axis=None) if whole else moveaxis(sort(a, axis=axis), axis, -1)
    n = shape_of(ordered)[-1]
    position = q * (n - 1)
    low = np.floor(position).astype(np.intp)
    high = np.minimum(low + 1, n - 1)
    weight = (position - low).reshape(q.shape + (1,) * (len(shape_of(ordered)) - 1)).astype(_float_dtype(a))
    lows, highs = (_q_axes_first(take(ordered, i, axis=-1), q.ndim) for i in (low, high))
    out = add(lows, multiply(weight, subtract(highs, lows)))
    return _keep(out, q.ndim, ndim, None if whole else axis) if keepdims else out


def _q_axes_first(picked, qdim):
    """``take`` leaves ``q``'s axes last; numpy's quantile puts them first."""
    return moveaxis(picked, tuple(range(-qdim, 0)), tuple(range(qdim))) if qdim else picked


def _keep(out, qdim, ndim, axis):
    """The result with the reduced axes kept as size 1 (after ``q``'s axes), as numpy's ``keepdims``."""
    shape = shape_of(out)
    rest = list(shape[qdim:])
    axes = range(ndim) if axis is None else [axis % ndim]
    for k in sorted(axes):
        rest.insert(k, 1)
    return reshape(out, shape[:qdim] + tuple(rest))


def percentile(a, q, axis=None, method="linear", keepdims=False):
    """The ``q``-th percentile(s), ``q`` in ``[0, 100]``: ``quantile(a, q / 100)``.

    >>> percentile(np.array([1.0, 2.0, 3.0]), 50)
    np.float64(2.0)
    """
    method = method_given("percentile", method)
    return quantile(a, np.asarray(q, np.float64) / 100, axis=axis, method=method, keepdims=keepdims)


def median(a, axis=None, keepdims=False):
    """The median along ``axis``: ``quantile(a, 0.5)``, the mean of the two middle values for an even count.

    >>> median(np.array([[1.0, 3.0], [2.0, 6.0]]), axis=1)
    array([2., 4.])
    """
    return quantile(a, 0.5, axis=axis, keepdims=keepdims_given("median", "out", keepdims))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """The covariance matrix of the variables in ``m``'s rows (columns when not ``rowvar``), ``y``'s appended;
    normalised by ``N - 1`` (``N`` with ``bias``, ``N - ddof`` with ``ddof``).  Weights are not supported.

    >>> cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    if fweights is not None or aweights is not None:
        raise NotImplementedError("autodiff.numpy.cov: fweights and aweights are not supported")
    rows = [_variables(v, rowvar) for v in ((m,) if y is None else (m, y))]
    x = concatenate(rows, axis=0) if len(rows) > 1 else rows[0]
    x = x if dtype is None else astype(x, dtype)
    n = shape_of(x)[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    centred = subtract(x, mean(x, axis=1, keepdims=True))
    other = conj(centred) if dtype_of(centred).kind == "c" else centred
    out = divide(matmul(centred, transpose(other)), max(n - ddof, 0))
    return reshape(out, ()) if shape_of(out) == (1, 1) else out


def _variables(v, rowvar):
    """``v`` as a 2-D array with one variable per row."""
    v = as_array(v)
    if len(shape_of(v)) > 2:
        raise ValueError(f"autodiff.numpy.cov: m and y have more than 2 dimensions (shape {shape_of(v)})")
    v = reshape(v, (1, -1)) if len(shape_of(v)) < 2 else v
    dtype = np.result_type(dtype_of(v), np.float64)  # numpy's cov computes in float64 at least
    v = v if dtype_of(v) == dtype else astype(v, dtype)
    return v if rowvar or shape_of(v)[0] == 1 else transpose(v)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson's correlation coefficients, ``cov(x, y) / sqrt(var_i var_j)``, clipped to ``[-1, 1]``
    (their real and imaginary parts, as numpy's).

    >>> corrcoef(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 5.0]))
    array([[1., 1.],
           [1., 1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        return divide(c, c)
    d = sqrt(real(diagonal(c)))
    c = divide(divide(c, reshape(d, (-1, 1))), reshape(d, (1, -1)))
    if dtype_of(c).kind == "c":
        return add(clip(real(c), -1, 1), multiply(clip(imag(c), -1, 1), 1j))
    return clip(c, -1, 1)
