"""Recording, unrolled: one traced first argument (``sin(x)``, ``x * 0.5``) and plain positional arguments.

Fills the slot ``record`` of the hook table (``autodiff/_hooks.py``); the reference is
``autodiff._primitive._record``, which this calls for everything else (keyword arguments, nested arrays,
residual forwards).  Off under ``AUTODIFF_REFERENCE=1``.

>>> import autodiff
>>> autodiff.grad(lambda x: x * 0.5)(2.0)
0.5
"""

import numpy as np

from .._checks import leaked
from .._primitive import _forwards, _record
from .._primitive import kept as _kept
from .._protection import protect, protect_inside
from .._residuals import SMALL
from .._traced import Traced

_SCALARS = (float, int)


def record_fast(prim, tape, args, kwargs):
    """``_record``, inline for plain positional arguments; keyword arguments, nested arrays and residual
    forwards go to the reference."""
    if not tape.active or prim in _forwards:
        return _record(prim, tape, args, kwargs)
    first = args[0]
    if type(first) is Traced and first.tape is tape and (
            len(args) == 1 or (len(args) == 2 and type(args[1]) in _SCALARS)):  # sin(x), x * 0.5
        return _record_one(prim, tape, first, args, kwargs)
    unwrapped = None if kwargs else _unwrap(prim, tape, args)
    if unwrapped is None:
        return _record(prim, tape, args, kwargs)
    argvals, parents, argnums, lower, constants = unwrapped
    return _append(prim, tape, argvals, parents, argnums, lower, constants, kwargs)


def _record_one(prim, tape, first, args, kwargs):
    """One traced argument, first, and perhaps a Python number.  An entry whose two arrays are both small keeps
    them whole without asking the plan (``_residuals.SMALL``: the plan would keep them whole too)."""
    if kwargs:
        protect_inside(tape, kwargs)
    x = first.value
    argvals = (x,) + args[1:]
    ans = prim(*argvals, **kwargs) if type(x) is Traced else prim.fun(*argvals, **kwargs)
    kept_ans, kept_args = ans, argvals
    if not (type(ans) is np.ndarray and ans.nbytes <= SMALL and type(x) is np.ndarray and x.nbytes <= SMALL):
        kept_ans, kept_args = _kept(prim, tape, (0,), ans, argvals)
    entries = tape.entries
    entries.append((prim, (first.index,), (0,), kept_ans, kept_args, kwargs))
    return Traced(ans, tape, len(entries) - 1, tape.level)


def _append(prim, tape, argvals, parents, argnums, lower, constants, kwargs):
    """Run the call and append its entry, keeping what the pullbacks read (``_primitive.kept``)."""
    ans = prim(*argvals, **kwargs) if lower else prim.fun(*argvals, **kwargs)
    kept_ans, kept_args = _kept(prim, tape, argnums, ans, argvals)
    if constants:
        _protect_constants(tape, kept_args, argnums)
    entries = tape.entries
    entries.append((prim, parents, argnums, kept_ans, kept_args, kwargs))
    return Traced(ans, tape, len(entries) - 1, tape.level)


def _protect_constants(tape, kept_args, argnums):
    """Protect the constant arrays the entry keeps: the pullbacks read them, so no in-place changes until done."""
    protected = tape.protected
    for i, a in enumerate(kept_args):
        if type(a) is np.ndarray and i not in argnums and id(a) not in protected:
            protect(tape, a)


def _unwrap(prim, tape, args):
    """``_primitive._unwrap``, whether lower levels remain and whether a constant is an array; ``None`` for an
    argument it leaves to the reference."""
    argvals, parents, argnums, level, lower, constants = list(args), [], [], tape.level, False, False
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
        elif kind is np.ndarray:
            constants = True
        elif kind not in _SCALARS:  # nested arrays, subclasses, anything else: the reference
            return None
    return argvals, parents, argnums, lower, constants
