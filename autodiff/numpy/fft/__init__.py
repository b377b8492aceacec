"""``autodiff.numpy.fft``: numpy's discrete Fourier transforms, differentiable (``anp.fft.fft(x)``).

Every function takes numpy's arguments (``n``, ``axis``, ``s``, ``axes``, ``norm``)
and returns numpy's values and dtypes (float32 gives complex64).  Four one-axis
primitives (``fft``, ``ifft``, ``rfft``, ``irfft``, in ``_transforms``) carry the
rules: a pullback through the transform's transpose, a pushforward through the
transform itself, and a batching rule for ``vmap``; everything else is built from
them, so derivatives of any order work, for real and complex inputs (JAX's
convention for complex numbers, ``docs/complex.md``).  ``numpy.fft``'s functions
called on a traced value come here.  ``fftfreq`` and ``rfftfreq`` are numpy's own:
sample frequencies, constants.  See ``docs/fft.md``.

>>> import numpy as np
>>> import autodiff
>>> import autodiff.numpy as anp
>>> x = np.array([1.0, 2.0, 3.0, 4.0])
>>> autodiff.grad(lambda x: anp.sum(anp.abs(anp.fft.fft(x)) ** 2))(x)  # Parseval: |fft(x)|^2 sums to 4 |x|^2
array([ 8., 16., 24., 32.])
"""

import numpy as np
from numpy.fft import fftfreq, rfftfreq

from .. import _interop
from ._n_axes import fft2, fftn, ifft2, ifftn, irfft2, irfftn, rfft2, rfftn
from ._one_axis import fft, hfft, ifft, ihfft, irfft, rfft
from ._shifts import fftshift, ifftshift

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2",
    "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq",
]

_interop.register_routes({name: globals()[name] for name in __all__}, np.fft)
