"""ggnvp against PyTorch (dense J_fᵀ H_g J_f, and torch.func's jvp/vjp with autograd's hvp) and against hvp."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import ggnvp, hvp
from autodiff.nn import functional as F
from tests.oracle import needs_torch, torch

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")  # torch.func

rng = np.random.default_rng(0)
X = rng.standard_normal((5, 3))
Y = np.eye(4)[[0, 2, 1, 3, 2]]  # one-hot targets


def net(w, b, lib):
    return lib.tanh(X @ w + b) if lib is anp else torch.tanh(torch.tensor(X) @ w + b)


def cross_entropy(logits, lib):
    if lib is anp:
        return -anp.sum(F.log_softmax(logits) * Y)
    return -torch.sum(torch.log_softmax(logits, -1) * torch.tensor(Y))


PARAMS = (rng.standard_normal((3, 4)), rng.standard_normal(4))
TANGENTS = (rng.standard_normal((3, 4)), rng.standard_normal(4))


def _dense_torch_ggn_v():
    """J_fᵀ H_g J_f v with every matrix built densely by torch."""
    flat = np.concatenate([p.ravel() for p in PARAMS])
    v = np.concatenate([t.ravel() for t in TANGENTS])

    def f_flat(theta):
        return net(theta[:12].reshape(3, 4), theta[12:], torch).reshape(-1)

    jac = torch.autograd.functional.jacobian(f_flat, torch.tensor(flat))  # (20, 16)
    out = f_flat(torch.tensor(flat)).detach()
    hess = torch.autograd.functional.hessian(lambda o: cross_entropy(o.reshape(5, 4), torch), out)  # (20, 20)
    return (jac.T @ hess @ jac @ torch.tensor(v)).numpy()


@needs_torch
def test_ggnvp_matches_dense_construction():
    gw, gb = ggnvp(lambda w, b: net(w, b, anp), lambda o: cross_entropy(o, anp), PARAMS, TANGENTS)
    want = _dense_torch_ggn_v()
    assert np.allclose(np.concatenate([gw.ravel(), gb.ravel()]), want)


@needs_torch
def test_ggnvp_matches_torch_func():
    ps = tuple(torch.tensor(p) for p in PARAMS)
    ts = tuple(torch.tensor(t) for t in TANGENTS)
    out, jv = torch.func.jvp(lambda w, b: net(w, b, torch), ps, ts)
    _, hjv = torch.autograd.functional.hvp(lambda o: cross_entropy(o, torch), out, jv)
    _, pullback = torch.func.vjp(lambda w, b: net(w, b, torch), *ps)
    want = pullback(hjv)
    got = ggnvp(lambda w, b: net(w, b, anp), lambda o: cross_entropy(o, anp), PARAMS, TANGENTS)
    for g, w in zip(got, want):
        assert np.allclose(g, w.numpy())


def test_ggnvp_of_a_linear_map_is_the_hessian_vector_product():
    a = rng.standard_normal((6, 3))
    loss = lambda o: anp.sum(anp.exp(o)) + anp.sum(o ** 4)  # noqa: E731
    x, v = rng.standard_normal(3), rng.standard_normal(3)
    (got,) = ggnvp(lambda x: a @ x, loss, (x,), (v,))
    (want,) = hvp(lambda x: loss(a @ x), (x,), (v,))
    assert np.allclose(got, want)


def test_ggnvp_drops_the_curvature_of_f():
    """For f = sin and g = sum: H_g = 0, so the GGN is 0 while the Hessian of g∘f is not."""
    x, v = np.array([0.3, 1.2]), np.array([1.0, -1.0])
    (got,) = ggnvp(anp.sin, anp.sum, (x,), (v,))
    assert np.array_equal(got, np.zeros(2))
    assert not np.allclose(hvp(lambda x: anp.sum(anp.sin(x)), (x,), (v,))[0], 0)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ggnvp_keeps_dtype_and_structure(dtype):
    params = {"w": PARAMS[0].astype(dtype), "b": PARAMS[1].astype(dtype)}
    tangents = {"w": TANGENTS[0].astype(dtype), "b": TANGENTS[1].astype(dtype)}
    (got,) = ggnvp(lambda p: net(p["w"], p["b"], anp), lambda o: cross_entropy(o, anp), (params,), (tangents,))
    assert set(got) == {"w", "b"} and all(g.dtype == dtype for g in got.values())
    if dtype == np.float64:  # gradcheck's finite differences widen float32 primals, not these tangents
        assert autodiff.gradcheck(lambda p: ggnvp(lambda q: net(q["w"], q["b"], anp),
                                                  lambda o: cross_entropy(o, anp), (p,), (tangents,))[0], params)
