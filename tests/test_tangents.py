"""Symbolic zeros, thunks and structural tangents inside the engine."""

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff import NoTangent, Tangent, Thunk, ZeroTangent, grad
from autodiff.extend import add_tangents, defvjp, defvjp_joint, primitive


def _scale_with_thunks(log):
    """x * c with lazy cotangents, logging which ones were evaluated."""
    prim = primitive(lambda x, c: x * c, "scale")

    def pull(g, ans, x, c):
        def lazy(name, value):
            return Thunk(lambda: log.append(name) or value())
        return lazy("x", lambda: g * c), lazy("c", lambda: anp.sum(g * x))

    defvjp_joint(prim, pull)
    return prim


def test_thunk_for_a_constant_is_never_evaluated():
    log = []
    scale = _scale_with_thunks(log)
    x = np.array([1.0, 2.0])
    g = grad(lambda x: anp.sum(scale(x, 3.0)))(x)
    assert log == ["x"]  # c was a constant: its thunk never ran
    assert autodiff.gradcheck(lambda x: scale(x, 3.0), x)
    np.testing.assert_allclose(g, autodiff.jacobian(lambda x: scale(x, 3.0))(x).sum(0))


def test_thunks_are_evaluated_when_needed_and_second_order_works():
    log = []
    scale = _scale_with_thunks(log)
    assert autodiff.gradcheck(lambda x, c: scale(x, c) ** 2, np.array([1.0, 2.0]), 0.7, order=2)
    assert "c" in log and "x" in log


def test_symbolic_zero_skips_pullbacks_upstream():
    calls = []
    traced_sin = primitive(np.sin, "logged_sin")
    defvjp(traced_sin, lambda g, ans, x: calls.append(1) or g * anp.cos(x))
    g = grad(lambda x: anp.sum(anp.sign(traced_sin(x))))(np.array([0.5, 1.0]))
    assert calls == []  # sign's pullback gave ZeroTangent; sin's pullback never ran
    np.testing.assert_array_equal(g, np.zeros(2))


def test_accumulation_rules():
    z, t = ZeroTangent(), Thunk(lambda: np.ones(2))
    np.testing.assert_array_equal(add_tangents(z, np.ones(2)), np.ones(2))
    np.testing.assert_array_equal(add_tangents(t, np.ones(2)), 2 * np.ones(2))
    assert add_tangents(NoTangent(), z) is z
    a = Tangent(dict, {"w": np.ones(2), "b": None})
    b = Tangent(dict, {"w": np.ones(2), "b": np.ones(1)})
    s = a + b
    np.testing.assert_array_equal(s.w, 2 * np.ones(2))
    np.testing.assert_array_equal(s["b"], np.ones(1))


def test_tied_array_accumulates_through_tuples_of_outputs():
    pair = primitive(lambda x: (np.sin(x), np.cos(x)), "sincos")
    defvjp(pair, lambda g, ans, x: _sincos_pullback(g, x))
    f = lambda x: anp.sum(pair(x)[0] * pair(x)[1])  # noqa: E731
    assert autodiff.gradcheck(f, np.array([0.2, 0.9]), order=2)


def _sincos_pullback(g, x):
    gs, gc = g
    total = 0.0
    if not isinstance(gs, ZeroTangent):
        total = total + gs * anp.cos(x)
    if not isinstance(gc, ZeroTangent):
        total = total - gc * anp.sin(x)
    return total


def test_a_thunk_that_evaluates_to_a_symbolic_zero_accumulates():
    assert add_tangents(Thunk(lambda: ZeroTangent()), 2.0) == 2.0
    assert add_tangents(3.0, Thunk(lambda: ZeroTangent())) == 3.0
    lazy = add_tangents(Thunk(lambda: ZeroTangent()), ZeroTangent())
    assert type(lazy) is Thunk and not lazy.evaluated  # adding a zero keeps the thunk lazy
    assert type(autodiff.unthunk(lazy)) is ZeroTangent
