"""tree_equal / tree_allclose (issue 38): comparing two trees, optimiser state included, by key path.

Oracles: numpy's own comparisons (``array_equal`` on the bits, ``isclose``), and trees changed at one
known position, whose path the report must name.
"""

import copy

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
from optimisers import Adam, setup, update
from traversal import (
    KeyPath,
    assert_tree_allclose,
    assert_tree_equal,
    load,
    save,
    tree_allclose,
    tree_equal,
)


def _trained_state(steps=3):
    model = layers.Chain([layers.Dense.init(3, 4, seed=1, dtype=np.float64), layers.BatchNorm.init(4, dtype=np.float64),
                          layers.Dense.init(4, 2, seed=2, dtype=np.float64)])
    x = np.random.default_rng(0).standard_normal((5, 3))

    def loss(m):
        out, updated = m.forward(x, train=True)
        return anp.sum(out ** 2), updated

    state = setup(Adam(1e-2), model)
    for _ in range(steps):
        (_, updated), g = autodiff.value_and_grad(loss, has_aux=True)(model)
        state, model = update(state, updated, g)
    return state, model


def test_a_deep_copy_matches_and_a_changed_moment_is_found_by_its_key_path():
    state, model = _trained_state()
    assert tree_equal(state, copy.deepcopy(state)) and tree_equal(model, copy.deepcopy(model))
    changed = copy.deepcopy(state)
    m, v, t = changed.layers[2].weight.state
    v = v.copy()
    v[1, 3] = np.nextafter(v[1, 3], np.inf)  # one ulp
    changed.layers[2].weight.state = (m, v, t)
    result = tree_equal(state, changed)
    assert not result
    assert result.path == KeyPath("layers", 2, "weight", "state", 1)
    assert "element (1, 3)" in str(result)
    assert tree_allclose(state, changed, rtol=1e-12)
    with pytest.raises(AssertionError, match=r"layers\[2\]\.weight\.state\[1\]: element \(1, 3\)"):
        assert_tree_equal(state, changed)
    assert_tree_allclose(state, changed, rtol=1e-12)


def test_the_step_count_and_the_rule_are_compared_too():
    state, _ = _trained_state()
    later, _ = _trained_state(4)
    result = tree_equal(state, later)
    assert not result and result.path[-2:] in (KeyPath("state", 0), KeyPath("state", 2))
    other_rule = copy.deepcopy(state)
    other_rule.layers[0].bias.rule = Adam(2e-2)
    assert tree_equal(state, other_rule).path == KeyPath("layers", 0, "bias", "rule", "lr")


def test_a_checkpoint_round_trip_is_bit_for_bit(tmp_path):
    state, model = _trained_state()
    save(tmp_path / "run.npz", {"model": model, "state": state})
    back = load(tmp_path / "run.npz", like={"model": model, "state": setup(Adam(1e-2), model)})
    assert_tree_equal({"model": model, "state": state}, back)


def test_bits_dtypes_and_shapes():
    a = np.array([0.0, np.nan, 1.0])
    assert tree_equal({"a": a}, {"a": a.copy()})  # NaN is NaN, bit for bit
    assert not tree_equal({"a": a}, {"a": np.array([-0.0, np.nan, 1.0])})  # -0.0 has another bit
    assert tree_allclose({"a": a}, {"a": np.array([-0.0, np.nan, 1.0])})
    assert str(tree_equal([a], [a.astype(np.float32)])) == "the trees differ at [0]: dtype float64 != float32"
    assert "shape (3,) != (1, 3)" in str(tree_equal([a], [a[None]]))
    assert "a has a float, b has a float64" in str(tree_equal([1.0], [np.float64(1.0)]))
    assert not tree_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})  # key order is traversal order
    assert tree_equal((np.sin, "x", None, 3), (np.sin, "x", None, 3))
    assert "'x' != 'y'" in str(tree_equal(["x"], ["y"]))
    assert not tree_equal([True], [1]) and not tree_allclose([None], [np.zeros(1)])
    assert tree_equal([np.zeros((0, 3))], [np.zeros((0, 3))]) and tree_equal([np.float32(2)], [np.float32(2)])
    complex_a = np.array([1 + 2j])
    assert not tree_equal([complex_a], [np.array([1 + 2.0000000001j])])
    assert tree_allclose([complex_a], [np.array([1 + 2.0000000001j])], rtol=1e-9)


def test_ties_must_match():
    w = np.ones(2)
    assert tree_equal({"a": w, "b": w}, {"a": w.copy(), "b": w.copy()}).path == KeyPath("b")
    v = w.copy()
    assert tree_equal({"a": w, "b": w}, {"a": v, "b": v})
    assert "b holds the same object here as at a" in str(tree_equal({"a": w, "b": w.copy()}, {"a": v, "b": v}))
    state = setup(Adam(), {"enc": w, "dec": w})
    assert state["enc"] is state["dec"]
    assert tree_equal(state, copy.deepcopy(state))  # deepcopy keeps the shared Leaf


def test_a_deep_tree_is_walked_without_recursion():
    deep_a = deep_b = np.ones(1)
    for _ in range(5000):
        deep_a, deep_b = [deep_a], [deep_b]
    assert tree_equal(deep_a, deep_b)
    assert tree_allclose(deep_a, [[1.0]]).path == KeyPath(0, 0)
