"""Structured arguments: trace their distinct float leaves, and mirror gradients back.

One notion of variable (design.md section 1): a leaf a node's ``trainable`` leaves out (BatchNorm's
running statistics, ``eps``, ``momentum``) is a constant, never traced, so its gradient is ``None``.
Ties (design.md section 3) are decided by identity, for arrays only: within
one argument a tied array with a trainable occurrence is one variable, traced once wherever it sits, and
its accumulated (true) gradient appears at its first trainable occurrence, ``None`` at the others.  Floats
are values, never tied; each argument is its own variable, so an array in two
arguments gets each argument's own partial derivative.
"""

import numpy as np

from . import _ops
from ._batching import example_shape, like_batches_of
from ._checks import refuse_argument, refuse_hidden_floats
from ._containers import node_of
from ._hooks import hooks
from ._tangents import NoTangent, Thunk, ZeroTangent, is_inexact
from ._traced import Traced, new_input, value_of


def is_differentiable(x):
    """Float or complex arrays and scalars (traced or not); not ints, bools or objects."""
    if type(x) is np.ndarray:
        return is_inexact(x.dtype)
    v = value_of(x)
    if isinstance(v, (np.ndarray, np.generic)):
        return is_inexact(v.dtype)
    return isinstance(v, (float, complex))


class Record:
    """What tracing the arguments did: one traced input per distinct leaf, and each argument's shape."""

    __slots__ = ("structures", "bare")

    def __init__(self):
        self.structures = {}  # argument number -> (leaves, traced leaves, treedef, tied?)
        self.bare = {}  # argument number -> traced input of a bare array or float


def trace_arguments(tape, args, argnums):
    """Replace the differentiable leaves of ``args[argnums]`` by traced inputs (one per distinct array).

    Returns the new argument list and a :class:`Record` for :func:`gradient_of`.
    """
    record = Record()
    new = list(args)
    for i in argnums:
        arg = args[i]
        if node_of(arg) is None:  # not a container
            if is_differentiable(arg):  # a bare array or float: its own input, as in JAX
                new[i] = record.bare[i] = new_input(tape, arg)
                continue
            refuse_argument(arg, i)
        leaves, treedef = hooks.flatten(arg, (i,))
        traced, tied = _trace_leaves(tape, arg, i, leaves, treedef.flags)
        new[i] = treedef.unflatten(traced)
        record.structures[i] = (leaves, traced, treedef, tied)
    return new, record


def _trace_leaves(tape, arg, i, leaves, flags):
    """A traced input per differentiable leaf, one per distinct array (a tie); ``(traced, tied?)``.

    ``flags`` (``None``: all) marks the trainable leaves; the others stay as they are, constants, unless
    they hold an array that also sits at a trainable position (a tie: one variable)."""
    variables = _trainable_arrays(leaves, flags)
    seen = {}  # id(array) -> its traced input, within this argument only
    traced, arrays = [], 0
    for k, leaf in enumerate(leaves):
        if flags is not None and not flags[k] and id(leaf) not in variables:  # left out by trainable: a constant
            traced.append(leaf)
        elif not is_differentiable(leaf):
            refuse_hidden_floats(arg, i, leaf)
            traced.append(leaf)
        elif not isinstance(value_of(leaf), np.ndarray):  # a float is a value, never tied
            traced.append(new_input(tape, leaf))
        else:
            arrays += 1
            if id(leaf) not in seen:
                seen[id(leaf)] = new_input(tape, leaf)
            traced.append(seen[id(leaf)])
    return traced, len(seen) < arrays


def _trainable_arrays(leaves, flags):
    """The ids of the arrays at trainable positions (of every leaf when ``flags`` is ``None``: not needed)."""
    if flags is None:
        return ()
    return {id(leaf) for leaf, ok in zip(leaves, flags) if ok and isinstance(value_of(leaf), np.ndarray)}


def gradient_of(arg, i, record, cts):
    """The gradient mirroring argument ``arg`` (number ``i``), given the tape's cotangents."""
    structure = record.structures.get(i)
    if structure is None:  # a bare array or float
        return materialise(cts[record.bare[i].index], arg, bare=True)
    leaves, traced, treedef, tied = structure
    carriers = _carriers(leaves, traced, treedef.flags) if tied else None
    grads = []
    for k, (leaf, t) in enumerate(zip(leaves, traced)):
        if t is leaf or (carriers is not None and k not in carriers):  # not differentiated, or a tie's other place
            grads.append(None)
            continue
        ct = cts[t.index]
        if type(ct) is np.ndarray and type(leaf) is np.ndarray and ct.dtype == leaf.dtype and ct.shape == leaf.shape:
            grads.append(ct)
        else:
            grads.append(materialise(ct, leaf, bare=False))
    return treedef.tangent(grads)


def _carriers(leaves, traced, flags):
    """The positions that carry a tied array's gradient: its first trainable occurrence."""
    first = {}
    for k, (leaf, t) in enumerate(zip(leaves, traced)):
        if t is not leaf and (flags is None or flags[k]):
            first.setdefault(id(t), k)
    return set(first.values())


def materialise(ct, primal, bare):
    if type(ct) is Thunk:
        ct = ct()
    if ct is None or type(ct) is NoTangent:
        if not bare:
            return None
        ct = ZeroTangent()
    if type(ct) is ZeroTangent:
        return zeros_like_primal(primal)
    return _match_primal(ct, primal)


def zeros_like_primal(primal):
    v = value_of(primal)
    if isinstance(v, (float, complex)):
        return type(v)(0)
    zeros = np.zeros(np.shape(v), np.result_type(v))
    return like_batches_of(primal, zeros) if type(primal) is Traced else zeros  # under vmap: zeros per example


def _match_primal(ct, primal):
    if type(ct) is Traced:
        return _traced_like(ct, primal)
    if type(ct) is np.ndarray and type(primal) is np.ndarray and ct.dtype == primal.dtype and ct.shape == primal.shape:
        return ct
    v = value_of(primal)
    if isinstance(v, (float, complex)):
        return type(v)(ct)
    if isinstance(v, np.generic):
        return v.dtype.type(ct)
    ct = np.asarray(ct)
    if ct.shape != example_shape(primal):  # under vmap, one example's: a gradient the same for every example
        raise _wrong_shape(ct, example_shape(primal))
    return ct if ct.dtype == v.dtype else ct.astype(v.dtype)


def _wrong_shape(ct, shape):
    """The error for a gradient whose shape is not its input's: a pullback returned a cotangent of the wrong
    shape, which numpy broadcasting would otherwise carry silently into the result."""
    return ValueError(
        f"a gradient of shape {ct.shape} reached an input of shape {shape}: a pullback (most likely a "
        "custom rule given to autodiff.extend.defvjp) returned a cotangent of the wrong shape; each pullback "
        "must return an array of its argument's shape (unbroadcast it, e.g. with a sum over broadcast axes)"
    )


def _traced_like(ct, primal):
    """A traced gradient for an array ``primal``, made an array again where numpy made it a scalar.

    Arithmetic on a 0-d array gives a numpy scalar, which is no parameter (``traversal`` skips it), so inside
    an outer transform a 0-d parameter's gradient would silently drop out of ``total(sumsq, grad(loss)(m))``.
    The cast is differentiable, so the outer levels see the same value.
    """
    v = value_of(primal)
    if type(v) is np.ndarray and type(value_of(ct)) is not np.ndarray:
        return _ops.cast(ct, v.dtype)
    return ct
