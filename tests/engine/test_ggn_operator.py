"""ggn_operator (issue 38): the GGN recorded once, applied to many vectors, structured or flat.

Oracles: ``ggnvp`` at the same point, PyTorch's ``J_fᵀ H_g J_f v`` (torch.func's jvp and vjp around
autograd's hvp) and the dense GGN built by torch; a counter proves neither ``f`` nor ``g`` runs again.
"""

import numpy as np
import pytest

import autodiff.numpy as anp
import layers
import traversal as tv
from autodiff import ggn_operator, ggnvp, hvp, hvp_operator
from autodiff.nn import functional as F
from tests.oracle import needs_torch, torch

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

rng = np.random.default_rng(0)
X = rng.standard_normal((6, 3))
Y = np.eye(4)[[0, 2, 1, 3, 2, 0]]
PARAMS = (rng.standard_normal((3, 4)), rng.standard_normal(4))


def net(w, b):
    return anp.tanh(X @ w + b)


def cross_entropy(logits):
    return -anp.sum(F.log_softmax(logits) * Y)


def _directions(n, seed=1):
    r = np.random.default_rng(seed)
    return [(r.standard_normal((3, 4)), r.standard_normal(4)) for _ in range(n)]


def test_the_operator_equals_ggnvp_and_runs_f_and_g_once():
    calls = {"f": 0, "g": 0}

    def f(w, b):
        calls["f"] += 1
        return net(w, b)

    def g(out):
        calls["g"] += 1
        return cross_entropy(out)

    op = ggn_operator(f, g, *PARAMS, argnums=(0, 1))
    made = dict(calls)
    for v in _directions(4):
        got = op(v)
        want = ggnvp(net, cross_entropy, PARAMS, v)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert made == {"f": 1, "g": 1}  # f linearised once, g's gradient recorded once
    assert calls == made  # four products, no run of f or g


@needs_torch
def test_the_operator_equals_torchs_ggn_product():
    ps = tuple(torch.tensor(p) for p in PARAMS)
    torch_net = lambda w, b: torch.tanh(torch.tensor(X) @ w + b)  # noqa: E731
    torch_ce = lambda o: -torch.sum(torch.log_softmax(o, -1) * torch.tensor(Y))  # noqa: E731
    op = ggn_operator(net, cross_entropy, *PARAMS, argnums=(0, 1))
    for v in _directions(3, seed=2):
        out, jv = torch.func.jvp(torch_net, ps, tuple(torch.tensor(t) for t in v))
        _, hjv = torch.autograd.functional.hvp(torch_ce, out, jv)
        want = torch.func.vjp(torch_net, *ps)[1](hjv)
        for a, b in zip(op(v), want):
            np.testing.assert_allclose(a, b.numpy(), rtol=1e-12, atol=1e-13)


@needs_torch
def test_the_linear_operator_is_torchs_dense_ggn():
    flat = np.concatenate([p.ravel() for p in PARAMS])

    def f_flat(theta):
        return torch.tanh(torch.tensor(X) @ theta[:12].reshape(3, 4) + theta[12:]).reshape(-1)

    jac = torch.autograd.functional.jacobian(f_flat, torch.tensor(flat))
    out = f_flat(torch.tensor(flat)).detach()
    hess = torch.autograd.functional.hessian(
        lambda o: -torch.sum(torch.log_softmax(o.reshape(6, 4), -1) * torch.tensor(Y)), out)
    dense = (jac.T @ hess @ jac).numpy()
    op = ggn_operator(net, cross_entropy, *PARAMS, argnums=(0, 1))
    assert op.shape == (16, 16) and op.dtype == np.float64
    np.testing.assert_allclose(op.as_linear_operator() @ np.eye(16), dense, rtol=1e-11, atol=1e-13)
    v = np.random.default_rng(3).standard_normal(16)
    np.testing.assert_allclose(op(v), dense @ v, rtol=1e-11, atol=1e-13)  # a flat vector gives a flat vector


def _model_and_loss():
    model = layers.Chain([layers.Dense.init(3, 5, seed=1, dtype=np.float64), layers.BatchNorm.init(5, dtype=np.float64),
                          anp.tanh, layers.Dense.init(5, 4, seed=2, dtype=np.float64)])
    model = model.forward(X, train=True)[1]  # running statistics that are not the initial ones
    return model, (lambda m: m(X)), cross_entropy


def test_a_model_takes_structured_or_flat_directions_and_each_gives_its_own_kind():
    model, f, g = _model_and_loss()
    op = ggn_operator(f, g, model)
    flat, rebuild = tv.destructure(model)
    assert op.shape == (flat.size, flat.size)
    v = np.random.default_rng(4).standard_normal(flat.size)
    structured = op(rebuild(v))
    flat_result = op(v)
    assert type(flat_result) is np.ndarray and flat_result.shape == (flat.size,)
    np.testing.assert_allclose(tv.destructure(tv.fmap(lambda p, d: d, model, structured, exclude=tv.isnumeric))[0],
                               flat_result, rtol=1e-12)
    want = ggnvp(f, g, model, rebuild(v))
    assert want.layers[1].running_mean is None and structured.layers[1].eps is None
    np.testing.assert_allclose(tv.destructure(tv.fmap(lambda p, d: d, model, want, exclude=tv.isnumeric))[0],
                               flat_result, rtol=1e-12)


def test_the_hvp_operator_takes_flat_vectors_too():
    model, f, g = _model_and_loss()
    loss = lambda m: g(f(m))  # noqa: E731
    op = hvp_operator(loss, model)
    flat, rebuild = tv.destructure(model)
    v = np.random.default_rng(5).standard_normal(flat.size)
    structured = hvp(loss, model, rebuild(v))
    np.testing.assert_allclose(op(v), tv.destructure(tv.fmap(lambda p, d: d, model, structured,
                                                             exclude=tv.isnumeric))[0], rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(op(v), op.as_linear_operator() @ v, rtol=1e-14)


def test_a_linear_model_makes_the_ggn_the_hessian():
    w = rng.standard_normal((3, 4))
    op = ggn_operator(lambda w: X @ w, cross_entropy, w)
    hop = hvp_operator(lambda w: cross_entropy(X @ w), w)
    np.testing.assert_allclose(op.as_linear_operator() @ np.eye(12), hop.as_linear_operator() @ np.eye(12),
                               rtol=1e-11, atol=1e-13)


def test_value_gradient_aux_and_estimates():
    op, aux = ggn_operator(lambda w, b: (net(w, b), "note"), cross_entropy, *PARAMS, argnums=0, has_aux=True)
    assert aux == "note"
    np.testing.assert_allclose(op.value, cross_entropy(net(*PARAMS)))
    from autodiff import grad
    np.testing.assert_allclose(op.gradient, grad(lambda w: cross_entropy(net(w, PARAMS[1])))(PARAMS[0]), rtol=1e-12)
    dense = op.as_linear_operator() @ np.eye(12)
    assert np.isclose(op.trace_estimate(2000, seed=0), np.trace(dense), rtol=0.1)
    np.testing.assert_allclose(op.hutchinson(3, seed=1).sum(), op.trace_estimate(3, seed=1), rtol=1e-12)


def test_bad_flat_vectors_are_refused_naming_the_operator():
    model, f, g = _model_and_loss()
    op = ggn_operator(f, g, model)
    with pytest.raises(ValueError, match=r"ggn_operator: a flat direction must have the parameter vector's length"):
        op(np.ones(3))
    pair = ggn_operator(net, cross_entropy, *PARAMS, argnums=(0, 1))
    with pytest.raises(ValueError, match=r"ggn_operator: .*tuple of 2 directions.*flat vector of length 16"):
        pair(np.ones(3))


def test_hvp_ggnvp_and_jvp_take_a_flat_vector_over_destructures_parameters():
    model, f, g = _model_and_loss()
    loss = lambda m: g(f(m))  # noqa: E731
    flat, rebuild = tv.destructure(model)
    v = np.random.default_rng(6).standard_normal(flat.size)
    hv = hvp(loss, model, v)
    assert type(hv) is np.ndarray and hv.shape == flat.shape
    np.testing.assert_allclose(hv, tv.destructure(hvp(loss, model, rebuild(v)))[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(hv, hvp_operator(loss, model)(v), rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(hvp(loss, model, v, mode="forward_over_reverse"), hv, rtol=1e-11, atol=1e-14)
    gv = ggnvp(f, g, model, v)
    np.testing.assert_allclose(gv, tv.destructure(ggnvp(f, g, model, rebuild(v)))[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gv, ggn_operator(f, g, model)(v), rtol=1e-12, atol=1e-14)
    from autodiff import grad, jvp
    np.testing.assert_allclose(jvp(loss, model, v)[1], tv.destructure(grad(loss)(model))[0] @ v, rtol=1e-12)
    with pytest.raises(ValueError, match=r"hvp: a flat direction must have the parameter vector's length"):
        hvp(loss, model, np.ones(3))
    w = np.array([1.0, 2.0])  # one bare 1-d argument: a direction of its shape is both kinds at once
    np.testing.assert_allclose(hvp(lambda w: anp.sum(w ** 3), w, np.ones(2)), 6 * w)
