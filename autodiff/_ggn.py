"""ggnvp: the generalised Gauss-Newton matrix times a vector, for a loss ``g(f(primals))``.

The GGN ``G = J_fᵀ H_g J_f`` (Schraudolph 2002; Martens 2014) drops the term of the Hessian that
carries ``f``'s own curvature, so it is positive semidefinite whenever ``g`` is convex: the usual
curvature for Gauss-Newton, K-FAC-style and natural-gradient methods.  One product runs ``f``
once (``linearize``), pushes ``v`` along its record, takes one Hessian-vector product of ``g`` at
``f``'s output and pulls the result back over the same record.
"""

from ._calls import on_arguments
from ._directions import Variables, chosen_arguments
from ._higher import hvp, linearize, read_directions


def ggnvp(f, g, primals, tangents, argnums=None):
    """``J_fᵀ H_g J_f v`` at ``primals`` for ``v = tangents``, in the structure of the primals.

    ``f`` maps the primals to an output (an array or a structure); ``g`` maps that output to a real
    scalar loss.  Primals and tangents are read as :func:`autodiff.hvp` reads them: a tuple of
    positional arguments gives a tuple, one bare primal (an array, a model) with its bare tangent gives
    a bare result, and ``argnums`` moves only the arguments it names, the others held.
    When ``f`` is linear the GGN is the Hessian of ``g ∘ f``, so ``ggnvp`` equals ``hvp``.  For one bare
    argument the tangent may be a flat vector over ``traversal.destructure``'s parameter vector, and the
    result is flat too.  To apply one GGN to many vectors, record it once with :func:`autodiff.ggn_operator`.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> f = lambda w: anp.tanh(w)          # J_f = diag(1 - tanh(w)**2)
    >>> g = lambda y: anp.sum(y ** 2)      # H_g = 2 I
    >>> w, v = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    >>> (gv,) = ggnvp(f, g, (w,), (v,))
    >>> np.allclose(gv, 2 * (1 - np.tanh(w) ** 2) ** 2 * v)
    True
    >>> np.allclose(ggnvp(f, g, w, v), gv)
    True
    >>> ggnvp(lambda w, c: c * w, g, (w, 3.0), v, argnums=0)
    array([18., 18.])
    """
    args, nums, chosen, tangents, bare = chosen_arguments("ggnvp", primals, tangents, argnums)
    directions, flat = read_directions("ggnvp", Variables(chosen), tangents, bare)  # checked: errors name ggnvp
    out, f_jvp = linearize(on_arguments(f, args, nums), *chosen)  # f runs once: J v pushed, Jᵀ u pulled back
    (h_f_v,) = hvp(g, (out,), (f_jvp.push(directions),))
    result = f_jvp.transpose(h_f_v)
    return flat.gather(result) if flat else result[0] if bare else result
