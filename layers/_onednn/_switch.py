"""Whether the oneDNN backend runs: the extra installed, the switches on, and a self-check passed.

:func:`convolve` is what ``Conv2d`` calls once :func:`install` has put it in the slot ``hooks.convolve``: the
oneDNN primitives for float32 images and weights, ``layers._conv.conv2d`` (the numpy reference) for anything
else.  The backend is off under ``AUTODIFF_REFERENCE=1``, with ``AUTODIFF_ACCEL_OFF=onednn``, after
:func:`set_enabled(False) <set_enabled>`, and without the ``[onednn]`` extra.  At first use it loads
``libdnnl.so.3`` and compares the forward and both gradients with the numpy reference on a large and a small
convolution; if the library does not load or a result differs, it warns once and the reference runs from
then on.
"""

import functools
import os
import warnings
from importlib import metadata

import numpy as np

from autodiff import _hooks
from autodiff.extend import value_of

from .. import _conv
from . import _library, _primitives

_enabled = True
_status = None  # None until the first use; then "ok" or the reason the reference runs


class OneDNNWarning(RuntimeWarning):
    """The oneDNN backend is installed but failed to load or to match the numpy reference: it is off."""


def installed():
    """Is the ``[onednn]`` extra (``onednn-cpu-gomp``) installed, or a library named by ``AUTODIFF_ONEDNN_LIB``?

    Every float32 convolution asks (through :func:`ready`), so the package metadata is read once per process:
    reading it costs about as much as a small convolution.  An extra installed after that is seen by the next
    process."""
    return bool(os.environ.get("AUTODIFF_ONEDNN_LIB")) or _wheel_installed()


@functools.cache
def _wheel_installed():
    try:
        metadata.version("onednn-cpu-gomp")
    except metadata.PackageNotFoundError:
        return False
    return True


def _off_reason():
    if not _hooks.enabled("onednn"):
        return "AUTODIFF_REFERENCE=1" if _hooks.REFERENCE else "AUTODIFF_ACCEL_OFF=onednn"
    if not _enabled:
        return "switched off (layers._onednn.set_enabled(False))"
    if not installed():
        return "the [onednn] extra is not installed"
    return None


def _check_against_reference():
    """``None`` when the forward and both gradients match the numpy reference (1e-4 relative), else why not.

    One convolution has 36 output positions per image, one has 1: both sides of the split (``MIN_POSITIONS``)."""
    rng = np.random.default_rng(0)
    for x_shape, w_shape, stride, padding in (((2, 16, 6, 6), (8, 16, 3, 3), 1, 1),
                                              ((2, 16, 3, 3), (8, 16, 3, 3), 1, 0)):  # 36 positions, 1
        x, w = rng.standard_normal(x_shape, np.float32), rng.standard_normal(w_shape, np.float32)
        y = _primitives._forward(x, w, stride, padding)
        g = rng.standard_normal(y.shape, np.float32)
        x64, w64, g64 = x.astype(np.float64), w.astype(np.float64), g.astype(np.float64)
        pairs = {"forward": (y, _primitives._forward(x64, w64, stride, padding)),
                 "input gradient": (_primitives._input(g, w, x_shape, stride, padding),
                                    _primitives._input(g64, w64, x_shape, stride, padding)),
                 "weight gradient": (_primitives._weight(x, g, w_shape, stride, padding),
                                     _primitives._weight(x64, g64, w_shape, stride, padding))}
        for name, (ours, reference) in pairs.items():
            if not np.allclose(ours, reference, rtol=1e-4, atol=1e-4 * np.abs(reference).max()):
                return f"its {name} differs from the numpy reference at shapes {x_shape} and {w_shape}"
    return None


def _first_use():
    try:
        _library.load()
        reason = _check_against_reference()
    except _library.OneDNNError as e:
        reason = str(e)
    if reason is not None:
        warnings.warn(f"layers: the oneDNN convolution backend is off ({reason}); the numpy im2col reference "
                      "runs instead", OneDNNWarning, stacklevel=4)
    return "ok" if reason is None else reason


def ready():
    """Does oneDNN run float32 convolutions now?  (Loads and checks the library at the first call.)"""
    global _status
    if _off_reason() is not None:
        return False
    if _status is None:
        _status = _first_use()
    return _status == "ok"


def _dtype(a):
    return getattr(value_of(a), "dtype", None)  # anything but an array (a list): the reference, as before


def convolve(x, w, stride, padding):
    """``conv2d(x, w, stride, padding)`` on oneDNN for float32 arguments when :func:`ready`, else the reference."""
    if _dtype(x) == np.float32 == _dtype(w) and ready():
        return _primitives.onednn_conv2d(x, w, stride, padding)
    return _conv.conv2d(x, w, stride, padding)


def set_enabled(flag):
    """Switch the backend on or off for float32 convolutions from now on; returns the previous setting."""
    global _enabled
    previous, _enabled = _enabled, bool(flag)
    return previous


def describe():
    """Which convolution backend runs float32 convolutions, and why, in one line (``python -m bench`` prints it)."""
    if ready():
        kernel = _primitives.dnnl.plan((1, 64, 8, 8), (64, 64, 3, 3), 1, 1).forward.implementation()
        return (f"oneDNN {_library.version()} ({kernel}) from {_primitives.MIN_POSITIONS} output positions per "
                "image, numpy im2col with dnnl_sgemm below")
    return f"numpy im2col reference ({_off_reason() or _status})"


def install():
    """Fill the ``convolve`` slot with :func:`convolve` (nothing is loaded until the first convolution)."""
    _hooks.fill("onednn", "oneDNN's convolutions for float32 images (the [onednn] extra; loaded and checked "
                "against the numpy reference at first use)", available=installed(),
                reason="the [onednn] extra is not installed", convolve=convolve)
