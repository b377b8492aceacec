"""The residual hand-off (``autodiff.extend.defvjp_fwd_bwd``): a forward that passes values to its pullback
through the tape, as JAX's ``custom_vjp`` does; nothing stored on the primitive."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, hvp, jvp, vjp
from autodiff.extend import defjvp, defvjp_fwd_bwd, primitive

calls = {"fwd": 0, "plain": 0}


def _plain_logsumexp(x, y):
    calls["plain"] += 1
    m = np.maximum(x, y)
    return m + np.log(np.exp(x - m) + np.exp(y - m))


def _fwd(x, y):
    """The value, and the softmax weights as residuals (written with differentiable ops: it nests)."""
    calls["fwd"] += 1
    m = anp.maximum(autodiff.stop_gradient(x), autodiff.stop_gradient(y))
    ex, ey = anp.exp(x - m), anp.exp(y - m)
    s = ex + ey
    return m + anp.log(s), (ex / s, ey / s)


def _bwd(g, residuals, ans, x, y):
    wx, wy = residuals
    return g * wx, g * wy


lse = primitive(_plain_logsumexp, "lse")
defvjp_fwd_bwd(lse, _fwd, _bwd)

X = np.array([0.3, -1.2, 2.0])
Y = np.array([1.1, 0.4, -0.7])


def _oracle(x, y):
    return anp.log(anp.exp(x) + anp.exp(y))


def test_the_forward_runs_once_per_recording_and_its_residuals_reach_the_pullback():
    calls.update(fwd=0, plain=0)
    gx, gy = grad(lambda x, y: anp.sum(lse(x, y) * np.arange(1.0, 4.0)), argnums=(0, 1))(X, Y)
    assert calls == {"fwd": 1, "plain": 0}
    wx, wy = grad(lambda x, y: anp.sum(_oracle(x, y) * np.arange(1.0, 4.0)), argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, wx, rtol=1e-12)
    np.testing.assert_allclose(gy, wy, rtol=1e-12)


def test_untraced_calls_run_the_plain_function():
    calls.update(fwd=0, plain=0)
    np.testing.assert_allclose(lse(X, Y), np.logaddexp(X, Y), rtol=1e-12)
    assert calls == {"fwd": 0, "plain": 1}


def test_gradcheck_orders_one_and_two():
    assert gradcheck(lse, X, Y, order=1)
    assert gradcheck(lse, X, Y, order=2)
    assert gradcheck(lambda x: lse(x, x * x), X, order=2)  # one argument reaching both slots


def test_each_recording_keeps_its_own_residuals():
    """Two vjps alive at once: each pullback reads its own forward's residuals (none stored on the primitive)."""
    (_, first), (_, second) = vjp(lse, X, Y), vjp(lse, X + 1.0, Y)
    for (x, pullback) in ((X, first), (X + 1.0, second)):
        got = pullback(np.ones(3))
        want = vjp(_oracle, x, Y)[1](np.ones(3))
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(first(np.ones(3))[0], vjp(_oracle, X, Y)[1](np.ones(3))[0], rtol=1e-12)  # again


def test_only_traced_arguments_get_cotangents():
    np.testing.assert_allclose(grad(lambda x: anp.sum(lse(x, Y)))(X), np.exp(X) / (np.exp(X) + np.exp(Y)),
                               rtol=1e-12)
    np.testing.assert_allclose(grad(lambda y: anp.sum(lse(X, y)))(Y), np.exp(Y) / (np.exp(X) + np.exp(Y)),
                               rtol=1e-12)


def test_forward_mode_without_a_jvp_rule_pushes_through_bwd():
    v = np.array([0.5, -1.0, 2.0])
    _, t = jvp(lambda x: lse(x, Y), X, v)
    _, want = jvp(lambda x: _oracle(x, Y), X, v)
    np.testing.assert_allclose(t, want, rtol=1e-12)


def test_hessian_vector_products_both_modes_against_finite_differences():
    f = lambda x: anp.sum(lse(x, anp.sin(x)) ** 2)  # noqa: E731
    v = np.array([0.2, -0.4, 1.0])
    eps = 1e-6
    want = (grad(f)(X + eps * v) - grad(f)(X - eps * v)) / (2 * eps)
    for mode in ("reverse_over_forward", "forward_over_reverse"):
        (got,) = hvp(f, (X,), (v,), mode=mode)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(grad(lambda x: anp.sum(grad(f)(x) * v))(X), want, rtol=1e-6)  # reverse over reverse


def test_forward_mode_uses_a_jvp_rule_when_registered():
    sq = primitive(lambda x: x * x, "sq_with_residual")
    seen = []
    defvjp_fwd_bwd(sq, lambda x: (x * x, 2 * x), lambda g, two_x, ans, x: (g * two_x,))
    defjvp(sq, lambda t, ans, x: seen.append(1) or 2 * x * t)
    assert float(jvp(sq, 3.0, 1.0)[1]) == 6.0 and seen == [1]
    assert grad(grad(sq))(3.0) == 2.0


def test_residual_rules_nest_inside_another_grad():
    """The residuals of an inner recording hold traced values of the outer level; the outer derivative sees them."""
    def inner_grad_norm(y):
        g = grad(lambda x: anp.sum(lse(x, y)))(X)
        return anp.sum(g * g)

    def oracle(y):
        g = grad(lambda x: anp.sum(_oracle(x, y)))(X)
        return anp.sum(g * g)

    np.testing.assert_allclose(grad(inner_grad_norm)(Y), grad(oracle)(Y), rtol=1e-10)


def test_grad_frees_the_residuals_with_the_entry():
    tapes = []
    from tests.internals import Tape

    original = Tape.__init__

    def spy(self, level):
        original(self, level)
        tapes.append(self)

    Tape.__init__ = spy
    try:
        grad(lambda x: anp.sum(lse(x, Y)))(X)
    finally:
        Tape.__init__ = original
    assert tapes and all(t.residuals == {} for t in tapes)


def test_a_bwd_that_fails_names_itself():
    bad = primitive(lambda x: x, "bad_residual")
    defvjp_fwd_bwd(bad, lambda x: (x, None), lambda g, res, ans, x: (g * res["missing"],))
    with pytest.raises(TypeError):
        grad(bad)(1.0)


def test_autodiff_trace_shows_the_entry():
    text = str(autodiff.trace(lambda x: anp.sum(lse(x, Y)), X))
    assert "lse(" in text
