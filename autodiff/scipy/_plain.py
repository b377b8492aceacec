"""The plain numpy value under every level of tracing (pivots, masks and signs are read from it)."""

from ..extend import value_of


def plain(x):
    """``x`` with every level of tracing removed: a constant, never differentiated."""
    while value_of(x) is not x:
        x = value_of(x)
    return x
