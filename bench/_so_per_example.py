"""Task 3: per-example gradients and the empirical Fisher diagonal, MLP 784-128-10, batch 64.

Ours is ``vmap(grad(loss), in_axes=(None, 0, 0))`` of one example's loss (issue 21): one batched call in
the model's structure, a leading batch axis on every leaf.  torch's is ``torch.func.vmap(grad)``.  The Fisher
diagonal is the mean over examples of the squared gradients.
"""

import numpy as np

from autodiff import grad, vmap
from layers.losses import softmax_cross_entropy
from traversal import trainables

from ._so_mlp import classifier, torch_net, torch_params
from ._so_task import Task, allclose


def one_loss(model, x, label):
    """One example's loss: ``x`` of shape ``(inputs,)`` and one integer label."""
    return softmax_cross_entropy(model(x), label)


def per_example_gradients(torch=None, sizes=(784, 128, 10), batch=64, seed=0):
    """The task: results are the per-example gradients (one ``(batch, *shape)`` array per parameter),
    then the Fisher diagonal (one array per parameter)."""
    model, x, labels = classifier(sizes, batch, seed)
    per_example = vmap(grad(one_loss), in_axes=(None, 0, 0))

    def ours():
        stacked = trainables(per_example(model, x, labels))
        return stacked + [np.mean(g * g, axis=0) for g in stacked]

    variants = {} if torch is None else {"torch.func vmap(grad)": _torch_vmap(torch, model, x, labels)}
    # One example's gradient is a chain of two float64 matrix products of length <= 784: rounding differences
    # near 1e-15 relative; the Fisher squares them.  1e-9 leaves room; atol covers entries near zero.
    return Task(f"per-example gradients and Fisher diagonal, MLP {'-'.join(map(str, sizes))}, batch {batch}",
                ours, variants, allclose("per-example gradients", rtol=1e-9, atol=1e-13), goal=1.0,
                note="ours: vmap(grad); torch: torch.func.vmap(grad)",
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
