"""Splitting into sub-arrays: ``array_split`` (uneven parts allowed) and ``hsplit``, ``vsplit``,
``dsplit`` (``split`` along axis 1, 0 and 2).

Every part is a slice of the input, so the pullbacks are ``getitem``'s.
"""

from ._arraylike import as_array
from ._broadcast import shape_of
from ._indexing import getitem
from ._shape import split


def array_split(ary, indices_or_sections, axis=0):
    """Split ``ary`` into parts along ``axis``: ``n`` sections (the first ``len % n`` one longer),
    or at the given indices.

    >>> import numpy as np
    >>> [p.tolist() for p in array_split(np.arange(5.0), 3)]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """
    ary = as_array(ary)
    ndim = len(shape_of(ary))
    n = shape_of(ary)[axis]
    bounds = _bounds(n, indices_or_sections)
    lead = (slice(None),) * (axis % ndim)
    return [getitem(ary, lead + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def _bounds(n, indices_or_sections):
    try:
        points = [0, *indices_or_sections, n]
    except TypeError:  # a number of sections, as numpy decides
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("autodiff.numpy.array_split: the number of sections must be larger than 0") from None
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = [sum(sizes[:i]) for i in range(sections + 1)]
    return points


def _needs(name, ary, ndim):
    if len(shape_of(ary)) < ndim:
        raise ValueError(
            f"autodiff.numpy.{name} only works on arrays of {ndim} or more dimensions, "
            f"got shape {shape_of(ary)}; use split with an explicit axis"
        )


def _sections(indices_or_sections):
    """A list of indices, or a Python int of sections (numpy integers included)."""
    try:
        return list(indices_or_sections)
    except TypeError:
        return int(indices_or_sections)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1 (axis 0 for 1-D input).

    >>> import numpy as np
    >>> [p.shape for p in hsplit(np.ones((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    ary = as_array(ary)
    _needs("hsplit", ary, 1)
    return split(ary, _sections(indices_or_sections), axis=1 if len(shape_of(ary)) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0, for arrays of at least 2 dimensions.

    >>> import numpy as np
    >>> [p.shape for p in vsplit(np.ones((4, 2)), [1])]
    [(1, 2), (3, 2)]
    """
    ary = as_array(ary)
    _needs("vsplit", ary, 2)
    return split(ary, _sections(indices_or_sections), axis=0)


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2, for arrays of at least 3 dimensions.

    >>> import numpy as np
    >>> [p.shape for p in dsplit(np.ones((1, 2, 4)), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    ary = as_array(ary)
    _needs("dsplit", ary, 3)
    return split(ary, _sections(indices_or_sections), axis=2)
