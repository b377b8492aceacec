"""The one road to the gradient: grad -> value_and_grad -> tape -> backward.

``vjp`` is the general form (any output structure, reusable pullback);
``grad`` and ``value_and_grad`` specialise it to scalar outputs.
"""

import numpy as np

from . import _backward
from ._arguments import gradient_of, trace_arguments
from ._batching import example_shape
from ._traced import Traced, _state, open_tape, protect, release, value_of
from ._trees import leaves, rebuild_node, transform


def vjp(f, *primals, has_aux=False):
    """Run ``f(*primals)`` and return ``(out, pullback)`` (and ``aux`` with ``has_aux``).

    ``pullback(ct)`` takes a cotangent shaped like ``out`` and returns a tuple
    with one gradient per primal, in the primal's structure.  It may be called
    many times.

    >>> import autodiff.numpy as anp
    >>> out, pullback = vjp(anp.sin, 0.0)
    >>> pullback(2.0)
    (2.0,)
    """
    argnums = range(len(primals))
    with open_tape() as tape:
        args, record = trace_arguments(tape, primals, argnums)
        out, aux = _split_aux(f(*args), has_aux, "vjp")
        out = split_tuple_outputs(out)
    value, outputs = _unwrap_outputs(out, tape)
    pullback = Pullback(tape, primals, record, out, outputs)
    if has_aux:
        aux, saved = _unwrap_outputs(aux, tape)
        _protect_saved(tape, saved)
    _protect_saved(tape, outputs)  # outputs (and aux) a pullback may read: the caller must not change them
    return (value, pullback, aux) if has_aux else (value, pullback)


def _protect_saved(tape, outputs):
    for _, index, leaf in outputs:
        if index is not None and isinstance(leaf, np.ndarray):
            protect(tape, leaf)


class Pullback:
    """The pullback returned by :func:`vjp`: cotangent of the output -> gradients of the primals."""

    def __init__(self, tape, primals, record, out, outputs):
        self._tape, self._primals, self._record = tape, primals, record
        self._out, self._outputs = out, outputs

    def __del__(self):
        release(self._tape)  # the arrays the tape protected are the caller's again

    def __call__(self, ct):
        cts = self._seeds(ct)
        all_cts = _backward.run(self._tape, cts)
        return tuple(gradient_of(p, i, self._record, all_cts) for i, p in enumerate(self._primals))

    def _seeds(self, ct):
        given = leaves(ct)
        if len(given) != len(self._outputs):
            raise ValueError(
                f"vjp pullback: the cotangent has {len(given)} leaf/leaves but the output "
                f"has {len(self._outputs)}; pass a cotangent with the output's structure"
            )
        seeds = {}
        for (path, leaf), (want_path, index, value) in zip(given, self._outputs):
            if path != want_path:
                raise ValueError(
                    f"vjp pullback: the cotangent has a leaf at {_at_output(path)} where the output has one "
                    f"at {_at_output(want_path)}; pass a cotangent with the output's structure"
                )
            _check_cotangent(path, leaf, value)
            if index is not None and leaf is not None:
                seeds[index] = seeds[index] + leaf if index in seeds else leaf
        return seeds


def _check_cotangent(path, ct, value):
    if ct is None:
        return
    want_shape, got_shape = example_shape(value), example_shape(ct)
    value, ct = value_of(value), value_of(ct)
    want, got = np.result_type(value), np.result_type(ct)
    scalar_ok = isinstance(ct, (float, int)) and want_shape == () and want.kind in "fc"
    if want_shape != got_shape or (want != got and not scalar_ok):
        where = f" at {_at_output(path)}" if path else ""
        raise ValueError(
            f"vjp pullback: cotangent{where} has shape {got_shape} and dtype {got}, "
            f"but the output has shape {want_shape} and dtype {want}; pass a "
            "cotangent of the output's exact shape and dtype"
        )


def _at_output(path):
    return "output" + "".join(f"[{k!r}]" for k in path)


def split_tuple_outputs(out):
    """``out`` with each traced value that holds a tuple (the one output of a primitive with several, such as
    ``linalg.svd`` or ``eigh``) replaced by the tuple of its items, so that each item is an output leaf of
    its own, as it is when the function unpacks it."""

    def leaf_fn(path, leaf):
        return tuple(leaf) if type(leaf) is Traced and type(value_of(leaf)) is tuple else leaf

    return transform(out, leaf_fn, rebuild_node)


def _unwrap_outputs(out, tape):
    """Strip this tape's tracing from ``out``; list ``(key path, entry index or None, value)`` per leaf."""
    outputs = []

    def leaf_fn(path, leaf):
        if type(leaf) is Traced and leaf.tape is tape:
            outputs.append((path, leaf.index, leaf.value))
            return leaf.value
        outputs.append((path, None, leaf))
        return leaf

    return transform(out, leaf_fn, rebuild_node), outputs


def _traced(tape):
    """Is ``autodiff.trace`` recording ``tape`` (so its entries must outlive the backward pass)?"""
    tracer = _state.__dict__.get("tracer")
    return tracer is not None and tape in tracer.tapes


def _split_aux(result, has_aux, name):
    if not has_aux:
        return result, None
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(
            f"{name}(..., has_aux=True): the function must return a pair "
            f"(output, aux), but it returned {_describe(value_of(result))}; return "
            "`out, aux`, or drop has_aux=True"
        )
    return result[0], result[1]


def checked_aux(f, has_aux, name):
    """``f``, checked to return an ``(out, aux)`` pair when ``has_aux``; a bad return raises naming ``name``."""
    if not has_aux:
        return f

    def f_with_aux(*args, **kwargs):
        return _split_aux(f(*args, **kwargs), True, name)

    return f_with_aux


def value_and_grad(f, argnums=0, has_aux=False):
    """Like :func:`grad`, but the new function returns ``(value, gradient)``.

    >>> import autodiff.numpy as anp
    >>> value, g = value_and_grad(lambda x: x * x)(3.0)
    >>> float(value), g
    (9.0, 6.0)
    """

    def value_and_grad_f(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        with open_tape() as tape:
            traced, record = trace_arguments(tape, args, nums)
            out, aux = _split_aux(f(*traced, **kwargs), has_aux, "grad")
        try:
            value, index = _scalar_output(out, tape)
            if index is None:  # the output does not depend on the arguments
                cts = [None] * len(tape.entries)
            else:
                cts = _backward.run(tape, {index: _one_like(value)}, free=not _traced(tape))
            grads = [gradient_of(args[i], i, record, cts) for i in nums]
        finally:
            release(tape)
        grads = tuple(grads) if isinstance(argnums, (tuple, list)) else grads[0]
        if has_aux:
            return (value, _unwrap_outputs(aux, tape)[0]), grads
        return value, grads

    value_and_grad_f.__name__ = f"value_and_grad({getattr(f, '__name__', 'f')})"
    return value_and_grad_f


def grad(f, argnums=0, has_aux=False):
    """Return a function computing the gradient of the scalar function ``f``.

    ``argnums`` (an int or a tuple of ints) picks the arguments to
    differentiate.  Each gradient mirrors its argument: arrays and floats get
    arrays and floats (zeros when unused); containers get containers, with
    ``None`` where no cotangent reached (see ``design.md`` section 2).

    >>> import autodiff.numpy as anp
    >>> grad(anp.sin)(0.0)
    1.0
    >>> grad(lambda x: x * grad(lambda y: x * y)(x))(1.0)
    2.0
    """
    value_and_grad_f = value_and_grad(f, argnums, has_aux)

    def grad_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    grad_f.__name__ = f"grad({getattr(f, '__name__', 'f')})"
    return grad_f


def _argnums(argnums, nargs, name="grad"):
    """``argnums`` as a tuple of distinct argument numbers, checked against a call with ``nargs`` arguments.

    The one check behind every transform's ``argnums`` (``name`` is the transform's, for the message).

    >>> _argnums((0, 2), 3), _argnums(1, 2)
    ((0, 2), (1,))
    >>> _argnums((1, 1), 2, "hvp")
    Traceback (most recent call last):
    ...
    ValueError: hvp: argnums=(1, 1) names argument 1 twice; list each argument once, e.g. argnums=(1,)
    """
    if argnums == 0 and type(argnums) is int and nargs:  # the usual case
        return (0,)
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    for n in nums:
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < nargs:
            raise ValueError(
                f"{name}: argnums={argnums!r} is out of range for a call with "
                f"{nargs} positional argument(s); use integers from 0 to {nargs - 1}"
            )
    _refuse_repeats(argnums, nums, name)
    return nums


def _refuse_repeats(argnums, nums, name):
    twice = next((n for k, n in enumerate(nums) if n in nums[:k]), None)
    if twice is not None:
        raise ValueError(
            f"{name}: argnums={argnums!r} names argument {twice} twice; list each argument once, "
            f"e.g. argnums={tuple(dict.fromkeys(nums))!r}"
        )


def on_arguments(f, args, nums):
    """``f`` as a function of ``args[n] for n in nums`` only, the other arguments held at their values."""
    if len(nums) == len(args) and all(n == k for k, n in enumerate(nums)):
        return f

    def f_of_chosen(*chosen):
        new = list(args)
        for n, x in zip(nums, chosen):
            new[n] = x
        return f(*new)

    return f_of_chosen


def _scalar_output(out, tape):
    value = out.value if type(out) is Traced and out.tape is tape else out
    plain = value_of(value)
    scalar = isinstance(plain, (float, int, np.generic)) or (type(plain) is np.ndarray and not example_shape(value))
    if not scalar:  # under vmap, the shape of one example
        raise TypeError(
            f"grad: the function must return a scalar, but it returned "
            f"{_describe(plain, example_shape(value))}. Reduce it to a scalar (e.g. `.sum()`), or use "
            "autodiff.jacobian / autodiff.vjp for non-scalar outputs"
        )
    if type(plain) is not float and _dtype(plain).kind == "c":
        raise TypeError(
            "grad: the function returned a complex scalar; grad needs a real one. "
            "Take `.real` or abs(...) of it, or use autodiff.vjp with a complex cotangent"
        )
    return value, (out.index if value is not out else None)


def _describe(value, shape=None):
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape if shape is None else shape}"
    return f"a {type(value).__name__}"


def _one_like(value):
    value = value_of(value)
    if isinstance(value, float):
        return 1.0
    return _dtype(value).type(1)


def _dtype(value):
    """The dtype of a scalar output: read off numpy scalars and 0-d arrays, worked out for the rest."""
    dtype = getattr(value, "dtype", None)
    return dtype if dtype is not None else np.result_type(value)
