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
    pairs = [(s1[a], s2[b]) for a, b in zip(*conv)]
    if mode == "valid" and not (all(n >= m for n, m in pairs) or all(n <= m for n, m in pairs)):
        raise ValueError(f"autodiff.scipy.signal.convolve: mode='valid' needs one input at least as large as the "
                         f"other along every convolved axis, got {pairs}")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"autodiff.scipy.signal.convolve: mode must be 'full', 'valid' or 'same', got {mode!r}")


def convolve_over_axes(full_convolve, in1, in2, axes, dot_axes, mode):
    """``in1`` convolved with ``in2`` along ``axes``, summed along ``dot_axes``; ``full_convolve(a, b)`` is the
    N-d convolution in mode ``full`` of two arrays of one ndim."""
    s1, s2 = shape_of(in1), shape_of(in2)
    conv = (list(range(len(s1))), list(range(len(s2)))) if axes is None else tuple(list(a) for a in axes)
    dots = ((), ()) if dot_axes is None else tuple(list(a) for a in dot_axes)
    _checked(s1, s2, conv, dots, mode)
    keep1, keep2 = _kept(len(s1), conv[0], dots[0]), _kept(len(s2), conv[1], dots[1])
    d, k1, k2 = [s1[a] for a in dots[0]], [s1[a] for a in keep1], [s2[a] for a in keep2]
    a = reshape(transpose(in1, list(dots[0]) + keep1 + list(conv[0])),
                tuple(d + k1 + [1] * len(k2) + [s1[a] for a in conv[0]]))
    b = reshape(transpose(in2, list(dots[1]) + keep2 + list(conv[1])),
                tuple(d + [1] * len(k1) + k2 + [s2[a] for a in conv[1]]))
    if d:
        b = flip(b, axis=tuple(range(len(d))))
    full = full_convolve(a, b)
    cuts = [_cut(s1[i], s2[j], mode) for i, j in zip(*conv)]
    return full[tuple(n - 1 for n in d) + (slice(None),) * (len(k1) + len(k2)) + tuple(cuts)]
