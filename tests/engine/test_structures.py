"""grad over structured arguments: mirrors the argument, None for no gradient, ties at first occurrence."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import Tangent, grad
from autodiff.extend import register_container
from tests.trees import leaves

Pair = namedtuple("Pair", ["a", "b"])


@dataclasses.dataclass
class Dense:
    weight: np.ndarray
    bias: np.ndarray
    act: object = None
    size: int = 3


def loss(model):
    total = 0.0
    for _, leaf in leaves(model):
        if autodiff.extend.is_differentiable(leaf):
            total = total + anp.sum(anp.sin(leaf) * leaf)
    return total


def expected_leaf(x):
    return np.sin(x) + x * np.cos(x)


def test_dict_list_tuple_namedtuple_dataclass():
    rng = np.random.default_rng(0)
    w, b, v = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal(2)
    model = {
        "layers": [Dense(w, b, act=np.tanh, size=3)],
        "pair": Pair(v, 7),
        "meta": ("name", True, 4),
        "scale": 2.0,
    }
    g = grad(loss)(model)
    assert isinstance(g["layers"][0], Tangent) and g["layers"][0].primal_type is Dense
    np.testing.assert_allclose(g["layers"][0].weight, expected_leaf(w))
    np.testing.assert_allclose(g["layers"][0]["bias"], expected_leaf(b))
    assert g["layers"][0].act is None and g["layers"][0].size is None
    assert isinstance(g["pair"], Pair) and g["pair"].b is None
    np.testing.assert_allclose(g["pair"].a, expected_leaf(v))
    assert g["meta"] is None  # all-None subtree collapses
    assert isinstance(g["scale"], float)
    assert autodiff.gradcheck(loss, model, order=2)


def test_ties_first_occurrence():
    shared = np.array([1.0, 2.0, 3.0])
    other = np.array([4.0, 5.0, 6.0])
    model = {"x": shared, "y": shared, "z": other}
    g = grad(lambda m: anp.sum(m["x"] * m["y"]) + anp.sum(m["z"]))(model)
    np.testing.assert_allclose(g["x"], 2 * shared)  # accumulated, true derivative
    assert g["y"] is None
    np.testing.assert_allclose(g["z"], np.ones(3))


def test_tied_layer_object():
    layer = Dense(np.ones((2, 2)), np.zeros(2))
    g = grad(lambda m: anp.sum(m[0].weight) + 2 * anp.sum(m[1].weight))([layer, layer])
    np.testing.assert_allclose(g[0].weight, 3 * np.ones((2, 2)))
    assert g[1] is None


def test_unused_and_non_differentiable_leaves():
    model = {"used": np.ones(2), "unused": np.ones(2), "ints": np.arange(3), "flag": True,
             "f": np.sin, "s": "text", "n": 3}
    g = grad(lambda m: anp.sum(m["used"]))(model)
    assert g == {"used": g["used"], "unused": None, "ints": None, "flag": None,
                 "f": None, "s": None, "n": None}


def test_symbolic_zero_gives_zeros_not_none():
    model = {"a": np.array([1.0, -2.0]), "b": np.ones(2)}
    g = grad(lambda m: anp.sum(anp.sign(m["a"])) + anp.sum(m["b"]))(model)
    np.testing.assert_array_equal(g["a"], np.zeros(2))
    assert g["a"].dtype == np.float64


def test_bare_arguments_get_zeros_when_unused():
    g = grad(lambda x, y, z: y * 2.0, argnums=(0, 1, 2))(np.ones(3, np.float32), 2.0, 5.0)
    np.testing.assert_array_equal(g[0], np.zeros(3, np.float32))
    assert g[0].dtype == np.float32
    assert autodiff.gradcheck(lambda y: y * 2.0, 2.0)  # the oracle for g[1]
    assert abs(g[1] - ((2.0 + 1e-6) * 2.0 - (2.0 - 1e-6) * 2.0) / 2e-6) < 1e-8
    assert g[2] == 0.0 and isinstance(g[2], float) and isinstance(g[1], float)


def test_constant_output_gives_zeros():
    assert grad(lambda x: 3.0)(np.ones(2)).tolist() == [0.0, 0.0]


def test_registered_container():
    class Box:
        def __init__(self, inner, label):
            self.inner, self.label = inner, label

    register_container(Box, lambda b: {"inner": b.inner}, lambda b, kids: Box(kids["inner"], b.label))
    g = grad(lambda b: anp.sum(b.inner ** 2))(Box(np.array([1.0, 2.0]), "x"))
    assert isinstance(g, Tangent) and g.primal_type is Box
    np.testing.assert_allclose(g.inner, [2.0, 4.0])


def test_cycle_raises_with_path():
    a = {"x": np.ones(2)}
    a["self"] = [a]
    with pytest.raises(ValueError, match=r"\['self'\]\[0\].*contains itself"):
        grad(lambda m: anp.sum(m["x"]))(a)


def test_deep_nesting_is_iterative():
    deep = np.ones(2)
    for _ in range(10_000):
        deep = [deep]
    g = grad(lambda m: 1.0)(deep)
    assert g is None
