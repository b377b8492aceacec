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

from ._batch_rules import _batch_rules
from ._forward import jvp_via_ad
from ._jvp_rules import _jvp_rules
from ._primitive import Primitive, _plans, _rules
from ._residuals import stand_in
from ._traced import Traced
from ._trees import flatten
from ._via_ad import vjp_via_ad


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
    saved = _policy_names(policy)

    @functools.wraps(f)
    def rematerialised(*args):
        leaves, treedef = flatten(args)
        if Traced not in map(type, leaves):  # nothing is differentiated through this call
            return f(*args)
        return remat_call(*leaves, f=f, treedef=treedef, policy=saved)

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


def _run(*leaves, f, treedef, policy):
    """The forward: ``f`` on the arguments rebuilt from ``leaves``, its intermediates gone when it returns."""
    return _checked(f(*_arguments(leaves, treedef)), leaves)


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
    _, back = vjp_via_ad(_on(args, argnums, kwargs), *[args[k] for k in argnums])
    return list(back(g))


def _jvp(tangents, argnums, ans, args, kwargs):
    """The output tangent, pushed through ``f`` itself (``f`` runs again beside the primal already computed)."""
    ts = list(tangents)
    return jvp_via_ad(_on(args, argnums, kwargs), [args[k] for k in argnums], ts)[1]


def _batch(level, args, bdims, kwargs):
    """Under ``vmap``: the remat of ``f`` mapped over the batch, so the entry stays one entry."""
    from ._vmap import vmap

    f, treedef = kwargs["f"], kwargs["treedef"]
    mapped = vmap(lambda *leaves: f(*_arguments(leaves, treedef)), in_axes=tuple(bdims))
    return remat_call(*args, f=mapped, treedef=None, policy=kwargs["policy"]), 0


class _KeepInputs:
    """The entry's plan (:mod:`autodiff._residuals`): every input kept, the output as a stand-in."""

    def keep(self, argnums, ans, args):
        return stand_in(ans), args


_rules[remat_call] = _pullback
_plans[remat_call] = _KeepInputs()
_jvp_rules[remat_call] = _jvp
_batch_rules[remat_call] = _batch
