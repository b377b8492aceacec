"""``autodiff.remat``: trade compute for memory by running a block's forward again in the backward pass.

``remat(f)(*args)`` records one entry for the whole call of ``f`` (the primitive ``remat``), which keeps
only ``f``'s inputs: ``f``'s intermediates go as soon as its forward is done.  Its pullback runs ``f`` again
on a tape of its own and pulls the cotangent back through it.  As JAX's ``jax.checkpoint`` (``remat``,
since our checkpoints are files).  Each level of a nested differentiation records its own ``remat`` entry,
so ``grad(grad(remat(f)))`` recomputes at both; ``jvp`` pushes tangents through ``f`` itself, and ``vmap``
remats ``f`` mapped over the batch.

``policy`` names the primitives whose outputs are worth keeping rather than recomputing (e.g.
``policy=("matmul",)``, JAX's ``dots_saveable``): the forward saves their outputs, and the pass in the
backward reads them back instead of calling those primitives again.

>>> import numpy as np
>>> import autodiff, autodiff.numpy as anp
>>> block = remat(lambda h, w: anp.tanh(h @ w))
>>> w = np.full((2, 2), 0.5)
>>> g = autodiff.grad(lambda w: anp.sum(block(block(np.ones((1, 2)), w), w)))(w)
>>> bool(np.allclose(g, autodiff.grad(lambda w: anp.sum(anp.tanh(anp.tanh(np.ones((1, 2)) @ w) @ w)))(w)))
True
"""

import functools

from ._arguments import is_differentiable
from ._batch_rules import _batch_rules
from ._forward import jvp_via_ad
from ._hooks import hooks
from ._jvp_rules import _jvp_rules
from ._primitive import Primitive, _plans, _record, _rules
from ._protection import release
from ._residuals import stand_in
from ._tangents import ZERO, Thunk
from ._traced import Tape, Traced, new_input, open_tape


def remat(f, policy=None):
    """``f``, recorded as one entry that keeps only its inputs and runs ``f`` again in the backward pass.

    ``f`` takes positional arguments (arrays, floats, or containers of them) and returns one array or
    scalar.  A value being differentiated must reach ``f`` as an argument, not through a closure.
    ``policy`` is a collection of primitive names (``("matmul",)``) whose outputs the forward keeps.

    >>> import numpy as np
    >>> import autodiff, autodiff.numpy as anp
    >>> f = remat(lambda x: anp.sin(x) * x)
    >>> autodiff.grad(lambda x: anp.sum(f(x)))(np.array([0.0, 1.0]))
    array([0.        , 1.38177329])
    """
    if not callable(f):
        raise TypeError(f"remat: expected a function, got {type(f).__name__}; pass the function first")
    names = _policy_names(policy)

    @functools.wraps(f)
    def rematerialised(*args):
        leaves, treedef = hooks.flatten(args)
        if Traced not in map(type, leaves):  # nothing is differentiated through this call
            return f(*args)
        return remat_call(*leaves, f=f, treedef=treedef, policy=names, saved=None if names is None else _Saved())

    return rematerialised


def _policy_names(policy):
    if policy is None:
        return None
    names = (policy,) if isinstance(policy, str) else policy
    try:
        names = frozenset(names)
    except TypeError:
        names = None
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(
            f"remat: policy= takes the names of primitives whose outputs to keep, e.g. policy=(\"matmul\",); "
            f"got {policy!r}")
    return names


def _run(*leaves, f, treedef, policy, saved):
    """The forward: ``f`` on the arguments rebuilt from ``leaves``, its intermediates gone when it returns
    (under a policy, the outputs it names kept in ``saved``)."""
    if saved is None:
        return _checked(f(*_arguments(leaves, treedef)), leaves)
    with open_tape() as tape:
        tape.keeps_all = True  # the outputs to save are read off the entries
        out = f(*_arguments(_trace_differentiable(tape, leaves), treedef))
    try:
        saved.values = [e[3] for e in tape.entries if e[0] is not None and e[0].__name__ in policy]
        value = out.value if type(out) is Traced and out.tape is tape else out
    finally:
        release(tape)
    return _checked(value, leaves)


def _trace_differentiable(tape, leaves):
    """``leaves`` with each differentiable one an input of ``tape``: the same calls of ``f`` record on the
    forward's tape and on the backward's (whichever leaves the call differentiates), so the saved outputs
    are read back in the order they were saved."""
    return [new_input(tape, x) if is_differentiable(x) else x for x in leaves]


class _Saved:
    """The outputs one call's forward keeps under a policy, in call order."""

    __slots__ = ("values",)

    def __init__(self):
        self.values = []


class _Replay(Tape):
    """The tape of the backward's pass through ``f`` under a policy: a call of a named primitive records the
    output the forward saved, not computed again."""

    __slots__ = ("names", "values", "next")

    def push(self, prim, args, kwargs):
        if prim.__name__ not in self.names or self.next >= len(self.values):
            return hooks.record(prim, self, args, kwargs)
        value, self.next = self.values[self.next], self.next + 1
        return _record(prim, self, args, kwargs, value)


def _arguments(leaves, treedef):
    return leaves if treedef is None else treedef.unflatten(leaves)


def _checked(out, leaves):
    """``out``, refused when it is no array or scalar, or traced at a level above every argument's (``f``
    read a value being differentiated through a closure, which the recorded entry cannot see)."""
    if isinstance(out, (tuple, list, dict)):
        raise TypeError(
            f"remat: the function returned a {type(out).__name__}; remat takes a function returning one array "
            "or scalar; remat each output's computation on its own, or return them stacked")
    top = max((_level(x) for x in leaves), default=0)
    if _level(out) > top:
        raise ValueError(
            "remat: the function reads a value being differentiated through a closure, so the recorded entry "
            "cannot pass it a gradient; pass that value to the function as an argument")
    return out


def _level(x):
    return x.level if type(x) is Traced else 0


remat_call = Primitive(_run, "remat")


def _on(args, argnums, kwargs):
    """``f`` as a function of the arguments at ``argnums`` alone, the others held at ``args``."""
    f, treedef = kwargs["f"], kwargs["treedef"]

    def on(*xs):
        full = list(args)
        for k, x in zip(argnums, xs):
            full[k] = x
        return f(*_arguments(full, treedef))

    return on


def _pullback(g, argnums, ans, args, kwargs):
    """Run ``f`` again on a tape of its own and pull ``g`` back through it."""
    saved = kwargs["saved"]
    if saved is None:
        tape_kind, positions = Tape, list(argnums)
    else:  # every differentiable leaf traced, as in the forward's pass, so the saved outputs line up
        tape_kind, positions = _Replay, [k for k, a in enumerate(args) if is_differentiable(a)]
    on = _on(args, positions, kwargs)
    with open_tape(tape_kind) as tape:
        if saved is not None:
            tape.names, tape.values, tape.next = kwargs["policy"], saved.values, 0
        inputs = [new_input(tape, args[k]) for k in positions]
        out = on(*inputs)
    try:
        if type(out) is not Traced or out.tape is not tape:
            return [ZERO] * len(argnums)
        cts = hooks.backward(tape, {out.index: g}, free=not tape.keeps_all)  # pulled back once: frees as it goes
        at = dict(zip(positions, inputs))
        return [_settle(cts[at[k].index]) for k in argnums]
    finally:
        release(tape)


def _settle(ct):
    if type(ct) is Thunk:
        ct = ct()
    return ZERO if ct is None else ct


def _jvp(tangents, argnums, ans, args, kwargs):
    """The output tangent, pushed through ``f`` itself (``f`` runs again beside the primal already computed)."""
    ts = list(tangents)
    return jvp_via_ad(_on(args, argnums, kwargs), [args[k] for k in argnums], ts)[1]


def _batch(level, args, bdims, kwargs):
    """Under ``vmap``: the remat of ``f`` mapped over the batch, so the entry stays one entry."""
    from ._vmap import vmap

    f, treedef = kwargs["f"], kwargs["treedef"]
    mapped = vmap(lambda *leaves: f(*_arguments(leaves, treedef)), in_axes=tuple(bdims))
    names = kwargs["policy"]
    return remat_call(*args, f=mapped, treedef=None, policy=names, saved=None if names is None else _Saved()), 0


class _KeepInputs:
    """The entry's plan (:mod:`autodiff._residuals`): every input kept, the output as a stand-in."""

    def keep(self, argnums, ans, args):
        return stand_in(ans), args


_rules[remat_call] = _pullback
_plans[remat_call] = _KeepInputs()
_jvp_rules[remat_call] = _jvp
_batch_rules[remat_call] = _batch
