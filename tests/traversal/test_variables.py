"""One notion of variable (design.md section 1, issue 38): what ``trainable`` leaves out is a constant for
every transform, exactly as for ``total``, ``trainables``, ``destructure`` and the optimisers.

Oracles: ``destructure``'s parameter count, a model whose constants are closed over (so no transform can
see them), finite differences (``gradcheck``) and PyTorch (``torch.func``) over the parameters only.
"""

import dataclasses

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
import traversal as tv
from autodiff import (
    ggn_operator,
    ggnvp,
    grad,
    hessian,
    hvp,
    hvp_operator,
    jacfwd,
    jacobian,
    jvp,
    linearize,
    value_and_grad,
    vjp,
    vmap,
)
from tests.trees import trainable_paths

CONSTANTS = ("running_mean", "running_var", "eps", "momentum")


def _model(dtype=np.float64):
    return layers.Chain([layers.Dense.init(4, 3, seed=1, dtype=dtype), layers.BatchNorm.init(3, dtype=dtype),
                         anp.tanh, layers.Dense.init(3, 2, seed=2, dtype=dtype)])


def _trained(model, x):
    """The model after one training step's statistics (running statistics that are not the initial ones)."""
    return model.forward(x, train=True)[1]


def _data(n=8, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 4)), rng.standard_normal((n, 2))


def _loss(train, x, y):
    def loss(m):
        out = m.forward(x, train=True)[0] if train else m(x)
        return anp.sum((out - y) ** 2) / len(x)
    return loss


def _flat(model, tree):
    """``tree`` (gradient-shaped) read at ``model``'s trainable paths, in ``destructure``'s order."""
    return np.concatenate([np.ravel(tv.getkeypath(tree, path)) for path, _ in trainable_paths(model)])


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_grad_is_none_at_every_non_trainable_field(train):
    x, y = _data()
    model = _trained(_model(), x)
    for _ in range(3):  # the third call reads the model through a compiled layout (off in reference mode)
        g = grad(_loss(train, x, y))(model)
        bn = g.layers[1]
        assert all(getattr(bn, name) is None for name in CONSTANTS)
        assert bn.gamma.shape == (3,) and bn.beta.shape == (3,)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_the_gradient_is_the_derivative_with_the_constants_closed_over(train):
    x, y = _data()
    model = _trained(_model(), x)
    loss = _loss(train, x, y)
    bn = model.layers[1]

    def closed(gamma, beta):  # the constants out of every transform's sight
        return loss(dataclasses.replace(model, layers=[model.layers[0], dataclasses.replace(bn, gamma=gamma,
                                                                                             beta=beta),
                                                       *model.layers[2:]]))

    g = grad(loss)(model)
    g_gamma, g_beta = grad(closed, argnums=(0, 1))(bn.gamma, bn.beta)
    np.testing.assert_array_equal(g.layers[1].gamma, g_gamma)
    np.testing.assert_array_equal(g.layers[1].beta, g_beta)
    assert autodiff.gradcheck(loss, model, order=2)


def test_per_example_gradients_have_the_trainable_count():
    x, y = _data()
    model = _trained(_model(), x)
    per_example = vmap(grad(lambda m, xi, yi: _loss(False, xi[None], yi[None])(m)), in_axes=(None, 0, 0))(model, x, y)
    flat, _ = tv.destructure(per_example)
    count = tv.total(np.size, model)
    assert type(count) is int and count == tv.destructure(model)[0].size
    assert flat.size == len(x) * count
    bn = per_example.layers[1]
    assert all(getattr(bn, name) is None for name in CONSTANTS) and bn.gamma.shape == (len(x), 3)


def test_total_of_sizes_is_an_int_in_both_modes():
    model = _model()
    n = tv.total(np.size, model)
    assert type(n) is int and n == sum(p.size for p in tv.trainables(model))
    assert type(tv.total(autodiff.sumsq, model)) is not int  # a float sum stays a float


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_a_direction_built_with_rebuild_or_fmap_moves_the_parameters_only(train):
    x, y = _data()
    model = _trained(_model(), x)
    loss = _loss(train, x, y)
    flat, rebuild = tv.destructure(model)
    v = np.random.default_rng(3).standard_normal(flat.size)
    direction = rebuild(v)  # the model's own constants (eps, running statistics) at their positions
    zeros_there = tv.fmap(lambda a: a, direction)
    bn = zeros_there.layers[1]
    zeros_there.layers[1] = dataclasses.replace(bn, running_mean=np.zeros(3), running_var=np.zeros(3), eps=0.0,
                                                momentum=0.0)
    for d in (direction, zeros_there):
        hv = hvp(loss, model, d)
        assert all(getattr(hv.layers[1], name) is None for name in CONSTANTS)
        np.testing.assert_allclose(_flat(model, hv), _flat(model, hvp(loss, model, direction)), rtol=1e-13)
        np.testing.assert_allclose(jvp(loss, model, d)[1], _flat(model, grad(loss)(model)) @ v, rtol=1e-12)
    ones = tv.fmap(np.ones_like, model, exclude=tv.isnumeric)  # ones at the statistics too: ignored
    np.testing.assert_allclose(jvp(loss, model, ones)[1], _flat(model, grad(loss)(model)).sum(), rtol=1e-12)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_every_transform_treats_the_constants_alike(train):
    x, y = _data()
    model = _trained(_model(), x)
    loss = _loss(train, x, y)
    v = tv.destructure(model)[1](np.random.default_rng(4).standard_normal(tv.total(np.size, model)))
    expected = _flat(model, hvp(loss, model, v))
    results = {
        "forward_over_reverse": hvp(loss, model, v, mode="forward_over_reverse"),
        "hvp_operator": hvp_operator(loss, model)(v),
        "ggnvp of the identity": ggnvp(lambda m: m, loss, model, v),
    }
    for name, hv in results.items():
        assert all(getattr(hv.layers[1], n) is None for n in CONSTANTS), name
        np.testing.assert_allclose(_flat(model, hv), expected, rtol=1e-10, atol=1e-13, err_msg=name)
    out, f_jvp = linearize(loss, model)
    np.testing.assert_allclose(f_jvp(v), jvp(loss, model, v)[1], rtol=1e-12)
    pulled = vjp(loss, model)[1](1.0)[0].layers[1]
    assert all(getattr(pulled, n) is None for n in CONSTANTS)
    for jac in (jacobian(loss)(model), jacfwd(loss)(model), hessian(loss)(model).layers[1].gamma):
        assert all(getattr(jac.layers[1], n) is None for n in CONSTANTS)
    op = ggn_operator(lambda m: m(x) if not train else m.forward(x, train=True)[0],
                      lambda out: anp.sum((out - y) ** 2) / len(x), model)
    assert all(getattr(op(v).layers[1], n) is None for n in CONSTANTS)


def test_value_and_grad_with_aux_in_training_mode_as_the_readme_does():
    x, y = _data()
    model = _model()

    def loss(m):
        out, updated = m.forward(x, train=True)
        return anp.sum((out - y) ** 2), updated

    (value, updated), g = value_and_grad(loss, has_aux=True)(model)
    bn = g.layers[1]
    assert bn.running_mean is None and bn.eps is None and bn.gamma.shape == (3,)
    assert not np.array_equal(updated.layers[1].running_mean, model.layers[1].running_mean)


def _torch_loss(torch, model, x, y, train):
    """The same loss in torch, a function of the parameters only (torch's buffers are constants)."""
    bn = model.layers[1]
    t = lambda a: torch.tensor(np.asarray(a))  # noqa: E731
    xt, yt, mean, var = t(x), t(y), t(bn.running_mean), t(bn.running_var)

    def loss(w1, b1, gamma, beta, w2, b2):
        h = xt @ w1.T + b1
        h = torch.nn.functional.batch_norm(h, mean.clone(), var.clone(), gamma, beta, training=train,
                                           momentum=bn.momentum, eps=bn.eps)
        out = torch.tanh(h) @ w2.T + b2
        return ((out - yt) ** 2).sum() / len(x)

    return loss


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_hvp_along_rebuild_equals_torch_over_the_parameters_only(train):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    from torch.func import grad as tgrad
    from torch.func import jvp as tjvp

    x, y = _data()
    model = _trained(_model(), x)
    flat, rebuild = tv.destructure(model)
    v = np.random.default_rng(5).standard_normal(flat.size)
    ours = _flat(model, hvp(_loss(train, x, y), model, rebuild(v)))
    params = tuple(torch.tensor(np.asarray(p)) for p in tv.trainables(model))
    directions = tuple(torch.tensor(np.asarray(d)) for d in tv.trainables(rebuild(v)))
    f = _torch_loss(torch, model, x, y, train)
    _, theirs = tjvp(lambda *p: tgrad(f, argnums=tuple(range(6)))(*p), params, directions)
    np.testing.assert_allclose(ours, np.concatenate([t.numpy().ravel() for t in theirs]), rtol=1e-12, atol=1e-12)


def test_a_tie_between_a_trainable_and_a_non_trainable_position_is_one_variable():
    """design.md section 3: the array is the variable, moved wherever it sits (total and update agree)."""
    w = np.array([0.5, -1.0, 2.0])
    bn = layers.BatchNorm(w, np.zeros(3), w, np.ones(3))  # gamma and running_mean one array
    x = np.random.default_rng(6).standard_normal((5, 3))
    loss = lambda m: anp.sum(m(x) ** 2)  # noqa: E731  (eval mode: running_mean is read)
    g = grad(loss)(bn)
    assert g.running_mean is None  # the tie's gradient sits at its trainable occurrence
    assert autodiff.gradcheck(loss, bn)
    moved = hvp(loss, bn, tv.fmap(np.ones_like, bn, exclude=tv.isnumeric))
    assert moved.running_mean is None and moved.gamma.shape == (3,)


def test_the_compiled_layout_sees_a_changed_trainable_selection():
    """A layout compiled for one selection of trainable children must not serve a model with another."""

    @dataclasses.dataclass
    class Switch:
        a: np.ndarray
        b: np.ndarray
        frozen: str = "b"

    tv.trainable.register(Switch)(lambda s: tuple(k for k in ("a", "b") if k != s.frozen))
    loss = lambda s: anp.sum(s.a * s.b)  # noqa: E731
    for _ in range(3):
        g = grad(loss)(Switch(np.ones(2), np.full(2, 2.0)))
        assert g.b is None and np.array_equal(g.a, np.full(2, 2.0))
    g = grad(loss)(Switch(np.ones(2), np.full(2, 2.0), frozen="a"))
    assert g.a is None and np.array_equal(g.b, np.ones(2))


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_a_dp_sgd_norm_over_every_leaf_of_the_gradient_counts_the_parameters_only(train):
    """Summing every leaf of a per-example gradient (the issue's DP-SGD norm) must equal the norm over the
    trainable parameters: no leaf of eps or the statistics is left to count."""
    x, y = _data()
    model = _trained(_model(), x)
    g = grad(_loss(train, x[:3], y[:3]))(model)
    every_leaf = sum(float(np.sum(np.square(leaf))) for leaf in tv.fleaves(g)
                     if isinstance(leaf, (np.ndarray, float)))
    parameters = sum(float(np.sum(np.square(tv.getkeypath(g, path)))) for path, _ in trainable_paths(model))
    np.testing.assert_allclose(every_leaf, parameters, rtol=1e-14)
    np.testing.assert_allclose(float(tv.total(autodiff.sumsq, model, g)), parameters, rtol=1e-12)
