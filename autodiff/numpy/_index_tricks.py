"""``r_`` and ``c_``: numpy's index-expression concatenation, differentiable through the traced pieces.

numpy's own ``np.r_[x, y]`` converts each piece with ``np.array`` before ``autodiff`` can see it, so a traced
piece raises our ``DetachError``; ``anp.r_[x, y]`` reads the same expression (slices as ranges, a leading
string directive, scalars, arrays of any rank, numpy's dtype rule for scalars) and joins the pieces with
``anp.concatenate``.  Without a traced piece it gives what numpy's gives.  numpy's matrix directives
(``'r'``, ``'c'`` and the string form ``r_['1, 2; 3, 4']``) build ``np.matrix`` objects, which are not
supported.

>>> import numpy as np
>>> import autodiff
>>> r_[np.array([1.0, 2.0]), 0:2, 5.0]
array([1., 2., 0., 1., 5.])
>>> autodiff.grad(lambda x: (c_[x, 2.0 * x] ** 2).sum())(np.array([1.0, 3.0]))
array([10., 30.])
"""

import numpy as np

from ..extend import Traced
from ._broadcast import dtype_of, shape_of
from ._construction import array
from ._joining import concatenate
from ._ranges import linspace
from ._shape import swapaxes, transpose


class _Settings:
    """How the pieces are joined: ``axis``, the rank every piece is raised to, and where a raised piece's own
    axes go (``trans1d``), as numpy's ``AxisConcatenator`` reads them (a directive may change them)."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def read(self, directive, name):
        try:
            numbers = [int(part) for part in directive.split(",")]
        except ValueError:
            raise ValueError(f"autodiff.numpy.{name}: unknown directive {directive!r}; numpy's are 'axis', "
                             "'axis,ndmin' and 'axis,ndmin,trans1d' (the matrix ones, 'r' and 'c', "
                             "are not supported)") from None
        if len(numbers) > 3:
            raise ValueError(f"autodiff.numpy.{name}: directive {directive!r} has more than three numbers")
        self.axis, self.ndmin, self.trans1d = numbers + [self.ndmin, self.trans1d][len(numbers) - 1:]


class _Concatenator:
    """``r_[...]`` (``axis=0``) and ``c_[...]`` (the last axis, pieces raised to 2-D as columns)."""

    def __init__(self, name, axis, ndmin=1, trans1d=-1):
        self.name, self.defaults = name, (axis, ndmin, trans1d)

    def __getitem__(self, key):
        if isinstance(key, str):
            raise NotImplementedError(f"autodiff.numpy.{self.name}[{key!r}]: the string form builds an np.matrix, "
                                      "which is not supported; list the pieces: anp.r_[a, b]")
        key = key if type(key) is tuple else (key,)
        settings = _Settings(*self.defaults)
        pieces, for_dtype = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k:
                    raise ValueError(f"autodiff.numpy.{self.name}: a directive must be the first entry")
                if item in ("r", "c"):
                    raise NotImplementedError(f"autodiff.numpy.{self.name}: the directive {item!r} builds an "
                                              "np.matrix, which is not supported")
                settings.read(item, self.name)
                continue
            piece = self._piece(item, settings)
            pieces.append(piece)
            for_dtype.append(item if type(item) in np.ScalarType else dtype_of(piece))
        dtype = np.result_type(*for_dtype) if for_dtype else None  # scalars are weak, as numpy's r_ takes them
        return concatenate([array(p, dtype=dtype, ndmin=settings.ndmin) for p in pieces], axis=settings.axis)

    def _piece(self, item, settings):
        if isinstance(item, slice):
            return _raised(_range(item, self.name), settings.ndmin, settings.trans1d, True)
        if type(item) in np.ScalarType:
            return item
        return _raised(array(item), settings.ndmin, settings.trans1d, False)

    def __len__(self):
        return 0


def _range(item, name):
    """A slice as numpy's ``r_`` reads it: ``arange``, or ``linspace`` with an imaginary step (its count)."""
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    if isinstance(step, (complex, np.complexfloating)):
        return linspace(start, item.stop, num=int(abs(step)))  # differentiable in its ends
    if any(type(end) is Traced for end in (start, item.stop, step)):
        raise TypeError(f"autodiff.numpy.{name}: a slice with a real step is a numpy.arange, whose ends are read "
                        "as plain numbers; give plain ends, or an imaginary step (a:b:5j, a linspace of 5 "
                        "samples) to differentiate through them")
    return np.arange(start, item.stop, step)


def _raised(piece, ndmin, trans1d, is_range):
    """``piece`` with at least ``ndmin`` axes; its own axes moved to ``trans1d`` as numpy's ``r_`` does (for a
    range, the last axis swapped there)."""
    ndim = len(shape_of(piece))
    if ndim >= ndmin:
        return piece
    raised = array(piece, ndmin=ndmin)
    if trans1d == -1:
        return raised
    if is_range:
        return swapaxes(raised, -1, trans1d)
    k2, k1 = ndmin - ndim, trans1d + (ndmin - ndim + 1 if trans1d < 0 else 0)
    axes = list(range(ndmin))
    return transpose(raised, tuple(axes[:k1] + axes[k2:] + axes[k1:k2]))


r_ = _Concatenator("r_", 0)
c_ = _Concatenator("c_", -1, ndmin=2, trans1d=0)
