"""Task 4: one MAML meta-gradient with 5 inner SGD steps, sine-wave few-shot regression (as examples/maml.py).

Ours takes each inner step with ``optimisers.setup(Descent(lr), m)`` and ``optimisers.update``, as a
training step is taken, and differentiates the query loss through all of them with ``value_and_grad``.
torch takes functional steps ``p - lr * g``: with ``autograd.grad(create_graph=True)`` (retained graph),
or with ``torch.func.grad`` nested in ``torch.func.grad_and_value``.  Results: the meta-loss, then the
meta-gradient per parameter.
"""

import numpy as np

from autodiff import grad, value_and_grad
from layers import MLP
from layers.losses import mse
from optimisers import Descent, setup, update
from traversal import trainables

from ._so_mlp import torch_net, torch_params
from ._so_task import Task, allclose


def sine_tasks(rng, n_tasks, k):
    """``n_tasks`` sine waves (random amplitude and phase), each a support and a query set of ``k`` points."""
    out = []
    for _ in range(n_tasks):
        amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)
        out.append([(x, amplitude * np.sin(x + phase)) for x in rng.uniform(-5, 5, (2, k, 1))])
    return out


def maml_meta_step(torch=None, sizes=(1, 40, 40, 1), meta_batch=4, k=10, inner_steps=5, inner_lr=0.01, seed=0):
    """The task: ``meta_batch`` sine tasks of ``k`` support and ``k`` query points, a float64 tanh MLP."""
    model = MLP(list(sizes), dtype=np.float64, seed=seed)
    batch = sine_tasks(np.random.default_rng(seed), meta_batch, k)

    def meta_loss(model):
        total = 0.0
        for (xs, ys), (xq, yq) in batch:
            adapted, state = model, setup(Descent(inner_lr), model)
            for _ in range(inner_steps):
                state, adapted = update(state, adapted, grad(lambda m: mse(m(xs), ys))(adapted))  # noqa: B023
            total = total + mse(adapted(xq), yq)
        return total / len(batch)

    def ours():
        value, g = value_and_grad(meta_loss)(model)
        return [np.asarray(value)] + trainables(g)

    variants = {} if torch is None else _torch_variants(torch, model, batch, inner_steps, inner_lr)
    # Five second-order inner steps of a 40-wide float64 network: rounding differences near 1e-13 relative
    # (tests/models/test_differentiable_optimisers.py holds the same loop to these bounds against torch).
    return Task(f"MAML meta-step, {inner_steps} inner Descent steps through optimisers.update, "
                f"MLP {'-'.join(map(str, sizes))}, {meta_batch} tasks of {k}+{k} points",
                ours, variants, allclose("MAML meta-gradient", rtol=1e-9, atol=1e-12), goal=1.0,
                note="ours: value_and_grad through setup(Descent) + update",
                problem=dict(model=model, meta_loss=meta_loss))


def _torch_variants(torch, model, batch, inner_steps, inner_lr):
    tasks = [[(torch.tensor(x), torch.tensor(y)) for x, y in task] for task in batch]

    def mse_of(params, x, y):
        return ((torch_net(torch, params, x) - y) ** 2).mean()

    def retained():
        params = torch_params(torch, model, requires_grad=True)
        total = 0.0
        for (xs, ys), (xq, yq) in tasks:
            adapted = params
            for _ in range(inner_steps):
                grads = torch.autograd.grad(mse_of(adapted, xs, ys), adapted, create_graph=True)
                adapted = [p - inner_lr * g for p, g in zip(adapted, grads)]
            total = total + mse_of(adapted, xq, yq)
        meta = total / len(tasks)
        return [meta.detach().numpy()] + [g.numpy() for g in torch.autograd.grad(meta, params)]

    inner_grad = torch.func.grad(mse_of)

    def meta_loss(params):
        total = 0.0
        for (xs, ys), (xq, yq) in tasks:
            adapted = params
            for _ in range(inner_steps):
                adapted = tuple(p - inner_lr * g for p, g in zip(adapted, inner_grad(adapted, xs, ys)))
            total = total + mse_of(adapted, xq, yq)
        return total / len(tasks)

    grad_and_value = torch.func.grad_and_value(meta_loss)
    ps = tuple(torch_params(torch, model))

    def func():
        g, value = grad_and_value(ps)
        return [value.numpy()] + [t.numpy() for t in g]

    return {"retained graph (create_graph=True)": retained, "torch.func": func}
