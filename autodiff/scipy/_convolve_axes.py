"""``convolve(in1, in2, axes=..., dot_axes=...)``: autograd's generalisation of scipy's ``convolve``.

``axes = (axes1, axes2)`` pairs the axes that are convolved; ``dot_axes = (dots1, dots2)`` pairs axes that are
summed over, as in ``tensordot``; every other axis is kept, ``in1``'s then ``in2``'s, as in an outer product.
The result's axes are ``in1``'s kept axes, ``in2``'s kept axes, then the convolved ones (autograd's layout).

It is a composition, so every derivative comes from ``convolve``'s own rules.  Both inputs are laid out with
their summed axes first (``in2``'s reversed), then ``in1``'s kept axes (size 1 in ``in2``), then ``in2``'s
(size 1 in ``in1``), then the convolved ones; one full N-d convolution of the two then holds every answer: a
summed axis's sum at its centre entry, a kept axis unchanged (convolved with a length-1 axis), and the
convolved axes in full, cut to ``mode`` as scipy cuts them.
"""

from ..numpy import flip, reshape, transpose
from ..numpy._broadcast import shape_of

__all__ = ["convolve_over_axes"]


def _kept(ndim, *taken):
    used = {a for axes in taken for a in axes}
    return [a for a in range(ndim) if a not in used]


def _cut(n, m, mode):
    """The entries of a full convolution of lengths ``n`` and ``m`` that ``mode`` keeps (scipy's rules)."""
    if mode == "valid":
        return slice(min(n, m) - 1, max(n, m))
    if mode == "same":
        return slice((m - 1) // 2, (m - 1) // 2 + n)
    return slice(None)


def _checked(s1, s2, conv, dots, mode):
    if len(conv[0]) != len(conv[1]) or len(dots[0]) != len(dots[1]):
        raise ValueError(f"autodiff.scipy.signal.convolve: axes {conv} and dot_axes {dots} must pair axes one to one")
    if any(s1[a] != s2[b] for a, b in zip(*dots)):
        raise ValueError(f"autodiff.scipy.signal.convolve: dot_axes {dots} pair axes of different lengths in shapes "
                         f"{s1} and {s2}")
    _checked_mode(mode, [(s1[a], s2[b]) for a, b in zip(*conv)])


def _checked_mode(mode, pairs):
    """Refuse an unknown ``mode``, or ``valid`` where neither input is the larger along every convolved axis
    (``pairs``: the two lengths of each)."""
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"autodiff.scipy.signal.convolve: mode must be 'full', 'valid' or 'same', got {mode!r}")
    if mode == "valid" and not (all(n >= m for n, m in pairs) or all(n <= m for n, m in pairs)):
        raise ValueError(f"autodiff.scipy.signal.convolve: mode='valid' needs one input at least as large as the "
                         f"other along every convolved axis, got {pairs}")


def _paired(s1, s2, axes, dot_axes):
    """``(axes1, axes2)`` convolved (every axis of both by default) and ``(dots1, dots2)`` summed (none by
    default), as lists."""
    conv = (range(len(s1)), range(len(s2))) if axes is None else axes
    dots = ((), ()) if dot_axes is None else dot_axes
    return tuple(list(a) for a in conv), tuple(list(a) for a in dots)


def _laid_out(x, shape, summed, kept, convolved, ones_before, ones_after):
    """``x`` with its ``summed`` axes first, then its ``kept`` ones between ``ones_before`` and ``ones_after``
    axes of length 1 (the other input's kept axes), then its ``convolved`` ones."""
    sizes = ([shape[a] for a in summed] + [1] * ones_before + [shape[a] for a in kept] + [1] * ones_after
             + [shape[a] for a in convolved])
    return reshape(transpose(x, summed + kept + convolved), tuple(sizes))


def convolve_over_axes(full_convolve, in1, in2, axes, dot_axes, mode):
    """``in1`` convolved with ``in2`` along ``axes``, summed along ``dot_axes``; ``full_convolve(a, b)`` is the
    N-d convolution in mode ``full`` of two arrays of one ndim."""
    s1, s2 = shape_of(in1), shape_of(in2)
    conv, dots = _paired(s1, s2, axes, dot_axes)
    _checked(s1, s2, conv, dots, mode)
    keep1, keep2 = _kept(len(s1), conv[0], dots[0]), _kept(len(s2), conv[1], dots[1])
    a = _laid_out(in1, s1, dots[0], keep1, conv[0], 0, len(keep2))
    b = _laid_out(in2, s2, dots[1], keep2, conv[1], len(keep1), 0)
    if dots[1]:
        b = flip(b, axis=tuple(range(len(dots[1]))))
    centres = tuple(s1[a] - 1 for a in dots[0])  # a summed axis's sum sits at the centre of its full convolution
    cuts = tuple(_cut(s1[i], s2[j], mode) for i, j in zip(*conv))
    return full_convolve(a, b)[centres + (slice(None),) * (len(keep1) + len(keep2)) + cuts]
