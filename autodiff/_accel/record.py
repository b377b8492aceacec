"""Recording, unrolled: one traced first argument (``sin(x)``, ``x * 0.5``) and plain positional arguments.

Plugs in as ``autodiff._primitive.record``; the reference is ``autodiff._primitive._record``, which
this calls for everything else (keyword arguments, nested arrays, residual forwards).  Off under
``AUTODIFF_REFERENCE=1``.

>>> import autodiff
>>> autodiff.grad(lambda x: x * 0.5)(2.0)
0.5
"""

import numpy as np

from .. import _primitive
from .._checks import leaked
from .._primitive import _forwards, _record
from .._protection import protect, protect_inside
from .._traced import Traced
from . import enabled

_SCALARS = (float, int)


def record_fast(prim, tape, args, kwargs):
    """``_record``, inline for plain positional arguments; keyword arguments, nested arrays and residual
    forwards go to the reference."""
    if not tape.active or prim in _forwards:
        return _record(prim, tape, args, kwargs)
    first = args[0]
    if type(first) is Traced and first.tape is tape and (
            len(args) == 1 or (len(args) == 2 and type(args[1]) in _SCALARS)):  # sin(x), x * 0.5
        argvals, parents, argnums, lower = (first.value,) + args[1:], (first.index,), (0,), type(first.value) is Traced
        if kwargs:
            protect_inside(tape, kwargs)
    else:
        unwrapped = None if kwargs else _unwrap(prim, tape, args)
        if unwrapped is None:
            return _record(prim, tape, args, kwargs)
        argvals, parents, argnums, lower = unwrapped
    ans = prim(*argvals, **kwargs) if lower else prim.fun(*argvals, **kwargs)
    entries = tape.entries
    entries.append((prim, parents, argnums, ans, argvals, kwargs))
    return Traced(ans, tape, len(entries) - 1, tape.level)


def _unwrap(prim, tape, args):
    """``_primitive._unwrap`` and whether lower levels remain, or ``None`` for an argument it leaves to it."""
    argvals, parents, argnums, protected, level, lower = list(args), [], [], tape.protected, tape.level, False
    for i, a in enumerate(args):
        kind = type(a)
        if kind is Traced:
            if a.level != level:
                lower = True
                continue
            if a.tape is not tape:
                raise leaked(prim, a.tape)
            parents.append(a.index)
            argnums.append(i)
            argvals[i] = a = a.value
            lower = lower or type(a) is Traced
        elif kind is np.ndarray:  # a constant the pullback may read: no in-place changes until done
            if id(a) not in protected:
                protect(tape, a)
        elif kind not in _SCALARS:  # nested arrays, subclasses, anything else: the reference
            return None
    return argvals, parents, argnums, lower


def install():
    """Plug the unrolled case in (nothing under ``AUTODIFF_REFERENCE=1``)."""
    if enabled("record"):
        _primitive.record = record_fast
