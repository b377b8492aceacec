"""autodiff: tape-based reverse-mode and dual-number forward-mode AD over numpy, nestable to any order.

>>> import autodiff
>>> import autodiff.numpy as anp
>>> autodiff.grad(lambda x: anp.sin(x) * x)(0.0)
0.0
"""

from . import (
    _tangent_algebra,  # noqa: F401  (gives Tangent its arithmetic)
    numpy,  # noqa: F401  (installs array behaviour on traced values)
)
from ._accel import install as _install_accelerations
from ._accel.kernels import warmup
from ._ggn import ggnvp
from ._ggn_operator import GgnOperator, ggn_operator
from ._hessian import hessian
from ._higher import hvp, jvp, linearize
from ._holomorphic import holomorphic_grad
from ._hooks import accelerations
from ._hvp_operator import HvpOperator, hvp_operator
from ._jacobian import jacfwd, jacobian, jacrev
from ._jit import ConcretizationError, JitFallbackWarning, jit
from ._lazy import lazy_names
from ._remat import remat
from ._stop_gradient import stop_gradient
from ._structural import Tangent
from ._study.gradcheck import GradcheckError, gradcheck
from ._study.show import show, ties
from ._tangents import NoTangent, Thunk, ZeroTangent, unthunk
from ._traced import DetachError
from ._transforms import grad, value_and_grad
from ._vjp import vjp
from ._vmap import vmap
from .numpy import abssum, maxabs, scaled, sumsq

_install_accelerations()  # the accelerations fill their slots of the hook table (none under AUTODIFF_REFERENCE=1)


__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacobian", "jacrev", "jacfwd", "hessian", "hvp",
    "hvp_operator", "HvpOperator", "ggn_operator", "GgnOperator",
    "stop_gradient", "DetachError",
    "gradcheck", "GradcheckError", "sumsq", "abssum", "maxabs", "scaled", "warmup", "trace", "Trace",
    "show", "ties", "explain", "Explanation", "compare", "Comparison", "semantics_table",
    "holomorphic_grad", "ggnvp", "vmap", "remat", "jit", "ConcretizationError", "JitFallbackWarning",
    "Tangent", "Thunk", "ZeroTangent", "NoTangent", "unthunk", "accelerations",
]

# The study tools load on first use: most programs never call them, and they cost import time.
__getattr__, __dir__ = lazy_names(__name__, {
    "compare": "._study.compare", "Comparison": "._study.compare", "semantics_table": "._study.compare_semantics",
    "explain": "._study.explain", "Explanation": "._study.explain",
    "trace": "._study.trace", "Trace": "._study.trace"})
