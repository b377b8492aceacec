"""Recording, unrolled for the common case: only the first argument is traced (``sin(x)``, ``x * 0.5``).

Plugs in as ``autodiff._primitive.record``; the reference is ``autodiff._primitive._record``, which
this calls for everything else (off under ``AUTODIFF_REFERENCE=1``).

>>> import autodiff
>>> autodiff.grad(lambda x: x * 0.5)(2.0)
0.5
"""

from .. import _primitive
from .._primitive import _forwards, _leaked, _record
from .._traced import Traced, protect_inside
from . import REFERENCE

_SCALARS = (float, int)


def record_first(prim, tape, args, kwargs):
    """``_record``, with one traced first argument (and at most a scalar beside it) done inline."""
    first = args[0]
    plain_rest = len(args) == 1 or (len(args) == 2 and type(args[1]) in _SCALARS)
    if type(first) is not Traced or not plain_rest or not tape.active or prim in _forwards:
        return _record(prim, tape, args, kwargs)
    if first.tape is not tape:
        raise _leaked(prim, first.tape)
    v = first.value
    argvals = (v,) + args[1:]
    if kwargs:
        protect_inside(tape, kwargs)
    ans = prim(*argvals, **kwargs) if type(v) is Traced else prim.fun(*argvals, **kwargs)
    entries = tape.entries
    entries.append((prim, (first.index,), (0,), ans, argvals, kwargs))
    return Traced(ans, tape, len(entries) - 1, tape.level)


def install():
    """Plug the unrolled case in (nothing under ``AUTODIFF_REFERENCE=1``)."""
    if not REFERENCE:
        _primitive.record = record_first
