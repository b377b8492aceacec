"""Task 8: per-example Jacobians of an MLP's logits with respect to its input, 784-128-10, batch 64.

Ours is ``vmap(jacrev(f))`` with ``f`` one example's logits ``(784,) -> (10,)``: under the ``vmap`` the
Jacobian's ten basis cotangents are pulled back together, one batched pullback for the whole batch
(issue 21).  torch's is ``torch.func.vmap(torch.func.jacrev(f))``.  The result is ``(64, 10, 784)``.
"""

from autodiff import jacrev, vmap

from ._so_mlp import classifier, torch_net, torch_params
from ._so_task import Task, allclose


def input_jacobians(torch=None, sizes=(784, 128, 10), batch=64, seed=0):
    """The task; ``problem`` has the model and the inputs."""
    model, x, _ = classifier(sizes, batch, seed)
    jacobians = vmap(jacrev(model))

    def ours():
        return [jacobians(x)]

    variants = {} if torch is None else {"torch.func vmap(jacrev)": _torch_vmap(torch, model, x)}
    # Each entry is a sum of 128 float64 products through tanh': rounding near 1e-16 of the largest term.
    return Task(f"per-example input Jacobians, MLP {'-'.join(map(str, sizes))}, batch {batch}", ours, variants,
                allclose("per-example Jacobians", rtol=1e-9, atol=1e-13), goal=1.0,
                note="ours: vmap(jacrev(f)); torch: torch.func.vmap(jacrev(f))",
                problem=dict(model=model, x=x))


def _torch_vmap(torch, model, x):
    ps, xt = torch_params(torch, model), torch.tensor(x)
    jacobians = torch.func.vmap(torch.func.jacrev(lambda xi: torch_net(torch, ps, xi)))

    def vmapped():
        return [jacobians(xt).numpy()]

    return vmapped
