"""A pullback as a program: every op a rule calls, the masks it builds from its inputs included.

A rule reads the values it builds masks and selections from through ``value_of``, which strips every level
of differentiation, so those ops (``max``'s ``x == ans``, the count of ties, the division) run on plain
arrays and no tape records them: a listing shows their result as a frozen constant, ``multiply(g, [0.5,
0.5, 0.0])``.  ``value_of`` keeps ``vmap``'s batch levels, since a mask still differs per example.  So the
rule is run once more on the same values as a batch of one example, where every op it calls, the mask's
included, is a push of that batch level that :mod:`autodiff._study.batch_watch` observes.  What the listing
then shows is the rule itself, valid at every input: ``equal(x, ans)``, ``sum``, ``divide``, ``where``.

Limits, said where they apply: a rule's Python branch on a value (``prod``'s "is any element zero?") is no
op, so the program shows the branch taken at this input; what a primitive's forward saved for its pullback
(its residuals) and a tuple-valued output or cotangent are given as they are, constants of the program.
"""

import inspect

import numpy as np

from .._primitive import pull
from .._tangents import ZeroTangent
from .._traced import value_of
from .._vmap import vmap


def parameter_names(prim, args, wrt):
    """The names of ``args`` at ``wrt``: the primitive's own parameter names when it has them, else ``x``
    (one) or ``x1, x2, ...`` as numpy calls them."""
    try:
        params = [p.name for p in inspect.signature(getattr(prim, "fun", prim)).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= len(args):
        return [params[i] for i in wrt]
    return ["x"] if len(wrt) == 1 else [f"x{i + 1}" for i in wrt]


def rule_program(entry, g, residuals=None, where=""):
    """The :class:`~autodiff.Trace` of one entry's pullback ``(x..., ans, g) -> cotangents``, every op it
    calls listed (a one-example ``vmap`` of it, whose batch columns are left out of the listing); ``where``
    says which entry it is (``tape 1 %3 ``), in the heading.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> x = np.array([1.0, 1.0, 0.0])
    >>> entry = (anp.max, [None], [0], np.max(x), [x], {})
    >>> print(rule_program(entry, 1.0))  # doctest: +NORMALIZE_WHITESPACE
    rule of max: its pullback as a program (every op it calls; masks included)
      in  %0 g float64[]
      %1 = broadcast_to(%0, (3,)) -> float64[3]
      in  %2 x float64[3]
      in  %3 ans float64[]
      %4 = equal(%2, %3) -> bool[3]
      %5 = sum(%4, axis=None, keepdims=True) -> int64[1]
      %6 = divide(%4, %5) -> float64[3]
      %7 = cast(%6, dtype('float64')) -> float64[3]
      %8 = greater(%7, 0) -> bool[3]
      %9 = multiply(%1, %7) -> float64[3]
      %10 = where(%8, %9, 0.0) -> float64[3]
      out cotangent of x = %10
    """
    from .trace import trace  # trace imports this module
    from .trace_transforms import named

    prim, _, argnums, ans, args, kwargs = entry
    values = [value_of(a) for a in args]
    names = parameter_names(prim, values, argnums)
    inputs = dict(zip(names + ["ans", "g"], [values[i] for i in argnums] + [value_of(ans), value_of(g)]))
    axes = {n: _axes(v) for n, v in inputs.items()}
    returned = []

    def pullback(*batched):
        given = dict(zip(inputs, batched))
        full = list(values)
        for i, n in zip(argnums, names):
            full[i] = given[n]
        cts = pull(prim, given["g"], argnums, given["ans"], full, kwargs, residuals)
        returned.extend(cts)
        return tuple(c for c in cts if type(c) is not ZeroTangent)

    one = [_one_example(v, axes[n]) for n, v in inputs.items()]
    record = trace(vmap(named(pullback, list(inputs)), in_axes=tuple(axes.values())), *one, transform="call")
    record.title = f"rule of {where}{prim.__name__}: its pullback as a program (every op it calls; masks included)"
    parents = [f" (for %{p})" if where else "" for p in entry[1]]  # the tape's rows the cotangents go to
    record.label_outputs = _labeller([f"cotangent of {n}{p}" for n, p in zip(names, parents)], returned)
    return record


def _axes(v):
    """The batch axis of an input: 0 for a number or an array, one per part of a tuple (a multi-output op's
    value or cotangent), ``None`` for what is not an array (a symbolic zero)."""
    if isinstance(v, tuple):
        return tuple(_axes(part) for part in v)
    return 0 if isinstance(v, (np.ndarray, np.generic, float, int, complex)) else None


def _one_example(v, axis):
    if isinstance(v, tuple):
        return tuple(_one_example(part, a) for part, a in zip(v, axis))
    return v if axis is None else np.asarray(v)[None]


def _labeller(labels, returned):
    """Name the program's outputs: ``cotangent of x = %10``, or a symbolic zero."""

    def label(graphs):
        if not graphs:  # the rule called no op on its inputs
            return
        graph = graphs[-1]  # the one batch level
        graph.labelled = [(label, graph.row_of(c), c) for label, c in zip(labels, returned)]
        graph.outputs = [row for _, row, _ in graph.labelled if row is not None]

    return label
