"""PyTorch as the oracle: gradients and Hessian-vector products on the same inputs."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp

torch = pytest.importorskip("torch", reason="torch is the oracle; install with pip install -e '.[test]'")


def mlp_loss(params, x, y, lib):
    w1, b1, w2, b2 = params
    h = lib.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return ((out - y) ** 2).mean()


def logsumexp(x, lib):
    c = x.max() if lib is torch else np.max(autodiff.stop_gradient(x))
    return lib.log(lib.exp(x - c).sum()) + c


def rosenbrock(x, lib):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def _mlp_case(rng):
    params = [rng.standard_normal(s) * 0.5 for s in [(4, 8), (8,), (8, 3), (3,)]]
    return params, rng.standard_normal((5, 4)), rng.standard_normal((5, 3))


def _torch_grad_and_hvp(f, params, vs):
    ts = [torch.tensor(p, requires_grad=True) for p in params]
    loss = f(ts)
    gs = torch.autograd.grad(loss, ts, create_graph=True)
    dot = sum((g * torch.tensor(v)).sum() for g, v in zip(gs, vs))
    hv = torch.autograd.grad(dot, ts)
    return [g.detach().numpy() for g in gs], [h.numpy() for h in hv]


def _ours(f, params, vs):
    g = autodiff.grad(lambda ps: f(ps))(params)
    hv = autodiff.hvp(lambda ps: f(ps), (params,), (vs,))[0]
    return g, hv


CASES = {
    "mlp": lambda rng: _mlp_case(rng),
    "logsumexp": lambda rng: ([rng.standard_normal(7) * 3],),
    "rosenbrock": lambda rng: ([rng.standard_normal(6)],),
}


def _functions(name, case, lib):
    if name == "mlp":
        _, x, y = case
        xx, yy = (torch.tensor(x), torch.tensor(y)) if lib is torch else (x, y)
        return lambda ps: mlp_loss(ps, xx, yy, lib)
    single = {"logsumexp": logsumexp, "rosenbrock": rosenbrock}[name]
    return lambda ps: single(ps[0], lib)


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_and_hvp_match_torch(name):
    rng = np.random.default_rng(0)
    case = CASES[name](rng)
    params = list(case[0])
    vs = [rng.standard_normal(p.shape) for p in params]
    tg, thv = _torch_grad_and_hvp(_functions(name, case, torch), params, vs)
    og, ohv = _ours(_functions(name, case, anp), params, vs)
    for a, b in zip(og, tg):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(ohv, thv):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
