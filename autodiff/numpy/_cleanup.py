"""Value clean-up: ``nan_to_num`` replaces non-finite values, ``real_if_close`` drops a
negligible imaginary part.

Both keep the finite values they pass through, so the gradient flows through
those and is zero at the replaced ones (replacements are constants).
"""

import numpy as np

from ..extend import Traced, plain_value, value_of
from ._arraylike import as_array
from ._broadcast import dtype_of
from ._complex import imag, real
from ._elementwise import add, multiply, where


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (numpy's defaults:
    0 and the dtype's largest finite values); the real and imaginary parts of complex ``x`` separately.

    >>> import autodiff, numpy as np
    >>> autodiff.grad(lambda x: nan_to_num(x).sum())(np.array([2.0, np.inf]))
    array([1., 0.])
    """
    if type(x) is not Traced:
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    if dtype_of(x).kind == "c":
        parts = [nan_to_num(part, nan=nan, posinf=posinf, neginf=neginf) for part in (real(x), imag(x))]
        return add(parts[0], multiply(parts[1], 1j))
    v, dtype = value_of(x), dtype_of(x)  # the replacements chosen by masks: per example under vmap, per call under jit
    big = np.asarray(np.finfo(dtype).max if posinf is None else posinf, dtype)
    small = np.asarray(np.finfo(dtype).min if neginf is None else neginf, dtype)
    fixed = where(np.isnan(v), np.asarray(nan, dtype), where(v > 0, big, small))
    return where(np.isfinite(v), x, fixed)


def real_if_close(a, tol=100):
    """The real part of complex ``a`` if every imaginary part is below ``tol`` (in machine epsilons
    when ``tol > 1``), else ``a`` unchanged; real ``a`` is returned as it is.

    >>> import numpy as np
    >>> real_if_close(np.array([2.0 + 1e-15j]))
    array([2.])
    """
    a = as_array(a)
    if dtype_of(a).kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(dtype_of(a)).eps * tol
    return real(a) if np.all(np.abs(np.imag(plain_value(a))) < tol) else a  # one dtype for every example
