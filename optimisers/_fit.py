"""Whether an optimiser state ``Leaf`` fits the parameter it steps: its state arrays and array hyperparameters.

``update`` checks the gradient's shape against the parameter's; a state or a hyperparameter of another shape
would pass that check and then broadcast, silently turning a (1,) parameter into a (3,) one.  The rules here:

- every array in a rule's state has the parameter's shape, as ``rule.init(x)`` makes it (a 0-d array, a
  per-parameter scalar such as a running count, is allowed too);
- a hyperparameter may be a number, a 0-d array, or an array that broadcasts to the parameter's shape without
  changing it (an ``lr`` per entry, say, or per row: shape (3, 1) for a (3, 4) weight).

:func:`misfit` says what does not fit, for ``update`` to raise with the key path (the reference walk) or to hand
to the reference (the accelerated one).

>>> import numpy as np
>>> from optimisers import Descent, Momentum, setup
>>> print(misfit(setup(Momentum(), np.ones(3)), np.ones(1)))
its Momentum state holds an array of shape (3,), but the parameter has shape (1,): a state built for another
array? Build the state with setup(rule, model) for this model
>>> print(misfit(setup(Descent(lr=np.array([0.1, 0.2, 0.3])), np.ones(1)), np.ones(1)))
Descent's lr has shape (3,), which does not broadcast to the parameter's shape (1,) without changing it; pass
a number, a 0-d array, or an array whose shape broadcasts to (1,)
"""

import numpy as np

from ._rules import OptimiserChain, is_array

__all__ = ["misfit"]


def misfit(leaf, x):
    """What in ``leaf`` (a state ``Leaf``) does not fit the parameter ``x``, as a phrase, or ``None``."""
    chain = isinstance(leaf.rule, OptimiserChain)
    rules = leaf.rule.rules if chain else (leaf.rule,)
    states = leaf.state if chain else (leaf.state,)
    if type(states) is not tuple or len(states) != len(rules):
        return (f"its state is not a tuple of one state per rule of its chain of {len(rules)}; build the state "
                "with setup(rule, model)")
    shape = x.shape
    for rule, state in zip(rules, states):
        problem = _hyperparameter_misfit(rule, shape) or _state_misfit(rule, state, shape)
        if problem:
            return problem
    return None


def _hyperparameter_misfit(rule, shape):
    """The first array-valued hyperparameter of ``rule`` that does not broadcast into ``shape``, as a phrase."""
    names = getattr(rule, "_array_fields", None)  # found when a Rule is made; another rule object: searched
    for name in vars(rule) if names is None and hasattr(rule, "__dict__") else names or ():
        value = getattr(rule, name)
        if is_array(value) and value.shape != shape and not _broadcasts_into(value.shape, shape):
            return (f"{type(rule).__name__}'s {name} has shape {value.shape}, which does not broadcast to the "
                    f"parameter's shape {shape} without changing it; pass a number, a 0-d array, or an array "
                    f"whose shape broadcasts to {shape}")
    return None


def _broadcasts_into(small, shape):
    try:
        return np.broadcast_shapes(small, shape) == shape
    except ValueError:
        return False


def _state_misfit(rule, state, shape):
    """The first array in ``state`` (tuples walked, iteratively) of neither the parameter's shape nor 0-d."""
    stack = [state]
    while stack:
        s = stack.pop()
        if type(s) is tuple:
            stack.extend(s)
        elif is_array(s) and s.shape != shape and s.shape != ():
            return (f"its {type(rule).__name__} state holds an array of shape {s.shape}, but the parameter has "
                    f"shape {shape}: a state built for another array? Build the state with setup(rule, model) for "
                    "this model")
    return None
