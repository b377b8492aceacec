"""``autodiff.jit``: trace a function once per signature into a program, then replay the program.

The first call with a signature (:mod:`.signature`) traces ``f`` on a staging level (:mod:`.staging`): the
arguments' arrays become the program's inputs, every primitive call an equation.  The passes run (:mod:`.passes`)
and the program is kept; later calls with that signature run it (``program.run``: the interpreter :mod:`.replay`,
or the call-site pass's generated function).  A trace that saw data it must not see keeps no program: when
library code read a staged value's data (a rule's fast path) or the function closed over a value an outer
transform is tracing, that signature runs ``f`` itself on every call (correct, not faster), with one warning saying why.
A call some of whose inputs an outer transform traces (``grad(jit(f))``) is one primitive to it (:mod:`.as_primitive`).
"""

import functools
import warnings
import weakref
from typing import NamedTuple

import numpy as np

from .._hooks import hooks
from .._protection import let_go, protect
from .._traced import Traced
from .._trees import walk_flatten
from .arguments import normalised
from .as_primitive import CallSite, example_inputs
from .passes import PASSES
from .passes.purity import pure
from .replay import ShapeChanged
from .signature import read_signature
from .staging import open_staging, staging_now


class JitFallbackWarning(UserWarning):
    """A signature of a jitted function runs without jit (its trace read data, or met an outer transform's
    value); :meth:`Jitted.cache_info` lists why."""


JitFallbackWarning.__module__ = "autodiff"  # where a user filters it


class CacheInfo(NamedTuple):
    traces: int  # calls that traced (a new signature, or a lower())
    hits: int  # calls that replayed a program
    eager_calls: int  # calls that ran the function itself, for a signature kept without a program
    signatures: int  # signatures seen: programs plus fallbacks
    fallbacks: tuple  # why each signature without a program has none


class _Eager:
    """A signature that runs the function itself, and why."""

    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


class _Captured:
    """The arrays cached programs take as constants, held read-only until the cache is cleared (a tape's
    ``protected``, for :func:`autodiff._protection.protect`)."""

    __slots__ = ("protected",)

    def __init__(self):
        self.protected = {}

    def release(self):
        if self.protected:
            let_go(list(self.protected.values()))
            self.protected.clear()


def jit(fun, static_argnums=(), static_argnames=(), passes=tuple(PASSES)):
    """``fun``, traced once per signature into a program that later calls with that signature replay.

    A signature is the arguments' tree structure, ties, shapes and dtypes, and the values of static arguments
    (``static_argnums``, ``static_argnames``) and of every leaf that is not an array (Python numbers included).
    Python control flow on a traced value raises :class:`ConcretizationError`; on shapes it works.  ``passes``
    names the passes to run (``()`` for none).  ``docs/jit.md`` tells the whole model.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> f = autodiff.jit(lambda x: anp.sum(anp.sin(x) ** 2))
    >>> bool(np.isclose(f(np.ones(3)), 3 * np.sin(1.0) ** 2)), f(np.zeros(3))
    (True, np.float64(0.0))
    >>> f.cache_info()
    CacheInfo(traces=1, hits=1, eager_calls=0, signatures=1, fallbacks=())
    """
    return Jitted(fun, static_argnums, static_argnames, passes)


class Jitted:
    """A jitted function: call it, :meth:`lower` it to its program, read :meth:`cache_info`, :meth:`clear_cache`."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), passes=tuple(PASSES)):
        self.static_argnums, self.static_argnames, passes = normalised(fun, static_argnums, static_argnames, passes)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.passes = tuple(name for name in PASSES if name in passes)  # PASSES' order: callsite comes last
        self._name = getattr(fun, "__name__", "f")
        self._cache, self._captured = {}, _Captured()
        self._sites = {}  # plain signature key -> the CallSite standing for calls an outer transform traces
        self._traces = self._hits = self._eager_calls = 0
        weakref.finalize(self, self._captured.release)

    def __call__(self, *args, **kwargs):
        if staging_now() is not None:  # inside another jit's trace: that program records this call's ops
            return self.fun(*args, **kwargs)
        sig = read_signature(self._name, args, kwargs, self.static_argnums, self.static_argnames)
        if Traced in map(type, sig.distinct):  # an outer transform's value: the call is one primitive to it
            return self._as_primitive(sig, args, kwargs)
        entry = self._cache.get(sig.key)
        if entry is None:
            return self._trace(sig)[0]
        if type(entry) is _Eager:
            self._eager_calls += 1
            return self.fun(*args, **kwargs)
        return self._run(entry, sig, args, kwargs)

    def __get__(self, obj, objtype=None):
        """A jitted method: the object is an argument, static by equality (its hash)."""
        return self if obj is None else functools.partial(self, obj)

    def lower(self, *args, **kwargs):
        """The program for this call's signature (traced now unless cached); ``print`` it for its listing."""
        sig = read_signature(self._name, args, kwargs, self.static_argnums, self.static_argnames)
        entry = self._cache.get(sig.key)
        if entry is None:
            entry = self._trace(sig)[1]
        if type(entry) is _Eager:
            raise ValueError(f"jit({self._name}): this signature has no program: {entry.reason}")
        return entry

    def cache_info(self):
        """Traces, hits, calls run without a program, signatures seen and why some have no program."""
        fallbacks = tuple(e.reason for e in self._cache.values() if type(e) is _Eager)
        return CacheInfo(self._traces, self._hits, self._eager_calls, len(self._cache), fallbacks)

    def clear_cache(self):
        """Forget every program (and let go of the arrays they captured, writable again) and the counts."""
        self._cache.clear()
        self._sites.clear()
        self._captured.release()
        self._traces = self._hits = self._eager_calls = 0

    def _as_primitive(self, sig, args, kwargs):
        """The call, some of whose inputs an outer transform traces, as one primitive to it (:mod:`.as_primitive`);
        a signature kept without a program runs the function itself, as for a plain call."""
        plain = read_signature(self._name, *sig.rebuild(example_inputs(sig.distinct)), self.static_argnums,
                               self.static_argnames)
        entry = self._cache.get(plain.key)
        if entry is None:
            entry = self._trace(plain)[1]
        if type(entry) is _Eager:
            self._eager_calls += 1
            return self.fun(*args, **kwargs)
        if not all(map(pure, entry.equations)):  # a pullback recomputing a draw would draw other numbers
            return self._run(entry, plain, args, kwargs, sig.distinct)
        site = self._sites.get(plain.key)
        if site is None:
            site = self._sites[plain.key] = CallSite(self, plain, entry)
        return site(sig.distinct)

    def _run(self, program, sig, args, kwargs, inputs=None):
        """``program`` (``sig``'s) on ``inputs`` (``sig``'s own by default; traced ones go through the
        primitives, so the outer transforms record, batch or push each); the function itself when a value's
        shape is not the traced one."""
        try:
            leaves = program.run(sig.distinct if inputs is None else inputs)
        except ShapeChanged as changed:  # Python may have read that shape while tracing: no program for it
            self._fall_back(sig, f"{changed}, and the function may have read it while tracing", 3)
            self._eager_calls += 1
            return self.fun(*args, **kwargs)
        self._hits += 1
        return program.out_tree.unflatten(_fresh(program, leaves))

    def _trace(self, sig):
        """Trace ``fun`` for ``sig``: ``(its result, the cache entry made)``."""
        self._traces += 1
        with open_staging() as staging:
            args, kwargs = sig.rebuild([staging.input(v) for v in sig.distinct])
            out = self.fun(*args, **kwargs)
            leaves, out_tree = walk_flatten(out)
            outputs = [staging.output(leaf) for leaf in leaves]
        result = out_tree.unflatten([leaf.value if type(leaf) is Traced and leaf.tape is staging else leaf
                                     for leaf in leaves])
        reason = _why_no_program(staging)
        if reason is not None:
            entry = self._fall_back(sig, reason, 3)
            if staging.opaque:  # the result may hold staged values inside those objects: run the function itself
                args, kwargs = sig.rebuild(sig.distinct)
                result = self.fun(*args, **kwargs)
            return result, entry
        program = staging.program(self._name, outputs, hooks.rebuilder(out_tree))  # it rebuilds on every call
        for name in self.passes:
            program = PASSES[name](program)
        for array in program.captured:
            protect(self._captured, array)
        self._cache[sig.key] = program
        return result, program


    def _fall_back(self, sig, reason, depth):
        """Keep no program for ``sig`` (that signature runs the function itself), saying why once."""
        entry = self._cache[sig.key] = _Eager(reason)
        warnings.warn(f"jit({self._name}): this signature runs without jit: {reason}", JitFallbackWarning,
                      stacklevel=depth + 1)
        return entry


def _why_no_program(staging):
    """Why a trace keeps no program (``None`` when it may)."""
    if staging.reads:
        return (f"its trace read a traced value's data ({staging.reads[0]}), so the program would bake in the "
                "branch this call took; write the code branch-free (anp.where) to let it compile")
    if staging.opaque:
        return (f"an output leaf is a {staging.opaque[0]}, an object jit cannot see inside (it may hold traced "
                "values); return arrays in containers, or register its type with autodiff.extend.register_container")
    if staging.outer:
        return (f"the function closes over a value an outer transform is tracing (it reached "
                f"{staging.outer[0]}); pass that value as an argument to let it compile")
    return None


def _fresh(program, leaves):
    """The output leaves, a constant array copied (a caller changing it must not change the next call's)."""
    for i in program.constant_outputs:
        if type(leaves[i]) is np.ndarray:
            leaves[i] = leaves[i].copy()
    return leaves
