"""A jitted call an outer transform traces, as one primitive whose rules are jitted functions too (issue 42).

``grad(jit(f))``, ``vmap(jit(f))`` and ``jvp(jit(f), ...)`` call the jitted function with values an outer
transform is tracing.  Replaying the program equation by equation through the primitives would let that
transform record, batch or push every one of them, as slowly as eager code.  Instead the call is one call of
the primitive :data:`jit_call`, given the call's distinct input arrays and, as the keyword ``site``, the
:class:`CallSite` of its jitted function and signature.  The site's flat function takes those arrays and returns
the tuple of the output leaves the program computes, by calling the jitted function itself on plain arrays (its
signature, cache and program, as any plain call).  Its rules are jitted functions of that flat function, so
each is compiled, and called with traced values at the next order each is a ``jit_call`` in turn:

- the pullback is ``jit`` of the flat function's ``vjp`` applied to the cotangents, one per set of traced inputs:
  it recomputes the forward inside its program, as ``remat`` would, and returns the traced inputs' cotangents at
  once (``None`` for an integer input, which has none), never a constant input's;
- the pushforward (joint) is ``jit`` of the flat function's ``jvp``;
- the batching rule is ``jit(vmap(flat function, in_axes))``, one per pattern of batched inputs.

An output leaf the program does not compute (``None``, a Python number, a constant array) comes back as it is;
the others are the parts of the primitive's tuple, read with ``tuple_item``.

One primitive serves every site, the site riding along as an argument (as ``remat_call`` carries its function):
the rule registries hold a primitive for ever, so a primitive per site would hold its jitted function, its
programs and the arrays they keep read-only for as long as the process runs.  A site lives while its jitted
function or a tape entry of its call does.
"""

import numpy as np

from .. import _ops
from .._batching import batch_depth
from .._calls import on_arguments
from .._primitive import _plans, _rules
from .._residuals import stand_in
from .._tangents import ZeroTangent, is_inexact, unthunk
from .._traced import Traced
from .._traced import value_of as strip_all
from .._trees import walk_flatten
from ..extend import defbatch, defjvp_joint, primitive
from .program import Var
from .signature import Signature


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
        self.pulls = {}  # traced input positions -> jit of the pullback giving their cotangents
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
        args, kwargs = self.template.rebuild([x if type(x) in _ARRAYS else np.asarray(x) for x in inputs])
        leaves = walk_flatten(self.jitted(*args, **kwargs))[0]
        return tuple(leaves[k] for k in self.computed)

    def pull(self, argnums):
        """``jit`` of the pullback giving the cotangents of the inputs at ``argnums`` (the traced ones) only: a
        data input's (a batch passed as an argument) is never computed."""
        pull = self.pulls.get(argnums)
        if pull is None:
            pull = self.pulls[argnums] = _jit(f"vjp_of_{self.jitted._name}",
                                              lambda xs, cts: _vjp(self.flat, xs, cts, argnums))
        return pull

    def batch(self, args, bdims):
        """Every example at once, by ``jit(vmap(flat, in_axes))`` with the batched inputs' axes."""
        in_axes = tuple(bdims)
        mapped = self.batched.get(in_axes)
        if mapped is None:
            from .._vmap import vmap

            mapped = self.batched[in_axes] = _jit(f"vmap_of_{self.jitted._name}", vmap(self.flat, in_axes))
        return tuple(mapped(*args)), 0


def _call(*inputs, site):
    return site.flat(*inputs)


def _pullback(g, argnums, ans, args, kwargs):
    """The cotangents of the traced inputs (``argnums``), by the site's jitted pullback for exactly those."""
    return kwargs["site"].pull(tuple(argnums))(tuple(args), _cotangents(g, ans))


class _KeepInputs:
    """The entry's plan (:mod:`autodiff._residuals`): every input kept (the pullback recomputes the forward from
    them), the output as a stand-in (the pullback reads its parts' shapes and dtypes)."""

    def keep(self, argnums, ans, args):
        return stand_in(ans), args


jit_call = primitive(_call, "jit_call")
_rules[jit_call] = _pullback  # told which inputs are traced, as remat_call's pullback is (a joint rule is not)
_plans[jit_call] = _KeepInputs()
defjvp_joint(jit_call, lambda ts, ans, *xs, site: site.push(xs, tuple(None if type(t) is ZeroTangent else t
                                                                      for t in ts)))
defbatch(jit_call, lambda level, args, bdims, kwargs: kwargs["site"].batch(args, bdims))


_ARRAYS = (np.ndarray, Traced)


def _jit(name, fun):
    """``jit(fun)`` under ``name`` (what the rule's program and its warnings are called)."""
    from .jit import jit  # jit.py imports this module

    fun.__name__ = name
    return jit(fun)


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


def _vjp(flat, xs, cts, argnums):
    """The cotangent of each input of ``flat`` at ``xs`` at ``argnums`` (``None`` for an integer one), given the
    outputs'."""
    from .._vjp import vjp
    from ..numpy._broadcast import dtype_of

    moving = [i for i in argnums if is_inexact(dtype_of(xs[i]))]
    pullback = vjp(on_arguments(flat, xs, moving), *[xs[i] for i in moving])[1]
    grads = dict(zip(moving, pullback(tuple(cts))))
    return [grads.get(i) for i in argnums]


def _jvp(flat, xs, ts):
    """The tangent of each output of ``flat`` at ``xs`` along ``ts`` (``None`` for none), ``ZeroTangent()`` for
    an integer output."""
    from .._higher import jvp

    tangents = jvp(flat, tuple(xs), tuple(ts))[1]
    return tuple(ZeroTangent() if t is None else t for t in tangents)
