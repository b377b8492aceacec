"""What every transform's call shares: ``argnums``, ``has_aux``, and holding the other arguments fixed.

``grad``, ``vjp``, ``jvp``, ``hvp``, ``hvp_operator``, ``jacobian``, ``hessian`` and ``jacfwd`` read these
the same way, with the same errors (each names its transform).
"""

import numpy as np

from ._traced import value_of


def argnums_of(argnums, nargs, name="grad"):
    """``argnums`` as a tuple of distinct argument numbers, checked against a call with ``nargs`` arguments.

    A negative number counts from the end, as an index does (and as JAX reads it): ``-1`` is the last
    argument.  ``name`` is the transform's, for the message.

    >>> argnums_of((0, 2), 3), argnums_of(1, 2), argnums_of((-1, 0), 3)
    ((0, 2), (1,), (2, 0))
    >>> argnums_of((1, 1), 2, "hvp")
    Traceback (most recent call last):
    ...
    ValueError: hvp: argnums=(1, 1) names argument 1 twice; list each argument once, e.g. argnums=(1,)
    >>> argnums_of((1, -1), 2, "grad")
    Traceback (most recent call last):
    ...
    ValueError: grad: argnums=(1, -1) names argument 1 twice; list each argument once, e.g. argnums=(1,)
    """
    if argnums == 0 and type(argnums) is int and nargs:  # the usual case
        return (0,)
    nums = tuple(_as_number(n, argnums, name) for n in (argnums if isinstance(argnums, (tuple, list)) else (argnums,)))
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(_out_of_range(argnums, nargs, name))
    nums = tuple(n % nargs for n in nums)
    _refuse_repeats(argnums, nums, name)
    return nums


def _as_number(n, argnums, name):
    """An argument number as a Python int (a numpy integer is one); anything else is refused."""
    if isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)):
        return int(n)
    raise TypeError(
        f"{name}: argnums={argnums!r} holds {n!r}, a {type(n).__name__}, not an argument number; pass ints, "
        "e.g. argnums=1 or argnums=(0, 2)"
    )


def _out_of_range(argnums, nargs, name):
    if nargs == 0:
        return (f"{name}: argnums={argnums!r} names a positional argument, but the call passed none (keyword "
                "arguments are held, never differentiated); pass the arguments to differentiate positionally, "
                "e.g. f(x) rather than f(x=x)")
    return (f"{name}: argnums={argnums!r} is out of range for a call with {nargs} positional argument(s); use "
            f"integers from 0 to {nargs - 1} (or from -{nargs}, counting from the end)")


def _refuse_repeats(argnums, nums, name):
    twice = next((n for k, n in enumerate(nums) if n in nums[:k]), None)
    if twice is not None:
        raise ValueError(
            f"{name}: argnums={argnums!r} names argument {twice} twice; list each argument once, "
            f"e.g. argnums={tuple(dict.fromkeys(nums))!r}"
        )


def on_arguments(f, args, nums):
    """``f`` as a function of ``args[n] for n in nums`` only, the other arguments held at their values.

    >>> on_arguments(lambda a, b, c: (a, b, c), (1, 2, 3), (2, 0))(30, 10)
    (10, 2, 30)
    """
    if len(nums) == len(args) and all(n == k for k, n in enumerate(nums)):
        return f

    def f_of_chosen(*chosen):
        new = list(args)
        for n, x in zip(nums, chosen):
            new[n] = x
        return f(*new)

    return f_of_chosen


def split_aux(result, has_aux, name):
    """``(out, aux)`` from what the function returned: the pair itself with ``has_aux``, else ``(result, None)``.

    >>> split_aux([1.0, "note"], True, "grad"), split_aux(1.0, False, "grad")
    ((1.0, 'note'), (1.0, None))
    >>> split_aux(1.0, True, "vjp")
    Traceback (most recent call last):
    ...
    TypeError: vjp(..., has_aux=True): the function must return a pair (output, aux), but it returned a float;
    return `out, aux`, or drop has_aux=True
    """
    if not has_aux:
        return result, None
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(
            f"{name}(..., has_aux=True): the function must return a pair "
            f"(output, aux), but it returned {describe(value_of(result))}; return "
            "`out, aux`, or drop has_aux=True"
        )
    return result[0], result[1]


def checked_aux(f, has_aux, name):
    """``f``, checked to return an ``(out, aux)`` pair when ``has_aux``; a bad return raises naming ``name``."""
    if not has_aux:
        return f

    def f_with_aux(*args, **kwargs):
        return split_aux(f(*args, **kwargs), True, name)

    return f_with_aux


def describe(value, shape=None):
    """``value`` in a few words for an error message: its kind, and an array's shape (``shape`` if given)."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape if shape is None else shape}"
    return f"a {type(value).__name__}"
