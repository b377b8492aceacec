"""``autodiff.remat``: one entry keeping only a block's inputs, its forward run again in the backward pass.

Values and derivatives are checked against the same program without ``remat`` (computed by the engine's own
ops) and against finite differences (``gradcheck``, orders 1 and 2); the memory a recorded forward holds is
measured in a fresh process (``bench/memory_chain.py``)."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import gradcheck, remat
from bench import memory_chain
from tests.trees import leaves

RNG = np.random.default_rng(3)
W1, W2 = RNG.standard_normal((3, 4)) / 2, RNG.standard_normal((4, 3)) / 2
B1 = RNG.standard_normal(4) / 4
X = RNG.standard_normal((5, 3))


def block(h, params):
    w1, b1, w2 = params["w1"], params["b1"], params["w2"]
    return anp.tanh(anp.tanh(h @ w1 + b1) @ w2)


PARAMS = {"w1": W1, "b1": B1, "w2": W2}


def loss(params, x, step=block):
    h = step(step(x, params), params)
    return anp.sum(h * h)


def _close(a, b, rtol=1e-12):
    for (_, u), (_, v) in zip(leaves(a), leaves(b)):
        np.testing.assert_allclose(u, v, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("policy", [None, ("matmul",)])
def test_values_and_gradients_are_those_of_the_program_without_remat(policy):
    step = remat(block, policy=policy)
    value, grads = autodiff.value_and_grad(loss)(PARAMS, X, step)
    want_value, want_grads = autodiff.value_and_grad(loss)(PARAMS, X)
    assert value == pytest.approx(want_value, rel=1e-14)
    _close(grads, want_grads)
    gx = autodiff.grad(loss, argnums=1)(PARAMS, X, step)  # only the data differentiated: weights are constants
    _close(gx, autodiff.grad(loss, argnums=1)(PARAMS, X))


@pytest.mark.parametrize("policy", [None, ("matmul",)])
def test_gradcheck_orders_one_and_two(policy):
    step = remat(lambda h, w1, b1, w2: block(h, {"w1": w1, "b1": b1, "w2": w2}), policy=policy)
    f = lambda x, w1, b1: anp.sum(step(x, w1, b1, W2) ** 2)  # noqa: E731
    assert gradcheck(f, X[:2], W1, B1, order=1)
    assert gradcheck(f, X[:2], W1, B1, order=2)


def test_grad_of_grad_and_hessian_vector_products_match_the_program_without_remat():
    step = remat(block)
    v = {"w1": np.ones_like(W1), "b1": np.ones_like(B1), "w2": np.ones_like(W2)}

    def norm_of_grad(x, step):
        g = autodiff.grad(loss)(PARAMS, x, step)
        return sum(anp.sum(v * v) for v in g.values())

    _close(autodiff.grad(norm_of_grad)(X, step), autodiff.grad(norm_of_grad)(X, block), rtol=1e-10)
    for mode in ("forward_over_reverse", "reverse_over_forward"):
        got = autodiff.hvp(lambda p: loss(p, X, step), (PARAMS,), (v,), mode=mode)
        want = autodiff.hvp(lambda p: loss(p, X), (PARAMS,), (v,), mode=mode)
        _close(got, want, rtol=1e-10)


def test_remat_nests_in_itself():
    inner = remat(lambda h, w: anp.tanh(h @ w))
    outer = remat(lambda h, w: inner(inner(h, w), w.T) * 2.0)
    plain = lambda h, w: anp.tanh(anp.tanh(h @ w) @ w.T) * 2.0  # noqa: E731
    f = lambda w, step: anp.sum(step(step(X, w), w) ** 2)  # noqa: E731
    _close(autodiff.grad(f)(W1 @ W2, outer), autodiff.grad(f)(W1 @ W2, plain))
    assert gradcheck(lambda w: f(w, outer), W1 @ W2, order=2)


def test_jvp_and_linearize_through_remat():
    step = remat(block)
    t = RNG.standard_normal(X.shape)
    got = autodiff.jvp(lambda x: loss(PARAMS, x, step), (X,), (t,))
    want = autodiff.jvp(lambda x: loss(PARAMS, x), (X,), (t,))
    _close(got, want)
    _, f_jvp = autodiff.linearize(lambda x: loss(PARAMS, x, step), X)
    _close(f_jvp(t), want[1])
    _close(f_jvp.transpose(1.0), autodiff.grad(loss, argnums=1)(PARAMS, X))


def test_vmap_of_remat_and_remat_under_per_example_gradients():
    step = remat(block)
    per_example = lambda x, step: anp.sum(step(x[None], PARAMS) ** 2)  # noqa: E731
    got = autodiff.vmap(lambda x: per_example(x, step))(X)
    np.testing.assert_allclose(got, [per_example(x, block) for x in X], rtol=1e-12)
    grads = autodiff.vmap(autodiff.grad(per_example), in_axes=(0, None))(X, step)
    np.testing.assert_allclose(grads, np.stack([autodiff.grad(per_example)(x, block) for x in X]), rtol=1e-12)
    total = autodiff.grad(lambda p: anp.sum(autodiff.vmap(lambda x: anp.sum(step(x[None], p) ** 2))(X)))(PARAMS)
    _close(total, autodiff.grad(lambda p: loss_rows(p))(PARAMS))


def loss_rows(p):
    return anp.sum(block(X, p) ** 2)


def test_the_policy_reads_saved_matmuls_back_instead_of_computing_them():
    calls = {"n": 0}
    matmul = anp.matmul
    original = matmul.fun

    def counted(*args, **kwargs):
        calls["n"] += 1
        return original(*args, **kwargs)

    step = remat(block, policy=("matmul",))
    matmul.fun = counted
    try:
        _, pullback = autodiff.vjp(lambda p: loss(p, X, step), PARAMS)
        forward = calls["n"]
        calls["n"] = 0
        pullback(1.0)
        backward_with_policy = calls["n"]
        _, pullback = autodiff.vjp(lambda p: loss(p, X, remat(block)), PARAMS)
        calls["n"] = 0
        pullback(1.0)
        backward_without = calls["n"]
    finally:
        matmul.fun = original
    assert forward == 4  # two blocks of two matmuls
    assert backward_without == backward_with_policy + 4  # the policy's pass computes none of the four again


def test_a_call_with_nothing_differentiated_is_a_plain_call():
    assert remat(lambda x: x * 2.0)(3.0) == 6.0


def test_bad_uses_are_refused_with_the_fix():
    with pytest.raises(TypeError, match="remat: expected a function"):
        remat(3.0)
    with pytest.raises(TypeError, match="policy= takes the names of primitives"):
        remat(block, policy=3)
    pair = remat(lambda x: (x, x))
    with pytest.raises(TypeError, match="returned a tuple"):
        autodiff.grad(lambda x: pair(x)[0])(1.0)
    w = np.ones((3, 3))

    def closes_over(w, x):
        return anp.sum(remat(lambda h: h @ w)(x))  # w, being differentiated, reaches f by a closure

    with pytest.raises(ValueError, match="pass that value to the function as an argument"):
        autodiff.grad(closes_over, argnums=(0, 1))(w, X)
    g = autodiff.grad(closes_over)(w, X)  # x held constant: a plain call, w's gradient exact
    np.testing.assert_allclose(g, autodiff.grad(lambda w: anp.sum(X @ w))(w))


def test_a_deep_mlp_under_remat_holds_under_a_third_of_the_plain_residuals():
    """32 layers of width 512, batch 256, float32: blocks of 4 under remat keep <= 0.4x, one remat per layer
    about one activation per layer; loss and gradients as without remat."""
    plain, blocks, layers = (memory_chain.probe("mlp", mode) for mode in ("plain", "block", "layer"))
    assert blocks["held"] <= 0.4 * plain["held"], (blocks["held"], plain["held"])
    assert layers["held"] <= 1.25 * memory_chain.MLP["layers"] * layers["activation"]
    for r in (blocks, layers):
        assert r["loss"] == pytest.approx(r["plain_loss"], rel=1e-6)
        assert r["gradient_error"] <= 1e-6
