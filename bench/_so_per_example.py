"""Task 3: per-example gradients and the empirical Fisher diagonal, MLP 784-128-10, batch 64.

Ours is a loop of ``grad`` over the examples, the fastest generic route today: ``jacobian`` of the
per-example loss vector runs one pullback of the whole batch per example, so its weight gradients are
64 full ``(784, 64) @ (64, 128)`` products where the loop does 64 outer products.  torch's is
``torch.func.vmap(grad)``.  The Fisher diagonal is the mean over examples of the squared gradients.
No goal yet: it joins the goals once ``vmap`` lands (issue 21).
"""

import numpy as np

from autodiff import grad
from traversal import trainables

from ._so_mlp import classifier, loss, torch_net, torch_params
from ._so_task import Task, allclose


def per_example_gradients(torch=None, sizes=(784, 128, 10), batch=64, seed=0):
    """The task: results are the per-example gradients (one ``(batch, *shape)`` array per parameter),
    then the Fisher diagonal (one array per parameter)."""
    model, x, labels = classifier(sizes, batch, seed)
    gradient = grad(loss)

    def ours():
        rows = [trainables(gradient(model, x[i:i + 1], labels[i:i + 1])) for i in range(batch)]
        stacked = [np.stack(column) for column in zip(*rows)]
        return stacked + [np.mean(g * g, axis=0) for g in stacked]

    variants = {} if torch is None else {"torch.func vmap(grad)": _torch_vmap(torch, model, x, labels)}
    # One example's gradient is a chain of two float64 matrix products of length <= 784: rounding differences
    # near 1e-15 relative; the Fisher squares them.  1e-9 leaves room; atol covers entries near zero.
    return Task(f"per-example gradients and Fisher diagonal, MLP {'-'.join(map(str, sizes))}, batch {batch}",
                ours, variants, allclose("per-example gradients", rtol=1e-9, atol=1e-13), goal=None,
                note="ours: a loop of grad; joins the goals once vmap lands (issue 21)",
                problem=dict(model=model, x=x, labels=labels))


def _torch_vmap(torch, model, x, labels):
    ps, xt, yt = tuple(torch_params(torch, model)), torch.tensor(x), torch.tensor(labels)

    def one(params, xi, yi):
        return torch.nn.functional.cross_entropy(torch_net(torch, params, xi[None]), yi[None])

    per_example = torch.func.vmap(torch.func.grad(one), in_dims=(None, 0, 0))

    def vmapped():
        stacked = per_example(ps, xt, yt)
        return [g.numpy() for g in stacked] + [(g * g).mean(dim=0).numpy() for g in stacked]

    return vmapped
