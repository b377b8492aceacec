"""The transforms :func:`autodiff.trace` runs ``f`` under: which one was asked for, and how each runs.

``vjp``, ``jvp``, ``vmap`` and ``call`` fill one :class:`~autodiff.Trace`; ``linearize`` makes three
(:mod:`autodiff._study.linear_trace`).
"""

import inspect

import numpy as np

from .._higher import jvp
from .._traced import value_of
from .._trees import rebuild_node, transform
from .._vjp import vjp
from .._vmap import vmap

TRANSFORMS = ("vjp", "jvp", "linearize", "vmap", "call")


def chosen(transform, tangents, cotangent):
    """The transform asked for, refused with the fix when the arguments given do not fit it."""
    if transform is None:
        if tangents is not None and cotangent is not None:
            raise TypeError("trace: give tangents= (forward mode) or cotangent= (reverse mode), not both "
                            "(or both with transform='linearize': its linear program and its transpose)")
        transform = "jvp" if tangents is not None else "vjp"
    if transform not in TRANSFORMS:
        raise ValueError(f"trace: transform must be one of {', '.join(map(repr, TRANSFORMS))}, got {transform!r}")
    if tangents is not None and transform not in ("jvp", "linearize"):
        raise TypeError(f"trace: tangents= are pushed forward by transform='jvp' or 'linearize', not "
                        f"{transform!r}; give cotangent= (reverse mode) or drop tangents=")
    if cotangent is not None and transform not in ("vjp", "linearize"):
        raise TypeError(f"trace: cotangent= is pulled back by transform='vjp' or 'linearize', not {transform!r}; "
                        "give tangents= (forward mode) or drop cotangent=")
    if transform == "jvp" and tangents is None:
        raise TypeError("trace: transform='jvp' needs tangents=, one per argument (as jvp(f, args, tangents))")
    return transform


def _reverse(record, f, args, tangents, cotangent):
    out, pullback = vjp(f, *args)
    record.name_inputs(args)
    record.output = out
    record.gradients = pullback(ones_like(out) if cotangent is None else cotangent)


def _forward_mode(record, f, args, tangents, cotangent):
    record.output, record.tangent = jvp(f, tuple(args), tuple(tangents))


def _batched(record, f, args, tangents, cotangent):
    record.output = vmap(f)(*args)


def _call(record, f, args, tangents, cotangent):
    record.output = f(*args)


RUNS = {"vjp": _reverse, "jvp": _forward_mode, "vmap": _batched, "call": _call}


def ones_like(out):
    """Ones shaped like each leaf of ``out`` (a cotangent or a direction of ones); ``None`` stays ``None``."""
    def leaf_fn(path, leaf):
        v = value_of(leaf)
        if v is None:
            return None
        if np.ndim(v):
            return np.ones_like(v)
        return 1.0 if isinstance(v, float) else np.result_type(v).type(1)

    return transform(out, leaf_fn, rebuild_node)


def named(f, names):
    """``f`` with a signature naming its positional arguments, so a listing names its inputs."""
    f.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return f
