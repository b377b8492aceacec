"""Checks of what a layer is built from, shared by the layers' constructors."""

import numbers


def positive_sizes(name, **sizes):
    """Refuse a size that is no positive int (``Dense.init(0, 3)`` divided by zero, then failed in numpy).

    >>> positive_sizes("Dense.init", n_in=0, n_out=3)
    Traceback (most recent call last):
    ...
    ValueError: Dense.init: n_in must be a positive int, got 0; pass n_in=1 or more
    """
    for arg, value in sizes.items():
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name}: {arg} must be a positive int, got {value!r}; pass {arg}=1 or more")
