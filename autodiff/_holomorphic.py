"""holomorphic_grad: the complex derivative f'(z) of a holomorphic function (JAX's ``grad(holomorphic=True)``).

Under the engine's convention (docs/complex.md) a pullback is the transpose of the derivative, so
for a holomorphic ``f`` the pullback of the cotangent 1 is ``1 * f'(z)``: one ``vjp`` gives it.
"""

import numpy as np

from ._arguments import is_differentiable
from ._batching import example_shape
from ._calls import argnums_of
from ._paths import format_path
from ._traced import value_of
from ._trees import leaves
from ._vjp import vjp


def holomorphic_grad(f, argnums=0, has_aux=False):
    """Return a function computing ``f'(z)`` for a holomorphic ``f`` with a complex scalar output.

    The arguments in ``argnums`` (an int or a tuple of ints) must hold complex leaves only; the
    result mirrors them, as for :func:`autodiff.grad`.  For a function that is not holomorphic
    (``abs``, ``real``, ``conj``) the result is the pullback of 1, not a derivative: use ``grad``
    of a real-valued function there.  With ``has_aux``, ``f`` returns ``(out, aux)`` and the new
    function ``(f'(z), aux)``, as ``grad``'s does; keyword arguments are held, as ``grad`` holds them.

    >>> import autodiff.numpy as anp
    >>> complex(holomorphic_grad(lambda z: z ** 3)(1.0 + 2.0j))  # 3 z**2
    (-9+12j)
    >>> complex(holomorphic_grad(holomorphic_grad(anp.sin))(0.5j))  # -sin(z)
    -0.5210953054937474j
    """

    def holomorphic_grad_f(*args, **kwargs):
        nums = argnums_of(argnums, len(args), "holomorphic_grad")
        for n in nums:
            _check_complex(args[n], n)

        def f_of(*chosen):
            full = list(args)
            for n, x in zip(nums, chosen):
                full[n] = x
            return f(*full, **kwargs)

        out, pullback, *aux = vjp(f_of, *[args[n] for n in nums], has_aux=has_aux)
        grads = pullback(_complex_one(out))
        grads = grads if isinstance(argnums, (tuple, list)) else grads[0]
        return (grads, aux[0]) if has_aux else grads

    holomorphic_grad_f.__name__ = f"holomorphic_grad({getattr(f, '__name__', 'f')})"
    return holomorphic_grad_f


def _check_complex(arg, n):
    for path, leaf in leaves(arg, (n,)):
        value = value_of(leaf)
        if is_differentiable(value) and np.result_type(value).kind == "c":
            continue
        kind = f"of dtype {np.result_type(value)}" if is_differentiable(value) else f"a {type(value).__name__}"
        raise TypeError(
            f"holomorphic_grad: {format_path(path)} is {kind}, but a holomorphic derivative needs "
            "complex inputs; pass it as complex (x.astype(complex), or x + 0j), or use autodiff.grad "
            "for a real function of real inputs"
        )


def _complex_one(out):
    shape, out = example_shape(out), value_of(out)  # under vmap, one example's shape: a batch of scalars is fine
    if shape != () or np.result_type(out).kind != "c":
        raise TypeError(
            f"holomorphic_grad: the function must return a complex scalar, but it returned a value of "
            f"shape {shape} and dtype {np.result_type(out)}; a holomorphic function maps complex "
            "to complex (for a real-valued function of complex inputs, use autodiff.grad)"
        )
    return np.result_type(out).type(1)
