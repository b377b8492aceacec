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
from ._accel import backward as _accel_backward
from ._accel import batching as _accel_batching
from ._accel import elementwise as _accel_elementwise
from ._accel import flatten as _accel_flatten
from ._accel import record as _accel_record
from ._accel import reductions as _accel_reductions
from ._accel.kernels import warmup
from ._ggn import ggnvp
from ._ggn_operator import GgnOperator, ggn_operator
from ._hessian import hessian
from ._higher import hvp, jvp, linearize
from ._holomorphic import holomorphic_grad
from ._hvp_operator import HvpOperator, hvp_operator
from ._jacobian import jacfwd, jacobian, jacrev
from ._lazy import lazy_names
from ._remat import remat
from ._stop_gradient import stop_gradient
from ._structural import Tangent
from ._study.gradcheck import GradcheckError, gradcheck
from ._study.show import show, ties
from ._tangents import NoTangent, Thunk, ZeroTangent, unthunk
from ._transforms import grad, value_and_grad
from ._vjp import vjp
from ._vmap import vmap
from .numpy import abssum, maxabs, scaled, sumsq

_accel_backward.install()
_accel_record.install()  # the accelerations plug in beside the reference core (off under AUTODIFF_REFERENCE=1)
_accel_reductions.install()
_accel_batching.install()
_accel_flatten.install()
_accel_elementwise.install()

__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacobian", "jacrev", "jacfwd", "hessian", "hvp",
    "hvp_operator", "HvpOperator", "ggn_operator", "GgnOperator",
    "stop_gradient",
    "gradcheck", "GradcheckError", "sumsq", "abssum", "maxabs", "scaled", "warmup", "trace", "Trace",
    "show", "ties", "explain", "Explanation", "compare", "Comparison", "semantics_table",
    "holomorphic_grad", "ggnvp", "vmap", "remat",
    "Tangent", "Thunk", "ZeroTangent", "NoTangent", "unthunk",
]

# The study tools load on first use: most programs never call them, and they cost import time.
__getattr__, __dir__ = lazy_names(__name__, {
    "compare": "._study.compare", "Comparison": "._study.compare", "semantics_table": "._study.compare_semantics",
    "explain": "._study.explain", "Explanation": "._study.explain",
    "trace": "._study.trace", "Trace": "._study.trace"})
