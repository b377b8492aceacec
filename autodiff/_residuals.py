"""What a tape entry keeps: the values its pullbacks read, and a shape-and-dtype stand-in for the rest.

A rule's pullbacks say what they read.  By default it is read off their code: a pullback
``lambda g, ans, x: negative(g)`` names neither ``ans`` nor ``x``, so an entry of ``negative`` keeps
neither.  A pullback that reads an argument only for its shape and dtype (``unbroadcast(g, x)``) declares
what it reads in full with ``reads=`` (``defvjp(add, ..., reads=("", ""))``,
``defvjp(multiply, ..., reads=("y", "x"))``); each value it does not read in full is kept as a
:class:`Like`, which ``shape_of`` and ``dtype_of`` read as they read the value.  An output or argument
not kept goes when the forward no longer holds it: ``x + 1.0`` chained a hundred times keeps no array.

One exception: an array of the tape's own (the output, or a traced argument's value) of at most ``SMALL`` bytes
is kept whole.  Its stand-in would free less memory than the entry's own bookkeeping takes, and making it
costs more than the rest of recording a small op.  Constants follow the reads exactly, so a constant no
pullback reads is never protected from in-place changes.

>>> import numpy as np
>>> plan = Plan([lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x], None, 1)
>>> ans, args = plan.keep((0,), np.ones(100), [np.ones(100), np.full(3, 2.0)])
>>> ans, args[0], args[1]
(Like((100,), float64), Like((100,), float64), array([2., 2., 2.]))
>>> ans, args = plan.keep((0,), np.ones(3), [np.ones(3), np.full(3, 2.0)])  # 24 bytes each: kept whole
>>> type(ans).__name__, type(args[0]).__name__
('ndarray', 'ndarray')
"""

import dis
import functools
import types

import numpy as np

from ._traced import Traced


class Like:
    """A value a pullback reads only for its shape and dtype (one example's shape under ``vmap``)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"Like({self.shape}, {self.dtype})"


like = functools.lru_cache(maxsize=1024)(Like)  # stand-ins never change, so equal ones are shared


def stand_in(value):
    """``value`` as a :class:`Like` when it is an array or a traced value; small values stay as they are."""
    kind = type(value)
    if kind is np.ndarray:
        return like(value.shape, value.dtype)
    if kind is not Traced:
        return value
    from ._batching import example_shape  # _batching imports the tape's modules

    inner = value
    while type(inner) is Traced:
        inner = inner.value
    if type(inner) is np.ndarray:
        return like(example_shape(value), inner.dtype)
    return value  # a traced scalar or tuple: small, kept


SMALL = 512  # bytes: an array of the tape's own this small is kept whole (an entry's bookkeeping takes about as much)
_ALL = None  # every argument read in full
_KEPT_KINDS = frozenset((float, int, bool, type(None), str))  # kept as they are


class Plan:
    """What one rule's pullbacks read: per pullback (or one for a joint rule), whether it reads ``ans`` and
    which argument positions it reads in full; cached per tuple of traced argument numbers."""

    __slots__ = ("reads", "joint", "cache", "arity")

    def __init__(self, pullbacks, declared, skip, joint=False):
        pullbacks = [pullbacks] if joint else list(pullbacks)
        declared = [declared] if joint and declared is not None else declared
        if declared is not None and (isinstance(declared, str) or len(declared) != len(pullbacks)):
            raise ValueError(
                f"reads= gives {1 if isinstance(declared, str) else len(declared)} declaration(s) for "
                f"{len(pullbacks)} pullback(s); give one string per pullback, naming what it reads in full "
                f"(\"\" for nothing), as reads=(\"y\", \"x\")")
        self.reads = [_reads(p, None if declared is None else declared[k], skip) for k, p in enumerate(pullbacks)]
        self.joint, self.cache = joint, {}
        self.arity = max([_arity(p, skip) for p in pullbacks], default=0)  # positions a stand-in may replace

    def keep(self, argnums, ans, args):
        """``(ans, args)`` as the entry keeps them: values not read in full become stand-ins (``args``, a list
        the caller made, is changed in place)."""
        found = self.cache.get(argnums if type(argnums) is tuple else tuple(argnums))
        if found is None:
            key = tuple(argnums)
            found = self.cache[key] = self._union(key)
        keeps_ans, dropped = found
        if not keeps_ans and not (type(ans) is np.ndarray and ans.nbytes <= SMALL):
            ans = stand_in(ans)
        if dropped:
            args = list(args) if type(args) is tuple else args
            _stand_ins(args, dropped, argnums)
        return ans, args

    def _union(self, argnums):
        """Whether any pullback that runs for ``argnums`` reads ``ans``, and the positions none reads in full."""
        picked = self.reads if self.joint else [self.reads[k] for k in argnums if k < len(self.reads)]
        keeps_ans = any(reads_ans for reads_ans, _ in picked)
        if any(positions is _ALL for _, positions in picked):
            return keeps_ans, ()
        full = set().union(*[positions for _, positions in picked])
        return keeps_ans, tuple(i for i in range(self.arity) if i not in full)


def _stand_ins(args, dropped, argnums):
    """Put stand-ins in the list ``args`` at the ``dropped`` positions, but for small arrays the tape traces (a
    constant follows the reads exactly: what an entry keeps of it, protection holds)."""
    for i in dropped:
        a = args[i] if i < len(args) else None
        if type(a) is np.ndarray:
            if a.nbytes > SMALL or i not in argnums:
                args[i] = like(a.shape, a.dtype)
        elif type(a) not in _KEPT_KINDS:
            args[i] = stand_in(a)


def _reads(pullback, declared, skip):
    """``(reads ans?, positions read in full or _ALL)`` of one pullback ``(g, [residuals,] ans, *args)``; ``skip``
    is the number of parameters before ``ans``.  ``declared`` names what it reads in full (a string of names)."""
    if pullback is None:
        return False, frozenset()
    code = getattr(pullback, "__code__", None)
    if type(pullback) is not types.FunctionType or code is None:
        return True, _ALL  # a callable we cannot read: it may read anything
    names = list(code.co_varnames[:code.co_argcount])
    star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] if code.co_flags & 0x04 else None
    used = _names_used(code) if declared is None else _declared(pullback, declared, names[skip:], star)
    if declared is None and ("locals" in used or "vars" in used):
        return True, _ALL
    return _positions(names[skip:], star, used)


def _positions(names, star, used):
    """``(reads ans?, positions read in full or _ALL)`` from the names a pullback uses; ``names`` from ``ans`` on."""
    reads_ans = bool(names) and names[0] in used
    if star is not None and star in used:
        return reads_ans, _ALL
    return reads_ans, frozenset(i for i, n in enumerate(names[1:]) if n in used)


def _declared(pullback, declared, names, star):
    """The names ``reads=`` gives for ``pullback``, each one of its parameters from ``ans`` on."""
    used = set(declared.replace(",", " ").split())
    unknown = used - set(names) - {star}
    if unknown:
        raise ValueError(
            f"reads= names {', '.join(sorted(unknown))}, which the pullback {pullback.__qualname__} does not "
            f"take; name its parameters from ans on ({', '.join(names)})")
    return used


def _arity(pullback, skip):
    """How many positional arguments ``pullback`` names after ``ans`` (64 when it takes ``*args``)."""
    code = getattr(pullback, "__code__", None)
    if code is None:
        return 0
    return 64 if code.co_flags & 0x04 else max(code.co_argcount - skip - 1, 0)


def _names_used(code):
    """Every name any instruction of ``code`` (or of code nested in it) refers to: a superset of what it loads."""
    used, stack = set(), [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if type(ins.argval) is str:
                used.add(ins.argval)
        used.update(c.co_cellvars)
        stack.extend(k for k in c.co_consts if type(k) is types.CodeType)
    return used
