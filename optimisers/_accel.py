"""``update``'s rebuild of the new model and state in two tight loops (hook: ``optimisers._tree.rebuild_trees``).

The reference, :func:`optimisers._tree._rebuild`, makes the new model with traversal's walks (an identity
cache, every child visited) and the new state with ``fmap`` over the state and the model.  Those walks cost
115 of ``update``'s 182 µs on a 1-40-40-1 MLP, more than the step itself, and a quarter of a MAML
meta-gradient, whose inner loop calls ``update`` 20 times.  This twin makes the same objects: each container
rebuilt once (a tied layer stays one object), each stepped array and its ``Leaf`` replaced by
:func:`~optimisers._tree.new_array` and :func:`~optimisers._tree.new_leaf`, with an explicit stack and no
key paths.  A cycle, or a state that does not mirror the model where no gradient reached, goes to the
reference, which names the key path.  Off under ``AUTODIFF_REFERENCE=1`` or with ``optimisers`` in
``AUTODIFF_ACCEL_OFF``.

>>> import numpy as np
>>> from optimisers import Descent, setup, update
>>> w = np.ones(2)
>>> state, model = update(setup(Descent(0.5), {"a": w, "b": [w]}), {"a": w, "b": [w]}, {"a": np.ones(2), "b": [None]})
>>> model["a"], model["a"] is model["b"][0]
(array([0.5, 0.5]), True)
"""

from autodiff._accel import enabled
from traversal import children, isnumeric, rebuild

from . import _tree


class _Refer(Exception):
    """Raised inside a loop for what the reference walk handles (and explains) instead."""


def rebuild_fast(state, model, steps):
    """:func:`optimisers._tree._rebuild` in two loops."""
    try:
        new_model = _mapped(model, None, lambda x, _: _tree.new_array(steps, x),
                            lambda x: isnumeric(x) or not children(x))
        new_state = _mapped(state, model, lambda leaf, x: _tree.new_leaf(steps, leaf, x), _tree._is_state_leaf)
    except _Refer:
        return _tree._rebuild(state, model, steps)
    return new_state, new_model


def _mapped(first, second, leaf_fn, is_end):
    """``first`` rebuilt bottom-up, each end node ``a`` (``is_end(a)``) replaced by ``leaf_fn(a, b)``, ``b``
    the node of ``second`` at the same position (``None`` without one); each node of ``first`` is done once."""
    done, on_path = {}, set()
    stack = [(first, second, None)]
    while stack:
        a, b, kids = stack[-1]
        if id(a) in done:
            stack.pop()
        elif is_end(a):
            done[id(a)] = leaf_fn(a, b)
            stack.pop()
        elif kids is None:  # first visit: its children go on the stack
            kids = children(a)
            other = children(b) if b is not None else None
            if (other is not None and other.keys() != kids.keys()) or id(a) in on_path:
                raise _Refer
            on_path.add(id(a))
            stack[-1] = (a, b, kids)
            stack.extend((k, None if other is None else other[key], None) for key, k in kids.items())
        else:  # its children are done
            on_path.discard(id(a))
            done[id(a)] = rebuild(a, [done[id(k)] for k in kids.values()])
            stack.pop()
    return done[id(first)]


def install():
    """Plug the loops in (nothing under ``AUTODIFF_REFERENCE=1``, or with ``optimisers`` switched off)."""
    if enabled("optimisers"):
        _tree.rebuild_trees = rebuild_fast
