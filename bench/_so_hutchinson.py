"""Task 6: Hutchinson's estimate of the Hessian's trace from 16 Rademacher probes, tanh MLP with cross-entropy.

Ours is ``hvp_operator(loss, model, x, labels).trace_estimate(16, seed)``.  torch gets the very same
probes (``_so_krylov.rademacher`` repeats the operator's draw) through a retained graph, one product
per probe, or all 16 at once through ``torch.func.vmap`` of ``jvp(grad)``.  The result is the estimate.
"""

import numpy as np

from autodiff import hvp_operator
from traversal import trainables

from ._so_krylov import TorchRetainedHvp, rademacher, shapes_of, unflatten
from ._so_mlp import classifier, loss, torch_net, torch_params
from ._so_task import Task, allclose


def hutchinson_trace(torch=None, sizes=(64, 128, 128, 10), batch=128, probes=16, seed=0):
    """The task; the defaults give 26,122 parameters."""
    model, x, labels = classifier(sizes, batch, seed)

    def ours():
        return [np.asarray(hvp_operator(loss, model, x, labels).trace_estimate(probes, seed))]

    n = sum(p.size for p in trainables(model))
    variants = {} if torch is None else _torch_variants(torch, model, x, labels, rademacher(n, probes, seed))
    # A sum of 16 products zᵀHz, each a sum of 26k float64 terms of mixed sign: rounding near 1e-14 of
    # the largest term.  1e-9 relative leaves room; a wrong probe or product is off by order one.
    return Task(f"Hutchinson trace, {probes} probes, MLP {'-'.join(map(str, sizes))} ({n} parameters)", ours,
                variants, allclose("Hutchinson trace", rtol=1e-9, atol=1e-12), goal=1.0,
                note="ours: hvp_operator(...).trace_estimate; torch: the same probes",
                problem=dict(model=model, x=x, labels=labels, loss=loss, probes=probes, seed=seed))


def _torch_variants(torch, model, x, labels, z):
    xt, yt = torch.tensor(x), torch.tensor(labels)
    cross_entropy = torch.nn.functional.cross_entropy
    zt = torch.tensor(z)
    shapes = shapes_of(trainables(model))
    flat = torch.cat([p.reshape(-1) for p in torch_params(torch, model)])

    def retained():
        params = torch_params(torch, model, requires_grad=True)
        hvp = TorchRetainedHvp(torch, params, cross_entropy(torch_net(torch, params, xt), yt))
        return [np.asarray(sum(probe @ hvp(probe) for probe in z) / len(z))]

    def flat_loss(p):
        return cross_entropy(torch_net(torch, unflatten(p, shapes), xt), yt)

    gradient = torch.func.grad(flat_loss)
    products = torch.func.vmap(lambda v: torch.func.jvp(gradient, (flat,), (v,))[1])

    def vmapped():
        return [((zt * products(zt)).sum() / len(z)).numpy()]

    return {"retained graph": retained, "torch.func vmap(jvp(grad))": vmapped}
