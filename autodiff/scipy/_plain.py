"""The plain numpy value under every level of tracing (pivots, masks and signs are read from it)."""

from ..extend import value_of


def plain(x):
    """``x`` with every level of tracing removed: a constant, never differentiated (under ``vmap`` still
    batched, one value per example).  One ``value_of`` does it: looping until it returned ``x`` itself never
    ended under two ``vmap``s, whose batch levels it rebuilds as a new value each time."""
    return value_of(x)
