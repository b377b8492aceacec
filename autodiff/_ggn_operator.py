"""``ggn_operator``: the generalised Gauss-Newton matrix at fixed primals, recorded once, applied to many vectors.

``ggnvp`` runs the model again for every product.  The operator runs it once: ``linearize`` records ``f``
at the primals (``J v`` is a push along that record, ``Jᵀ u`` a pull back over it), and
``hvp_operator`` records the loss's gradient at ``f``'s output (``H_g u`` is one backward pass).  Each
product ``G v = Jᵀ H_g J v`` is then three passes over records, with neither ``f`` nor ``g`` run again.
"""

from ._calls import argnums_of, on_arguments
from ._higher import linearize
from ._hvp_operator import hvp_operator
from ._parameter_operator import ParameterOperator
from ._parameter_vector import ParameterVector


def ggn_operator(f, g, *primals, argnums=0, has_aux=False):
    """The GGN ``G = J_fᵀ H_g J_f`` of the loss ``g(f(primals))`` as a linear operator: ``op(v)`` is ``ggnvp``.

    ``f`` maps the primals to an output (an array or a structure; with ``has_aux``, ``(output, aux)``, and
    ``ggn_operator`` returns ``(op, aux)``); ``g`` maps that output to a real scalar loss.  ``argnums``
    means what it means for :func:`hvp_operator`: an int gives the GGN in that argument (``v`` and
    ``op(v)`` mirror it), a tuple the joint one (a tuple of directions); the others are held.  Like
    :class:`HvpOperator`, ``op(v)`` also takes a flat vector over ``traversal.destructure``'s parameter
    vector and answers flat, and ``op.as_linear_operator()``, ``op.hutchinson(n)``, ``op.trace_estimate(n)``,
    ``op.shape`` and ``op.dtype`` read the matrix over that vector.  Non-trainable children (BatchNorm's
    running statistics) are constants.  ``op.value`` is the loss, ``op.output`` is ``f``'s output and
    ``op.gradient`` the loss's gradient (one more pull back, on first use).

    ``f`` and ``g`` run once, here; the operator keeps their records (and the arrays they read
    read-only) until it is garbage-collected.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> from autodiff import ggnvp
    >>> f = lambda w, x: anp.tanh(x @ w)
    >>> g = lambda y: anp.sum(y ** 2)
    >>> w, x = np.array([0.5, -1.0]), np.array([[1.0, 2.0], [0.5, 0.0], [1.0, 1.0]])
    >>> op = ggn_operator(f, g, w, x)                    # the GGN in w, x held
    >>> op
    GgnOperator(shape=(2, 2), dtype=float64)
    >>> v = np.array([1.0, -2.0])
    >>> bool(np.allclose(op(v), ggnvp(f, g, (w, x), v, argnums=0)))
    True
    >>> J = (1 - np.tanh(x @ w) ** 2)[:, None] * x       # the dense GGN, 2 Jᵀ J
    >>> bool(np.allclose(op.as_linear_operator() @ np.eye(2), 2 * J.T @ J))
    True
    """
    nums = argnums_of(argnums, len(primals), "ggn_operator")
    chosen = tuple(primals[n] for n in nums)
    out, f_jvp, *aux = linearize(on_arguments(f, primals, nums), *chosen, has_aux=has_aux)
    op = GgnOperator(f_jvp, hvp_operator(g, out), out, argnums)
    return (op, aux[0]) if has_aux else op


class GgnOperator(ParameterOperator):
    """The operator :func:`ggn_operator` returns; ``op(v)`` is ``G v`` in ``v``'s kind: mirroring the
    argument, or flat over the parameter vector."""

    _name = "ggn_operator"

    def __init__(self, f_jvp, curvature, out, argnums):
        self._f_jvp, self._curvature, self._argnums = f_jvp, curvature, argnums
        self._variables = f_jvp.variables
        self._bare = not isinstance(argnums, (tuple, list))
        self._parameters = ParameterVector(self._variables, self._variables.homes())
        self.value, self.output = curvature.value, out
        self._gradient = None

    @property
    def gradient(self):
        """The loss's gradient ``J_fᵀ ∇g`` at the primals, in their structure."""
        if self._gradient is None:
            self._gradient = self._structure(self._f_jvp.pull(self._curvature.gradient))
        return self._gradient

    def _pull(self, directions):
        """``Jᵀ H_g J v`` per variable: pushed along ``f``'s record, through ``g``'s, back over ``f``'s."""
        pushed = self._f_jvp.push(directions)
        return self._f_jvp.pull(self._curvature(pushed))

    def _structure(self, per_variable):
        result = self._variables.as_gradient(per_variable)
        return result[0] if self._bare else result
