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


def _chain_gradient(seed):
    """A real structural gradient: Tangent[Chain] holding a list of Tangent[Dense], None at the activation."""
    import layers

    model = layers.MLP([3, 4, 2], dtype=np.float64)
    x = np.random.default_rng(seed).standard_normal((5, 3))
    return grad(lambda m: anp.sum(m(x) ** 2))(model)


def _leaves_of(g):
    return [(layer.weight, layer.bias) if layer is not None else None for layer in g.layers]


def test_tangent_is_a_read_only_mapping_of_its_fields():
    from collections.abc import Mapping

    g = _chain_gradient(0).layers[0]
    assert isinstance(g, Mapping)
    assert dict(g) == {"weight": g.weight, "bias": g.bias} and list(g.keys()) == ["weight", "bias"]
    assert list(g.values())[0] is g.weight and dict(g.items())["bias"] is g["bias"]
    assert len(g) == 2 and "weight" in g and "W" not in g and g.get("W") is None
    try:
        g["weight"] = 0
    except TypeError:
        pass
    else:
        raise AssertionError("a Tangent must be read-only")


def test_tangent_arithmetic_is_leaf_by_leaf_and_none_stays_none():
    g, h = _chain_gradient(0), _chain_gradient(1)
    cases = {
        "2 * g": (2 * g, lambda a, b: 2 * a), "g * 0.5": (g * 0.5, lambda a, b: a * 0.5),
        "g / 4": (g / 4, lambda a, b: a / 4), "-g": (-g, lambda a, b: -a),
        "g + h": (g + h, lambda a, b: a + b), "g - h": (g - h, lambda a, b: a - b),
        "np.float64(3) * g": (np.float64(3) * g, lambda a, b: 3 * a),
    }
    for name, (got, oracle) in cases.items():
        assert type(got) is Tangent and got.primal_type is g.primal_type, name
        assert got.layers[1] is None, name  # the activation: no gradient, and none after arithmetic
        for layer, a, b in zip((0, 2), _leaves_of(g)[::2], _leaves_of(h)[::2]):
            for k in range(2):
                np.testing.assert_array_equal(_leaves_of(got)[layer][k], oracle(a[k], b[k]), err_msg=name)


def test_none_plus_an_array_is_the_array_and_mismatches_raise_naming_both():
    import pytest

    w, b = np.ones(2), np.zeros(3)
    total = Tangent(dict, {"w": None, "b": b}) + Tangent(dict, {"w": w, "b": None})
    assert total.w is w and total.b is b
    with pytest.raises(TypeError, match=r"Tangent\[dict\] \+ Tangent\[list\]"):
        Tangent(dict, {"w": w}) + Tangent(list, {"w": w})
    with pytest.raises(ValueError, match=r"at \.w the leaves have shapes \(2,\) and \(3,\)"):
        Tangent(dict, {"w": w}) - Tangent(dict, {"w": b})
    with pytest.raises(TypeError, match=r"Tangent\[dict\] \* an array of shape \(2,\)"):
        Tangent(dict, {"w": w}) * w


def test_scaling_a_tangent_by_a_traced_scalar_is_differentiable():
    g = _chain_gradient(0)  # g * c, not c * g: a traced c's own operator comes first and refuses a Tangent
    got = grad(lambda c: anp.sum((g * c).layers[0].weight) + anp.sum((g / c).layers[2].bias))(2.0)
    oracle = np.sum(g.layers[0].weight) - np.sum(g.layers[2].bias) / 4.0
    np.testing.assert_allclose(got, oracle, rtol=1e-12)
