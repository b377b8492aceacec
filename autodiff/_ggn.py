"""ggnvp: the generalised Gauss-Newton matrix times a vector, for a loss ``g(f(primals))``.

The GGN ``G = J_fᵀ H_g J_f`` (Schraudolph 2002; Martens 2014) drops the term of the Hessian that
carries ``f``'s own curvature, so it is positive semidefinite whenever ``g`` is convex: the usual
curvature for Gauss-Newton, K-FAC-style and natural-gradient methods.  One product runs ``f``
once (``linearize``), pushes ``v`` along its record, takes one Hessian-vector product of ``g`` at
``f``'s output and pulls the result back over the same record.
"""

from ._higher import hvp, linearize


def ggnvp(f, g, primals, tangents):
    """``J_fᵀ H_g J_f v`` at ``primals`` for ``v = tangents``, in the structure of the primals.

    ``f`` maps the primals to an output (an array or a structure); ``g`` maps that output to a real
    scalar loss.  ``tangents`` mirrors ``primals``, as for :func:`autodiff.jvp` and :func:`autodiff.hvp`.
    When ``f`` is linear the GGN is the Hessian of ``g ∘ f``, so ``ggnvp`` equals ``hvp``.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> f = lambda w: anp.tanh(w)          # J_f = diag(1 - tanh(w)**2)
    >>> g = lambda y: anp.sum(y ** 2)      # H_g = 2 I
    >>> w, v = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    >>> (gv,) = ggnvp(f, g, (w,), (v,))
    >>> np.allclose(gv, 2 * (1 - np.tanh(w) ** 2) ** 2 * v)
    True
    """
    primals, tangents = tuple(primals), tuple(tangents)
    out, f_jvp = linearize(f, *primals)  # f runs once: J v pushed along its record, Jᵀ u pulled back over it
    (h_f_v,) = hvp(g, (out,), (f_jvp(*tangents),))
    return f_jvp.transpose(h_f_v)
