"""A jitted call an outer transform traces, as one primitive whose rules are jitted functions too (issue 42).

``grad(jit(f))``, ``vmap(jit(f))`` and ``jvp(jit(f), ...)`` call the jitted function with values an outer
transform is tracing.  Replaying the program equation by equation through the primitives would let that
transform record, batch or push every one of them, as slowly as eager code.  Instead the call is one call of
the primitive :data:`jit_call`, given the call's distinct input arrays and, as the keyword ``site``, the
:class:`CallSite` of its jitted function and signature.  The site's flat function takes those arrays and returns
the tuple of the output leaves the program computes, by calling the jitted function itself on plain arrays (its
signature, cache and program, as any plain call).  Its rules are jitted functions of that flat function, so
each is compiled, and called with traced values at the next order each is a ``jit_call`` in turn:

- on a reverse tape (``grad``) the call's forward and pullback are the two halves of one program: the flat
  function's ``vjp`` applied to the cotangents, traced once and :func:`~autodiff._jit.split.split` where the
  cotangents come in.  The forward runs the *early* half, ``jit`` of a function giving the output leaves and the
  **residuals** (the forward's values the pullback reads), which the tape keeps beside the entry; the pullback
  runs the *late* half, ``jit`` of a function of the residuals and the cotangents, one per set of traced inputs,
  giving the traced inputs' cotangents at once (``None`` for an integer input, which has none), never a constant
  input's.  So the pullback recomputes nothing.  When the ``vjp`` has no program (a rule reads data), the forward
  keeps the inputs and the pullback is the ``vjp`` of the Python function itself, recomputing the forward
  primitive by primitive, as ``remat`` would;
- the pushforward (joint) is ``jit`` of the flat function's ``jvp``;
- the batching rule is ``jit(vmap(flat function, in_axes))``, one per pattern of batched inputs.

An output leaf the program does not compute (``None``, a Python number, a constant array) comes back as it is;
the others are the parts of the primitive's tuple, read with ``tuple_item``.

One primitive serves every site, the site riding along as an argument (as ``remat_call`` carries its function):
the rule registries hold a primitive for ever, so a primitive per site would hold its jitted function, its
programs and the arrays they keep read-only for as long as the process runs.  A site lives while its jitted
function or a tape entry of its call does.
"""

import weakref

import numpy as np

from .. import _ops
from .._batching import batch_depth
from .._calls import on_arguments
from .._primitive import ResidualRule, ToldForward, _forwards, _plans, _rules
from .._protection import protect
from .._residuals import stand_in
from .._tangents import ZeroTangent, is_inexact, unthunk
from .._traced import Traced
from .._traced import value_of as strip_all
from .._trees import walk_flatten
from ..extend import defbatch, defjvp_joint, primitive, value_of
from ..numpy._broadcast import dtype_of
from .passes import PASSES
from .program import Var
from .replay import ShapeChanged, replay
from .signature import Signature
from .split import split

_NO_SPLIT = "no split"  # a site whose vjp has no program: its pullback is the function's own, recomputing it


def example_inputs(distinct):
    """One plain example of each input, for the signature of the plain call the primitive makes: a traced
    value's innermost array without the batch axes of the ``vmap`` levels around it (its first example, so
    that a trace on it meets real values), a fresh view of a plain array (fresh, so that two inputs stay two).

    >>> import numpy as np, autodiff
    >>> shapes = []
    >>> _ = autodiff.vmap(lambda x: shapes.append(example_inputs([x])[0].shape) or x)(np.ones((4, 3)))
    >>> shapes, example_inputs([np.ones(2)])[0].shape
    ([(3,)], (2,))
    """
    return [_example(np.asarray(strip_all(x)), batch_depth(x)) for x in distinct]


def _example(inner, depth):
    if 0 in inner.shape[:depth]:  # an empty batch has no first example: zeros of one example's shape
        return np.zeros(inner.shape[depth:], inner.dtype)
    return inner[(0,) * depth + (Ellipsis,)]


class CallSite:
    """Calls of ``jitted`` with one signature (``plain``, read from examples) as :data:`jit_call`s, and the
    rules of those calls; ``program`` is that signature's, which says which output leaves it computes.

    >>> import numpy as np, autodiff, autodiff.numpy as anp
    >>> f = autodiff.jit(lambda x: {"y": anp.sum(anp.sin(x) ** 2), "n": None})
    >>> autodiff.grad(lambda x: f(x)["y"])(np.zeros(2)), f.cache_info().traces
    (array([0., 0.]), 1)
    >>> autodiff.vmap(lambda x: f(x)["y"])(np.zeros((3, 2)))
    array([0., 0., 0.])
    """

    def __init__(self, jitted, plain, program):
        self.jitted, self.out_tree, name = jitted, program.out_tree, jitted._name
        statics = [leaf if k is None else None for leaf, k in zip(plain.leaves, plain.slots)]
        self.template = Signature(plain.key, statics, plain.treedef, (), plain.slots, plain.statics)  # no array held
        self.computed = [k for k, out in enumerate(program.outputs) if type(out) is Var]
        self.constants = program.outputs
        self.out_avals = [program.avals[out.ref] for out in program.outputs if type(out) is Var]
        self.halves = {}  # traced input positions -> their _Halves, or _NO_SPLIT
        self.push = _jit(f"jvp_of_{name}", lambda xs, ts: _jvp(self.flat, xs, ts))
        self.batched = {}  # in_axes -> jit(vmap(flat, in_axes))

    def __call__(self, distinct):
        """The call's output tree, for its inputs ``distinct`` (some traced by outer transforms)."""
        leaves = [leaf.copy() if type(leaf) is np.ndarray else leaf for leaf in self.constants]  # the caller's own
        if self.computed:
            result = jit_call(*distinct, site=self)
            for part, k in enumerate(self.computed):
                leaves[k] = _ops.tuple_item(result, part)
        return self.out_tree.unflatten(leaves)

    def flat(self, *inputs):
        """The leaves the program computes, as a tuple, by the jitted function itself on these inputs."""
        return self._leaves(self.jitted, inputs)

    def eager(self, *inputs):
        """:meth:`flat` by the Python function, not the jitted one: what a pullback with no program records (the
        jitted function, given traced values, would be this primitive again, whose pullback would call it)."""
        return self._leaves(self.jitted.fun, inputs)

    def _leaves(self, fun, inputs):
        args, kwargs = self.template.rebuild([x if type(x) in _ARRAYS else np.asarray(x) for x in inputs])
        leaves = walk_flatten(fun(*args, **kwargs))[0]
        return tuple(leaves[k] for k in self.computed)

    def forward(self, argnums, inputs):
        """``(the output leaves, the residuals)`` on a reverse tape tracing the inputs at ``argnums``: the early
        half's values, or (no split) the leaves and the inputs themselves."""
        halves = self.halves.get(argnums) or self._split(argnums, inputs)
        if halves is not _NO_SPLIT:
            try:
                both, n = halves.early(*inputs), len(self.computed)
                return tuple(both[:n]), tuple(both[n:])
            except ShapeChanged:  # a shape that depends on the data: no split fits every call
                self.halves[argnums] = _NO_SPLIT
        return self.flat(*inputs), inputs

    def backward(self, argnums, residuals, cts):
        """The cotangents of the inputs at ``argnums`` (the traced ones) only, from the residuals: a data
        input's (a batch passed as an argument) is never computed."""
        halves = self.halves[argnums]
        if halves is _NO_SPLIT:  # the inputs were kept: the vjp of the function itself, recording its primitives
            return _vjp(self.eager, tuple(residuals), cts, argnums)
        if halves.masks:
            residuals = list(residuals)
            for i in halves.masks:  # no derivative: as eager code holds a comparison's mask
                residuals[i] = value_of(residuals[i])
        cts = [self._dense(c, aval) for c, aval in zip(cts, self.out_avals) if c is not None]
        try:
            return halves.late(*residuals, *cts)
        except ShapeChanged as changed:
            raise NotImplementedError(
                f"grad of jit({self.jitted._name}): its pullback made a value whose shape depends on the data "
                f"({changed}); put jit outside the transform, jit(grad(f)), or call grad(f) without jit") from None

    def _split(self, argnums, inputs):
        """Trace the ``vjp`` for the inputs at ``argnums`` applied to cotangents, on examples of ``inputs``, and
        split it where the cotangents come in (:class:`_Halves`)."""
        xs = example_inputs(inputs)
        cts = [np.zeros(a.shape, a.dtype) if is_inexact(a.dtype) else None for a in self.out_avals]
        name = self.jitted._name
        joint = _jit(f"vjp_of_{name}", lambda xs, cts: _vjp(self.flat, xs, cts, argnums, value=True), passes=())
        try:
            program = joint.lower(xs, cts)
        except ValueError:  # no program (a rule read data): the trace warned why, once
            self.halves[argnums] = _NO_SPLIT
            return _NO_SPLIT
        halves = self.halves[argnums] = _Halves(name, *split(program, len(xs), range(len(self.computed))),
                                                len(self.computed), self.jitted.passes)
        return halves

    @staticmethod
    def _dense(c, aval):
        """A cotangent as the late half's signature reads it: an array (a number would be a static value)."""
        return c if type(c) in _ARRAYS else np.asarray(c, aval.dtype)

    def batch(self, args, bdims):
        """Every example at once, by ``jit(vmap(flat, in_axes))`` with the batched inputs' axes."""
        in_axes = tuple(bdims)
        mapped = self.batched.get(in_axes)
        if mapped is None:
            from .._vmap import vmap

            mapped = self.batched[in_axes] = _jit(f"vmap_of_{self.jitted._name}", vmap(self.flat, in_axes))
        return tuple(mapped(*args)), 0


class _Halves:
    """The two halves of a jitted call's pullback program (:func:`~autodiff._jit.split.split`): ``early`` gives the
    output leaves and the residuals, ``late`` the cotangents from the residuals and the output cotangents;
    ``masks`` lists the residuals that carry no derivative (not floats: a comparison's mask)."""

    __slots__ = ("early", "late", "masks")

    def __init__(self, name, early, late, n_outputs, passes):
        self.early = _Half(f"forward_of_{name}", early, passes)
        self.late = _Half(f"pullback_of_{name}", late, passes)
        residuals = early.outputs[n_outputs:]
        self.masks = [i for i, r in enumerate(residuals)
                      if not is_inexact(early.avals[r.ref].dtype if type(r) is Var else dtype_of(r))]


class _Half:
    """One half: its ``program`` (with ``passes`` run) on plain values, and for an outer transform's values ``jit``
    of its replay, one primitive to that transform (whose rules are jitted too).  Its captured arrays stay
    read-only while it lives, as a jitted function's do."""

    __slots__ = ("program", "jitted", "_captured", "__weakref__")

    def __init__(self, name, raw, passes):
        from .jit import _Captured  # jit.py imports this module

        self.jitted = _jit(name, lambda *values: tuple(replay(raw, list(values))))
        for p in passes:
            raw = PASSES[p](raw)
        self.program, self._captured = raw, _Captured()
        for array in raw.captured:
            protect(self._captured, array)
        weakref.finalize(self, self._captured.release)

    def __call__(self, *values):
        """The half's output leaves (:class:`ShapeChanged` when a value's shape is not the traced one)."""
        if Traced in map(type, values):
            return self.jitted(*values)
        return self.program.run(list(values))


def _call(*inputs, site):
    return site.flat(*inputs)


def _forward(argnums, *inputs, site):
    """On a reverse tape tracing the inputs at ``argnums``: the output leaves, and the residuals the tape keeps for
    their pullback."""
    return site.forward(tuple(argnums), inputs)


def _backward(g, residuals, argnums, ans, *args, site):
    """The cotangents of the traced inputs (``argnums``), by the site's late half for exactly those."""
    grads = site.backward(tuple(argnums), residuals, _cotangents(g, ans))
    cts = [None] * len(args)
    for i, c in zip(argnums, grads):
        cts[i] = c
    return cts


class _KeepInputs:
    """The entry's plan (:mod:`autodiff._residuals`): the output as a stand-in (the pullback reads its parts'
    shapes and dtypes; what it reads of the forward, the residuals hold), every input kept: an input may be a
    residual, and the tape keeps a data input it holds read-only while the pullback may read it."""

    def keep(self, argnums, ans, args):
        return stand_in(ans), args


jit_call = primitive(_call, "jit_call")
_forwards[jit_call] = ToldForward(_forward)
_rules[jit_call] = ResidualRule(_backward, told=True)  # told which inputs are traced, computing only theirs
_plans[jit_call] = _KeepInputs()
defjvp_joint(jit_call, lambda ts, ans, *xs, site: site.push(xs, tuple(None if type(t) is ZeroTangent else t
                                                                      for t in ts)))
defbatch(jit_call, lambda level, args, bdims, kwargs: kwargs["site"].batch(args, bdims))


_ARRAYS = (np.ndarray, Traced)


def _jit(name, fun, **options):
    """``jit(fun)`` under ``name`` (what the rule's program and its warnings are called)."""
    from .jit import jit  # jit.py imports this module

    fun.__name__ = name
    return jit(fun, **options)


def _cotangents(g, ans):
    """The output cotangents as the pullback takes them: a part nothing reached as zeros of its shape and
    dtype, an integer part's as ``None`` (it has none)."""
    from ..numpy._broadcast import dtype_of, shape_of

    cts = []
    for c, part in zip(g, ans):
        c, dtype = unthunk(c), dtype_of(part)
        if not is_inexact(dtype):
            cts.append(None)
        else:
            cts.append(np.zeros(shape_of(part), dtype) if type(c) is ZeroTangent else c)
    return tuple(cts)


def _vjp(flat, xs, cts, argnums, value=False):
    """The cotangent of each input of ``flat`` at ``xs`` at ``argnums`` (``None`` for an integer one), given the
    outputs'; with ``value``, ``(flat's outputs, those cotangents)`` from the same forward."""
    from .._vjp import vjp

    moving = [i for i in argnums if is_inexact(dtype_of(xs[i]))]
    outputs, pullback = vjp(on_arguments(flat, xs, moving), *[xs[i] for i in moving])
    grads = dict(zip(moving, pullback(tuple(cts))))
    grads = [grads.get(i) for i in argnums]
    return (outputs, grads) if value else grads


def _jvp(flat, xs, ts):
    """The tangent of each output of ``flat`` at ``xs`` along ``ts`` (``None`` for none), ``ZeroTangent()`` for
    an integer output."""
    from .._higher import jvp

    tangents = jvp(flat, tuple(xs), tuple(ts))[1]
    return tuple(ZeroTangent() if t is None else t for t in tangents)
