"""The programs of the second-order suite (issue 20, item 5): each task ours beside torch's approaches.

Each setup function takes ``torch`` (the module, or ``None`` to build ours alone) and returns a
:class:`Task`: ``ours()`` and every ``torch_variants[name]()`` run one call and return numpy results,
``check(ours_result, torch_result)`` raises ``AssertionError`` unless they agree to rounding (run it
before timing anything), and ``goal`` is the issue's bound on ours over the fastest torch variant.
Sizes are float64 and keep one call well under a second on two cores.  Timing is the harness's job.

=========================================  ====================  ======================================
task                                       goal                  torch variants
=========================================  ====================  ======================================
top-5 Hessian eigenvalues, convnet (21k)   ≤ 1.2×                retained graph, torch.func
Gauss-Newton-vector product, MLP           ≤ 1.0×                torch.func (closed form / hvp), autograd
per-example gradients + Fisher diagonal    ≤ 1.0×                torch.func vmap(grad)
MAML meta-step, 5 inner steps              ≤ 1.0×                retained graph, torch.func
inverse-HVP by 10 CG steps, D=500 N=2000   ≤ 1.0×                retained graph, torch.func
grad with 1-D w against w[:, None]         ≤ 1.2×                ours with w[:, None] (not torch)
Hutchinson trace, 16 probes                ≤ 1.0×                retained graph, torch.func vmap
per-example input Jacobians, MLP           ≤ 1.0×                torch.func vmap(jacrev)
=========================================  ====================  ======================================

>>> [task.goal for task in tasks()]
[1.2, 1.0, 1.0, 1.0, 1.0, 1.2, 1.0, 1.0]
"""

from ._so_convnet import convnet_eigenvalues
from ._so_ggn import ggn_product
from ._so_hutchinson import hutchinson_trace
from ._so_influence import influence_cg, logistic_grad_1d
from ._so_jacobian import input_jacobians
from ._so_maml import maml_meta_step
from ._so_per_example import per_example_gradients
from ._so_task import Task, allclose

SETUPS = (convnet_eigenvalues, ggn_product, per_example_gradients, maml_meta_step, influence_cg,
          logistic_grad_1d, hutchinson_trace, input_jacobians)

__all__ = ["Task", "allclose", "tasks", "SETUPS", "convnet_eigenvalues", "ggn_product", "per_example_gradients",
           "maml_meta_step", "influence_cg", "logistic_grad_1d", "hutchinson_trace", "input_jacobians"]


def tasks(torch=None):
    """Every task at its benchmark size, in the order of the table above."""
    return [setup(torch) for setup in SETUPS]
