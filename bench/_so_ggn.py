"""Task 2: one Gauss-Newton-vector product ``Jᵀ H J v`` for a tanh MLP with softmax cross-entropy.

``f`` maps the model to the logits, ``g`` the logits to the mean cross-entropy.  Ours is the generic
``autodiff.ggnvp(f, g, (model,), (v,))`` (a ``jvp`` of ``f``, an ``hvp`` of ``g``, a ``vjp`` of ``f``).
torch gets three routes: torch.func ``jvp`` + the closed-form softmax cross-entropy Hessian + ``vjp``
(what a torch user writes), the same with torch.func's ``hvp`` of the loss in place of the closed form,
and plain autograd, where ``J v`` comes from the double-vjp trick on one recorded forward.
"""

import numpy as np

from autodiff import ggnvp
from layers.losses import softmax_cross_entropy
from traversal import fmap, isnumeric, trainables

from ._so_mlp import classifier, torch_net, torch_params
from ._so_task import Task, allclose


def ggn_product(torch=None, sizes=(64, 128, 128, 10), batch=128, seed=0):
    """The task; the defaults give 26,122 parameters."""
    model, x, labels = classifier(sizes, batch, seed)
    rng = np.random.default_rng(seed + 1)
    v = fmap(lambda p: rng.standard_normal(p.shape), model, exclude=isnumeric)

    def f(m):
        return m(x)

    def g(logits):
        return softmax_cross_entropy(logits, labels)

    def ours():
        (gv,) = ggnvp(f, g, (model,), (v,))
        return trainables(gv)

    variants = {} if torch is None else _torch_variants(torch, model, v, x, labels)
    n = sum(p.size for p in trainables(model))
    # Every product is a sum of at most a few hundred float64 terms per layer, three layers deep, in a
    # different order on each side: differences stay near 1e-14 relative; 1e-9 leaves room, and any
    # wrong rule is off by order one.  atol covers entries that cancel to zero.
    return Task(f"Gauss-Newton-vector product, MLP {'-'.join(map(str, sizes))} ({n} parameters, batch {batch})",
                ours, variants, allclose("GGN product", rtol=1e-9, atol=1e-12), goal=1.0,
                note="ours: autodiff.ggnvp", problem=dict(model=model, x=x, labels=labels, v=v, f=f, g=g))


def _torch_variants(torch, model, v, x, labels):
    ps, vs = tuple(torch_params(torch, model)), tuple(torch.tensor(a) for a in trainables(v))
    xt, yt, batch = torch.tensor(x), torch.tensor(labels), len(labels)
    func = torch.func

    def net(*params):
        return torch_net(torch, params, xt)

    def closed_form_hessian(logits, jv):
        """The softmax cross-entropy Hessian (diag(p) - p pᵀ) / batch applied to each row of ``jv``."""
        p = torch.softmax(logits, dim=1)
        return (p * jv - p * (p * jv).sum(dim=1, keepdim=True)) / batch

    def closed_form():
        logits, jv = func.jvp(net, ps, vs)
        _, pullback = func.vjp(net, *ps)
        return [t.numpy() for t in pullback(closed_form_hessian(logits.detach(), jv))]

    def loss_hvp():
        logits, jv = func.jvp(net, ps, vs)
        hjv = func.jvp(func.grad(lambda z: torch.nn.functional.cross_entropy(z, yt)), (logits,), (jv,))[1]
        _, pullback = func.vjp(net, *ps)
        return [t.numpy() for t in pullback(hjv)]

    def double_vjp():
        params = [p.detach().requires_grad_() for p in ps]
        logits = net(*params)
        u = torch.zeros_like(logits, requires_grad=True)  # Jᵀu is linear in u: its vjp along v is J v
        jtu = torch.autograd.grad(logits, params, u, create_graph=True)
        jv = torch.autograd.grad(jtu, u, vs)[0]
        hjv = closed_form_hessian(logits.detach(), jv)
        return [t.numpy() for t in torch.autograd.grad(logits, params, hjv)]

    return {"torch.func, closed-form loss Hessian": closed_form, "torch.func, hvp of the loss": loss_hvp,
            "autograd, double-vjp trick": double_vjp}
