"""``tanh``'s forward on a numba kernel for float64 arrays (hook: the ``tanh`` primitive's ``fun``).

Where numpy's SIMD dispatch stops short of AVX-512 (AVX2 machines), its float64 ``tanh`` calls the C
library's once per value: about 35 ns a value on an AMD EPYC VM, where its ``exp`` takes 8 and torch's
``tanh`` 5.  The kernel ``tanh_into`` (:mod:`autodiff._accel.kernels`) computes it from
``exp`` and ``expm1`` in about 15 ns, within an ulp or two of numpy's (tested against it, signed zeros,
infinities, NaN and subnormals included).  Arrays under ``MIN_SIZE`` values, other dtypes (numpy's float32
``tanh`` is vectorised), and calls with ``out=`` or other arguments stay with numpy, as does everything under
``AUTODIFF_REFERENCE=1``, ``AUTODIFF_ACCEL_OFF=kernels`` or with ``elementwise`` in ``AUTODIFF_ACCEL_OFF``.
On a machine where numpy runs AVX-512 (``AVX512_SKX`` in its CPU features) its float64 ``tanh`` is the
vectorised SVML port, about 1.1 ns a value on a Xeon VM against the kernel's 8, so the hook stays out.

>>> import numpy as np
>>> x = np.linspace(-3.0, 3.0, 1000)
>>> bool(np.allclose(tanh(x), np.tanh(x), rtol=1e-15, atol=0))
True
"""

import numpy as np

from . import kernels as _kernels

MIN_SIZE = 256  # below this numpy's per-call cost is less than the kernel call's


def tanh(x, *args, **kwargs):
    """``np.tanh(x, *args, **kwargs)``, on the kernel for a float64 array of ``MIN_SIZE`` values or more."""
    if args or kwargs or type(x) is not np.ndarray or x.dtype != np.float64 or x.size < MIN_SIZE:
        return np.tanh(x, *args, **kwargs)
    return _kernels.fused("tanh_into", x)[1]


def numpy_tanh_is_vectorised():
    """Does numpy's float64 ``tanh`` run on SIMD here?  numpy 2 dispatches its vectorised float64 ``tanh`` on
    AVX-512 (``AVX512_SKX``); below that it loops over the C library's ``tanh``."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # numpy 1
        from numpy.core._multiarray_umath import __cpu_features__
    return bool(__cpu_features__.get("AVX512_SKX"))
