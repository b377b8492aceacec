"""autodiff.scipy differentiates real inputs only: a complex argument is refused, naming the function.

scipy's own forwards accept complex input for some functions (``erf``, ``expm``, ``convolve``), but the
rules here are derivatives along the real line, and ``correlate`` would conjugate where ours does not;
a clear error beats a number in the wrong convention.
"""

import numpy as np

from ._plain import plain


def _is_complex(x):
    x = plain(x)
    if isinstance(x, np.ndarray | np.generic):
        return x.dtype.kind == "c"
    return isinstance(x, complex)


def refuse_complex(name, *values):
    """Raise ``TypeError`` naming ``name`` if any of ``values`` (plain or traced) is complex.

    >>> refuse_complex("autodiff.scipy.special.erf", 1.0 + 2.0j)
    Traceback (most recent call last):
    ...
    TypeError: autodiff.scipy.special.erf: got a complex input (complex128); autodiff.scipy differentiates real \
inputs only. Pass real arrays (for values without gradients, call scipy on plain arrays)
    """
    for v in values:
        if _is_complex(v):
            raise TypeError(
                f"{name}: got a complex input ({np.result_type(plain(v))}); autodiff.scipy differentiates real "
                "inputs only. Pass real arrays (for values without gradients, call scipy on plain arrays)"
            )
