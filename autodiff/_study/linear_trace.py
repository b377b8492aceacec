"""``trace(f, *args, transform="linearize")``: the three programs of :func:`autodiff.linearize`, as listings.

``linearize(f, *args)`` runs ``f`` once and records it (the *primal program*); ``f_jvp(t)`` pushes a tangent
along that record through the JVP rules (the *linear program*: every op on ``t``, the primal values it reads
being constants, as in JAX's ``make_jaxpr(f_jvp)``); ``f_jvp.transpose(ct)`` pulls a cotangent back through
the same record (the *transposed program*: each entry's pullback).  Each is traced on a tape of its own and
listed in :func:`autodiff.trace`'s format; the linear and transposed programs' own cotangents are not shown
(they would be one more derivative).
"""



from .._higher import linearize
from .trace_transforms import named, ones_like

_TITLES = ("linearize: the primal program, run once and recorded",
           "linear program: f_jvp({t}) pushes the tangents along the record",
           "transposed: f_jvp.transpose({ct}) pulls the cotangent back along the record")


def linearization(f, args, tangents, cotangent, values):
    """The :class:`Linearization` of ``f`` at ``args``: tangents and cotangent are ones unless given.

    >>> import autodiff.numpy as anp
    >>> from autodiff import trace
    >>> print(trace(lambda x: anp.sin(x) * 2.0, 0.5, transform="linearize"))
    linearize: the primal program, run once and recorded
    tape 1 (level 1)
      in  %0 x float64[]
      %1 = sin(%0:float64[]) -> float64[]  keeps %0
      %2 = multiply(%1:float64[], 2.0) -> float64[]  keeps %1
      out %2
    linear program: f_jvp(dx) pushes the tangents along the record
    tape 1 (level 1)
      in  %0 dx float64[]
      %1 = sin_backward(%0:float64[], 0.5) -> float64[]  keeps %0
      %2 = multiply(%1:float64[], 2.0) -> float64[]  keeps %1
      out %2
    transposed: f_jvp.transpose(ct) pulls the cotangent back along the record
    tape 1 (level 1)
      in  %0 ct float64[]
      %1 = multiply(%0:float64[], 2.0) -> float64[]  keeps %0
      %2 = sin_backward(%1:float64[], 0.5) -> float64[]  keeps %1
      out %2
    """
    from .trace import Trace, _argument_names, recording, trace  # trace calls this module

    primal = Trace(_argument_names(f, len(args)))
    primal.args, primal.values, primal.transform = args, values, "vjp"
    with recording(primal):
        out, f_jvp = linearize(f, *args)
    primal.output = out
    primal.name_inputs(args)
    names = ["d" + n for n in primal.arg_names]
    tangents = tuple(ones_like(a) for a in args) if tangents is None else tuple(tangents)
    linear = trace(named(lambda *t: f_jvp(*t), names), *tangents, values=values)
    ct = ones_like(out) if cotangent is None else cotangent
    transposed = trace(named(lambda ct: f_jvp.transpose(ct), ["ct"]), ct, values=values)
    for record in (linear, transposed):
        record.silent.update(id(t) for t in record.tapes)
    return Linearization(primal, linear, transposed, ", ".join(names))


class Linearization:
    """The three traces of ``linearize``: ``primal``, ``linear`` (``f_jvp``) and ``transposed``; ``output`` is
    ``f(*args)``, ``tangent`` is ``J t`` and ``gradients`` is ``Jᵀ ct``."""

    def __init__(self, primal, linear, transposed, tangent_names):
        self.primal, self.linear, self.transposed = primal, linear, transposed
        self.output, self.tangent, self.gradients = primal.output, linear.output, transposed.output
        self._titles = [t.format(t=tangent_names, ct="ct") for t in _TITLES]

    def __str__(self):
        parts = (self.primal, self.linear, self.transposed)
        return "\n".join(f"{title}\n{part}" for title, part in zip(self._titles, parts))

    __repr__ = __str__
