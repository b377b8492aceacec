"""The one road to the gradient: grad -> value_and_grad -> tape -> backward.

``value_and_grad`` traces the arguments (:mod:`autodiff._arguments`), runs ``f`` on them, which records its
primitives on a tape (:mod:`autodiff._primitive`), pulls a 1 back through the tape (:mod:`autodiff._backward`)
and mirrors the cotangents of the inputs back into the arguments' structures.  ``vjp``
(:mod:`autodiff._vjp`) is the general form, for any output and a reusable pullback.
"""

import numpy as np

from ._arguments import gradient_of, trace_arguments
from ._calls import argnums_of, split_aux
from ._hooks import hooks
from ._output_checks import check_scalar_output
from ._protection import release
from ._traced import Traced, _state, open_tape, value_of
from ._trees import rebuild_node, transform


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


def value_and_grad(f, argnums=0, has_aux=False):
    """Like :func:`grad`, but the new function returns ``(value, gradient)``.

    >>> import autodiff.numpy as anp
    >>> value, g = value_and_grad(lambda x: x * x)(3.0)
    >>> float(value), g
    (9.0, 6.0)
    """

    def value_and_grad_f(*args, **kwargs):
        nums = argnums_of(argnums, len(args))
        with open_tape() as tape:
            traced, record = trace_arguments(tape, args, nums)
            out, aux = split_aux(f(*traced, **kwargs), has_aux, "grad")
        try:
            value, index = _scalar_output(out, tape)
            if index is None:  # the output does not depend on the arguments
                cts = [None] * len(tape.entries)
            else:
                cts = hooks.backward(tape, {index: _one_like(value)}, free=not _traced(tape))
            grads = [gradient_of(args[i], i, record, cts) for i in nums]
        finally:
            release(tape)
        grads = tuple(grads) if isinstance(argnums, (tuple, list)) else grads[0]
        if has_aux:
            return (value, unwrap_outputs(aux, tape)[0]), grads
        return value, grads

    value_and_grad_f.__name__ = f"value_and_grad({getattr(f, '__name__', 'f')})"
    return value_and_grad_f


def _scalar_output(out, tape):
    """``out``'s value (traced at lower levels only) and its entry on ``tape`` (``None``: it is a constant)."""
    value = out.value if type(out) is Traced and out.tape is tape else out
    check_scalar_output(value)
    return value, (out.index if value is not out else None)


def _one_like(value):
    value = value_of(value)
    return 1.0 if isinstance(value, float) else np.result_type(value).type(1)


def _traced(tape):
    """Is ``autodiff.trace`` recording ``tape`` (so its entries must outlive the backward pass)?"""
    tracer = _state.__dict__.get("tracer")
    return tracer is not None and tape in tracer.tapes


def unwrap_outputs(out, tape):
    """Strip this tape's tracing from ``out``; list ``(key path, entry index or None, value)`` per leaf."""
    outputs = []

    def leaf_fn(path, leaf):
        if type(leaf) is Traced and leaf.tape is tape:
            outputs.append((path, leaf.index, leaf.value))
            return leaf.value
        outputs.append((path, None, leaf))
        return leaf

    return transform(out, leaf_fn, rebuild_node), outputs
