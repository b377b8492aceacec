"""real, imag and conj.

For real inputs they are the identity, zero and the identity.  For complex
inputs the cotangents follow JAX's convention: ``real`` passes ``g`` back as a
complex cotangent, ``imag`` passes ``-1j * g``, ``conj`` conjugates.  All three are R-linear, so
each pushes a tangent forward through itself (a real input's ``imag`` is a constant zero).
"""

import numpy as np

from ..extend import ZeroTangent, defbatch, defjvp, deflinear, defvjp, primitive
from ._batch_helpers import elementwise
from ._broadcast import cast, dtype_of
from ._elementwise import multiply


def real_dtype(x):
    """The dtype of a reduction of ``x``: its own if float, float32 for complex64 (as ``abs``), else float64."""
    dtype = np.result_type(x)
    if dtype.kind == "c":
        return np.finfo(dtype).dtype
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _as_input(g, x):
    return g if dtype_of(g) == dtype_of(x) else cast(g, dtype_of(x))


real = primitive(np.real, "real")
defvjp(real, lambda g, ans, x: _as_input(g, x))
deflinear(real)
defbatch(real, elementwise(real))

imag = primitive(np.imag, "imag")
defvjp(imag, lambda g, ans, x: _as_input(multiply(g, -1j), x) if dtype_of(x).kind == "c" else ZeroTangent())
defjvp(imag, lambda t, ans, x: imag(t) if dtype_of(x).kind == "c" else ZeroTangent())
defbatch(imag, elementwise(imag))

conj = primitive(np.conj, "conj")
conjugate = conj
defvjp(conj, lambda g, ans, x: conj(g))
deflinear(conj)
defbatch(conj, elementwise(conj))
