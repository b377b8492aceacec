"""The few array primitives the engine itself applies to traced values, put here by ``autodiff.numpy``.

The numpy rules import the engine (through ``autodiff.extend``), never the other way round, yet a transform
sometimes needs an op on traced values: ``jacobian`` stacks rows, ``vmap`` moves a batch axis, a tangent
check sums a product, the loop over a batch slices and stacks.  ``autodiff.numpy`` fills these names with its
primitives when it is imported (``import autodiff`` imports it), so the engine calls them without importing
the rules.

>>> import autodiff, autodiff.numpy as anp
>>> stack is anp.stack and moveaxis is anp.moveaxis
True
"""

# Each is None until autodiff.numpy is imported.
sum = real = stack = reshape = transpose = moveaxis = broadcast_to = getitem = tuple_item = cast = None


def install(**ops):
    """Put ``autodiff.numpy``'s primitives here, by name (only the names above)."""
    unknown = set(ops) - set(_NAMES)
    if unknown:
        raise TypeError(f"autodiff._ops.install: no op named {sorted(unknown)}; the names are {_NAMES}")
    globals().update(ops)


_NAMES = ("sum", "real", "stack", "reshape", "transpose", "moveaxis", "broadcast_to", "getitem", "tuple_item",
          "cast")
