"""``vjp``: the general reverse-mode transform, for any output structure, with a pullback callable many times.

``grad`` (:mod:`autodiff._transforms`) is its scalar special case, written out on its own so that a tape
pulled back once can be freed as it goes.
"""

import numpy as np

from ._arguments import gradient_of, trace_arguments
from ._calls import split_aux
from ._checks import at_output, check_cotangent
from ._hooks import hooks
from ._protection import protect, release
from ._traced import Traced, open_tape, value_of
from ._transforms import unwrap_outputs
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
        out, aux = split_aux(f(*args), has_aux, "vjp")
        out = split_tuple_outputs(out)
    value, outputs = unwrap_outputs(out, tape)
    pullback = Pullback(tape, primals, record, out, outputs)  # made first: it releases the tape, come what may
    aux = protect_results(tape, outputs, aux, has_aux)
    return (value, pullback, aux) if has_aux else (value, pullback)


def protect_results(tape, outputs, aux, has_aux):
    """``aux`` unwrapped off ``tape`` (with ``has_aux``); the arrays among the outputs and ``aux`` that are
    entries of ``tape`` protected, as a pullback (or a JVP rule) may read them: the caller must not change them."""
    if has_aux:
        aux, saved = unwrap_outputs(aux, tape)
        protect_saved(tape, saved)
    protect_saved(tape, outputs)
    return aux


def protect_saved(tape, outputs):
    """Protect (design.md section 10) the arrays among ``outputs`` that are entries of ``tape``."""
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
        cts = hooks.backward(self._tape, seeds_of(ct, self._outputs, "vjp pullback"))
        return tuple(gradient_of(p, i, self._record, cts) for i, p in enumerate(self._primals))


def seeds_of(ct, outputs, name):
    """``{entry index: cotangent}`` from ``ct``, checked leaf by leaf against ``outputs`` (``unwrap_outputs``'s
    list): the same structure, and each leaf of its output's exact shape and dtype."""
    given = leaves(ct)
    if len(given) != len(outputs):
        raise ValueError(
            f"{name}: the cotangent has {len(given)} leaf/leaves but the output "
            f"has {len(outputs)}; pass a cotangent with the output's structure"
        )
    seeds = {}
    for (path, leaf), (want_path, index, value) in zip(given, outputs):
        if path != want_path:
            raise ValueError(
                f"{name}: the cotangent has a leaf at {at_output(path)} where the output has one "
                f"at {at_output(want_path)}; pass a cotangent with the output's structure"
            )
        check_cotangent(path, leaf, value, name)
        if index is not None and leaf is not None:
            seeds[index] = seeds[index] + leaf if index in seeds else leaf
    return seeds


def split_tuple_outputs(out):
    """``out`` with each traced value that holds a tuple (the one output of a primitive with several, such as
    ``linalg.svd`` or ``eigh``) replaced by the tuple of its items, so that each item is an output leaf of
    its own, as it is when the function unpacks it."""

    def leaf_fn(path, leaf):
        return tuple(leaf) if type(leaf) is Traced and type(value_of(leaf)) is tuple else leaf

    return transform(out, leaf_fn, rebuild_node)
