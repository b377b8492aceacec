"""``update`` in one tight walk (hook: ``optimisers._tree.updater``).

The reference, :func:`optimisers._tree._update`, walks three times: it collects the steps with key paths
ready for its errors, then rebuilds the new model with traversal's walks (an identity cache, every child
visited) and the new state with ``fmap`` over the state and the model.  An ``update`` of a 1-40-40-1 MLP took
195 µs that way (120 with the two rebuild loops this twin replaced), where the step's arithmetic is 12 µs; that
was a quarter of a MAML meta-gradient, whose inner loop calls ``update`` 20 times.  This twin takes 60: it walks
the model, the state and the gradient once, with an explicit stack and no key paths, noting every container it
meets; it then runs the same rules (:func:`~optimisers._tree._run_rules`) and rebuilds both trees from its notes,
children before parents.  It
makes the same objects: each container rebuilt once (a tied layer stays one object), each stepped array and its
``Leaf`` replaced by :func:`~optimisers._tree.new_array` and :func:`~optimisers._tree.new_leaf`, a tie's
entries added as the reference adds them.  Anything it does not expect (a state or a gradient that does not
mirror the model, a gradient of another shape, arguments swapped) goes to the reference, which names the key
path in its error.  Off under ``AUTODIFF_REFERENCE=1`` or with ``optimisers`` in ``AUTODIFF_ACCEL_OFF``.

>>> import numpy as np
>>> from optimisers import Descent, setup, update
>>> w = np.ones(2)
>>> state, model = update(setup(Descent(0.5), {"a": w, "b": [w]}), {"a": w, "b": [w]}, {"a": np.ones(2), "b": [None]})
>>> model["a"], model["a"] is model["b"][0]
(array([0.5, 0.5]), True)
"""

import numpy as np

from autodiff import Tangent, ZeroTangent
from autodiff._for_traversal import node_of
from autodiff._hooks import enabled, fill
from autodiff.extend import Traced
from traversal import isnumeric, trainable
from traversal._trainable import is_customised

from . import _fused, _tree
from ._fit import misfit

_GRADIENTS = (np.ndarray, np.generic, float, int, Traced)
_FUSED = enabled("optimiser_kernels")  # the rules' plain steps in one pass (optimisers/_fused.py)


_LEAVE = object()  # on the stack below a container's children: leaving it


class _Refer(Exception):
    """Raised inside the walk for what the reference handles (and explains) instead."""


def update_fast(state, model, grads):
    """:func:`optimisers._tree._update` in one walk."""
    try:
        steps, model_nodes, state_nodes = _walk(state, model, grads)
    except _Refer:
        return _tree._update(state, model, grads)
    steps = {k: s for k, s in steps.items() if s is not None}
    done = _fused.take(steps) if _FUSED else {}  # the new arrays of the steps a one-pass kernel took
    rest = {k: s for k, s in steps.items() if k not in done} if done else steps
    try:
        _tree._run_rules(rest)
    except _tree.StepShapeError:  # a custom rule's mistake: the reference names the key path
        return _tree._update(state, model, grads)
    done.update((k, _tree.new_array(rest, s.x)) for k, s in rest.items())
    new_model = _rebuilt(model, model_nodes, done)
    return _rebuilt_state(state, model, state_nodes, steps), new_model


def _walk(state, model, grads):
    """The steps, in the reference's order; every model container met, with its children; every state
    container, with its children and the model's at the same position.  Parents come before children."""
    steps, model_nodes, state_nodes, seen, inside = {}, [], [], {}, set()  # inside: the containers holding x
    stack = [(model, state, grads)]
    while stack:
        x, leaf, dx = stack.pop()
        if x is _LEAVE:  # every child of the container whose id is in ``leaf`` is done
            inside.discard(leaf)
            continue
        if type(dx) is ZeroTangent:
            dx = None
        if isnumeric(x):
            if dx is not None:
                _tree.add_step(steps, x, _leaf(leaf, x), _gradient(x, dx))
            continue
        node = node_of(x)
        keys, kids = node.children(x) if node is not None else ((), ())
        if not keys:
            _check_kept(x, leaf)
        elif _first_visit(x, leaf, dx, seen, inside):
            stack.append((_LEAVE, id(x), None))
            model_nodes.append((x, node, kids))
            leaves, dxs = _mirror(leaf, keys, x), _trainable_gradients(x, keys, _mirror(dx, keys, x))
            if leaves is not None:
                state_nodes.append((leaf, leaves, kids))
            stack.extend(_children_last_first(kids, leaves, dxs))
    return steps, model_nodes, state_nodes


def _check_kept(x, leaf):
    """A leaf that is no parameter (a function, an int), or an empty container, is kept; it must have no state."""
    if type(x) is _tree.Leaf or type(leaf) is _tree.Leaf or node_of(leaf) is not None:
        raise _Refer  # arguments swapped, or a state where the model has no parameter


def _first_visit(x, leaf, dx, seen, inside):
    """Whether the container ``x`` is met for the first time (it is then noted as entered).  Met again, it is a
    tied layer, its state tied too and no gradient here: rebuilt once already, so skipped."""
    if id(x) not in seen:
        seen[id(x)] = leaf
        inside.add(id(x))
        return True
    if id(x) in inside or dx is not None or seen[id(x)] is not leaf:
        raise _Refer  # a cycle (refused there), or entries at a second position of the tie (added there)
    return False


def _trainable_gradients(x, keys, dxs):
    """The gradient's children at ``x``'s, ``None`` at those ``trainable`` leaves out."""
    if dxs is None or not is_customised(type(x)):
        return dxs
    allowed = trainable(x)
    return [d if k in allowed else None for k, d in zip(keys, dxs)]


def _children_last_first(kids, leaves, dxs):
    """The stack entries of a container's children, the last first (so the first is walked first)."""
    nones = (None,) * len(kids)
    return zip(reversed(kids), reversed(nones if leaves is None else leaves), reversed(nones if dxs is None else dxs))


def _mirror(node, keys, x):
    """The children of ``node`` (the state's or the gradient's) at the model container ``x``'s position, in
    ``keys``' order; ``None`` for ``None``.  Another structure goes to the reference."""
    if node is None:
        return None
    other = node_of(node)
    if other is None or (type(node) is not type(x) and not (type(node) is Tangent and node.primal_type is type(x))):
        raise _Refer
    their_keys, values = other.children(node)
    if their_keys is not keys and list(their_keys) != list(keys):
        raise _Refer
    return values


def _leaf(leaf, x):
    if leaf is None or (type(leaf) is _tree.Leaf and (leaf.frozen or misfit(leaf, x) is None)):
        return leaf
    raise _Refer  # another object, or a state that does not fit x: the reference names the key path


def _gradient(x, dx):
    if not isinstance(dx, _GRADIENTS) or (dx.shape if type(dx) is Traced else np.shape(dx)) != x.shape:
        raise _Refer
    return _tree._as_array(dx, x.dtype)


def _rebuilt(model, model_nodes, done):
    """The new model: each container rebuilt once from its new children, children first (``done`` holds the
    stepped arrays by id, and takes each rebuilt container)."""
    for x, node, kids in reversed(model_nodes):
        if id(x) not in done:
            done[id(x)] = node.rebuild(x, [done.get(id(k), k) for k in kids])
    return done.get(id(model), model)


def _rebuilt_state(state, model, state_nodes, steps):
    """The new state: each container rebuilt once, each ``Leaf`` of a stepped array replaced once (the root's
    too, when the model is one bare array)."""
    if type(state) is _tree.Leaf:
        return _tree.new_leaf(steps, state, model)
    done = {}
    for s, leaves, kids in reversed(state_nodes):
        if id(s) in done:
            continue
        new = []
        for leaf, x in zip(leaves, kids):
            if id(leaf) not in done:
                done[id(leaf)] = _tree.new_leaf(steps, leaf, x) if type(leaf) is _tree.Leaf else leaf
            new.append(done[id(leaf)])
        done[id(s)] = node_of(s).rebuild(s, new)
    return done.get(id(state), state)


def install():
    """Plug the walk in (nothing under ``AUTODIFF_REFERENCE=1``, or with ``optimisers`` switched off)."""
    fill("optimisers", "update in one explicit-stack walk over the model, the state and the gradient",
         updater=update_fast)
    fill("optimiser_kernels", "the plain steps of Descent, Momentum, Nesterov, Adam and AdamW on large float "
         "arrays as one-pass numba kernels (optimisers/_fused.py, called from that walk)")
