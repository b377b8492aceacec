"""``autodiff.scipy.signal``: ``convolve`` and ``correlate`` (any matching ndim; ``convolve2d``,
``correlate2d`` with zero fill), modes ``full``, ``same`` and ``valid``.

``convolve`` is the primitive; it is linear in each input, so its pushforward is ``convolve`` of the
tangent.  A ``same`` or ``valid`` result is a centred window of the full one,
so its cotangent is first zero-padded back to the full shape; the full convolution's pullback to
each input is then a ``valid`` correlation of that cotangent with the other input (a convolution
with it flipped), so the rule is written with ``convolve`` itself and nests.  ``correlate`` is
``convolve`` with the second input flipped, as in scipy for real input (complex input is refused).

>>> import numpy as np
>>> import autodiff
>>> autodiff.grad(lambda a: convolve(a, np.array([1.0, 2.0]), mode="valid").sum())(np.ones(3))
array([2., 3., 1.])
"""

import numpy as np
import scipy.signal as sg

from ..extend import defbatch, deflinear, defvjp, primitive
from ..numpy import broadcast_to, einsum, flip, getitem, pad, reshape
from ..numpy._batch_helpers import example_shape
from ..numpy._broadcast import shape_of
from ._convolve_axes import convolve_over_axes
from ._real import refuse_complex

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]

_MODES = ("full", "same", "valid")


def _convolve(in1, in2, mode):
    return sg.convolve(in1, in2, mode=mode, method="direct")


_convolve_p = primitive(_convolve, "convolve")


def _full_cotangent(g, in1, in2, mode):
    """``g`` zero-padded to the full convolution's shape, at the centred window scipy returns."""
    if mode == "full":
        return g
    full = [a + b - 1 for a, b in zip(shape_of(in1), shape_of(in2))]
    widths = [((f - n) // 2, f - n - (f - n) // 2) for f, n in zip(full, shape_of(g))]
    return pad(g, widths)


def _convolve_vjp(which):
    def vjp(g, ans, in1, in2, mode):
        other = in2 if which == 0 else in1
        return _convolve_p(_full_cotangent(g, in1, in2, mode), flip(other), "valid")

    return vjp


defvjp(_convolve_p, _convolve_vjp(0), _convolve_vjp(1))
deflinear(_convolve_p)  # linear in each input with the other held: its JVP is convolve of the tangent


# --- under vmap ---------------------------------------------------------------------------------------------

def _convolve_batch(level, args, bdims, kwargs):
    """One convolution for the whole batch.  With one input shared, the batch is one more axis of the
    convolution, along which the shared input has length 1 (so examples never mix); with both batched, each
    output is a sum over windows gathered from its own example (``_pairwise``)."""
    (in1, in2, mode), (b1, b2) = args, bdims[:2]
    if b1 is not None and b2 is not None:
        return _pairwise(in1, in2, mode), 0
    lifted = [x if b is not None else reshape(x, (1,) + shape_of(x)) for x, b in zip((in1, in2), (b1, b2))]
    if _keeps_the_batch(mode, b1 is not None, shape_of(lifted[0]), shape_of(lifted[1])):
        return _convolve_p(*lifted, mode), 0
    both = [x if b is not None else broadcast_to(x, (level.size,) + shape_of(x)) for x, b in zip((in1, in2), (b1, b2))]
    return _pairwise(*both, mode), 0


def _keeps_the_batch(mode, first_batched, s1, s2):
    """Does scipy's ``mode`` keep the batch axis whole?  Not where the shared input (length 1 there) is the
    first of a ``same`` (which takes the first's shape) or the smaller of a ``valid`` (scipy refuses it)."""
    if mode == "same":
        return first_batched
    if mode == "valid":
        return all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))
    return True


def _window(s1, s2, mode):
    """Where ``mode``'s output lies in the full convolution: its start and length along each axis."""
    if mode == "full":
        return [0] * len(s1), [a + b - 1 for a, b in zip(s1, s2)]
    if mode == "same":
        return [(b - 1) // 2 for b in s2], list(s1)
    return [min(a, b) - 1 for a, b in zip(s1, s2)], [abs(a - b) + 1 for a, b in zip(s1, s2)]


def _pairwise(in1, in2, mode):
    """Each example's convolution, both inputs batched (axis 0): ``out[k] = sum_j in1[k - j] in2[j]`` as one
    gather of ``in1``'s windows (zero-padded, flattened, so the index is one array) and one contraction
    with ``in2``, both per example.  Convolution commutes, so the windows are gathered from the larger input
    and the sums run over the smaller one: it costs what scipy's direct sum does."""
    s1, s2 = example_shape(in1, 0), example_shape(in2, 0)
    starts, lengths = _window(s1, s2, mode)
    if np.prod(s2) > np.prod(s1):
        in1, in2, s1, s2 = in2, in1, s2, s1
    padded = pad(in1, [(0, 0)] + [(k - 1, k - 1) for k in s2])
    strides = np.cumprod((1,) + tuple(a + 2 * b - 2 for a, b in zip(s1, s2))[:0:-1])[::-1]
    index = sum(_axis_index(d, len(s1), start, length, k) * stride
                for d, (start, length, k, stride) in enumerate(zip(starts, lengths, s2, strides)))
    windows = getitem(reshape(padded, (shape_of(padded)[0], -1)), (slice(None), np.asarray(index).reshape(-1)))
    size, batch = int(np.prod(s2)), shape_of(padded)[0]  # the batch by its size, which may be 0: never -1
    out = einsum("bok,bk->bo", reshape(windows, (batch, int(np.prod(lengths)), size)), reshape(in2, (batch, size)))
    return reshape(out, (batch,) + tuple(lengths))


def _axis_index(d, ndim, start, length, k):
    """Along axis ``d``, the padded position of ``in1[k_out - j]`` for every output ``k_out`` and kernel ``j``,
    shaped to broadcast: the outputs along axis ``d``, the kernel entries along axis ``ndim + d``."""
    position = (start + np.arange(length))[:, None] - np.arange(k)[None, :] + k - 1
    shape = [1] * (2 * ndim)
    shape[d], shape[ndim + d] = length, k
    return position.reshape(shape)


defbatch(_convolve_p, _convolve_batch)


def _checked(name, in1, in2, mode):
    refuse_complex(f"autodiff.scipy.signal.{name}", in1, in2)
    if mode not in _MODES:
        raise ValueError(f"autodiff.scipy.signal.{name}: mode must be one of {_MODES}, got {mode!r}")
    s1, s2 = shape_of(in1), shape_of(in2)
    if len(s1) != len(s2):
        raise ValueError(f"autodiff.scipy.signal.{name}: in1 and in2 must have the same ndim, got shapes {s1} and {s2}")
    if mode == "valid" and not (all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))):
        raise ValueError(
            f"autodiff.scipy.signal.{name}: mode='valid' needs one input at least as large as the other in "
            f"every dimension, got shapes {s1} and {s2}"
        )


def convolve(in1, in2, mode="full", method="auto", *, axes=None, dot_axes=None):
    """The N-dimensional convolution of ``in1`` and ``in2``, differentiable in both (``method`` is ignored:
    the forward is always scipy's direct sum, so it agrees with the rule to rounding).

    ``axes=(axes1, axes2)`` and ``dot_axes=(dots1, dots2)`` are autograd's generalisation: convolve along the
    paired ``axes`` only, sum along the paired ``dot_axes``, keep every other axis as an outer product
    (``_convolve_axes``).

    >>> import numpy as np
    >>> import autodiff
    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    >>> autodiff.grad(lambda k: convolve(np.array([1.0, 2.0, 3.0]), k, mode="valid")[0])(np.array([0.0, 1.0, 0.5]))
    array([3., 2., 1.])
    >>> convolve(np.ones((2, 3)), np.ones((2, 2)), axes=([1], [1]), dot_axes=([0], [0]))  # sums the rows' convolutions
    array([2., 4., 4., 2.])
    """
    if axes is not None or dot_axes is not None:
        refuse_complex("autodiff.scipy.signal.convolve", in1, in2)
        return convolve_over_axes(lambda a, b: _convolve_p(a, b, "full"), in1, in2, axes, dot_axes, mode)
    _checked("convolve", in1, in2, mode)
    return _convolve_p(in1, in2, mode)


def correlate(in1, in2, mode="full", method="auto"):
    """The cross-correlation: ``convolve(in1, in2 flipped along every axis, mode)`` (real inputs).

    >>> import numpy as np
    >>> import autodiff
    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.5]), mode="valid")
    array([2. , 3.5])
    >>> autodiff.grad(lambda a: correlate(a, np.array([1.0, 0.5]), mode="valid").sum())(np.ones(3))
    array([1. , 1.5, 0.5])
    """
    _checked("correlate", in1, in2, mode)
    return _convolve_p(in1, flip(in2), mode)


def _two_d(name, in1, in2, boundary, fillvalue):
    refuse_complex(f"autodiff.scipy.signal.{name}", in1, in2)
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(
            f"autodiff.scipy.signal.{name}: only boundary='fill' with fillvalue=0 is supported, got "
            f"boundary={boundary!r}, fillvalue={fillvalue!r}; pad the input with autodiff.numpy.pad instead"
        )
    if len(shape_of(in1)) != 2 or len(shape_of(in2)) != 2:
        raise ValueError(f"autodiff.scipy.signal.{name}: inputs must be 2-D, got {shape_of(in1)} and {shape_of(in2)}")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """2-D convolution with zero fill (scipy's default boundary).

    >>> import numpy as np
    >>> import autodiff
    >>> convolve2d(np.eye(2), np.ones((1, 2)))
    array([[1., 1., 0.],
           [0., 1., 1.]])
    >>> autodiff.grad(lambda a: convolve2d(a, np.ones((1, 2))).sum())(np.eye(2))
    array([[2., 2.],
           [2., 2.]])
    """
    _two_d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """2-D cross-correlation with zero fill (scipy's default boundary).

    >>> import numpy as np
    >>> import autodiff
    >>> correlate2d(np.arange(4.0).reshape(2, 2), np.ones((1, 1)), mode="same")
    array([[0., 1.],
           [2., 3.]])
    >>> autodiff.grad(lambda k: correlate2d(np.arange(4.0).reshape(2, 2), k, mode="valid").sum())(np.ones((2, 1)))
    array([[1.],
           [5.]])
    """
    _two_d("correlate2d", in1, in2, boundary, fillvalue)
    return correlate(in1, in2, mode)
