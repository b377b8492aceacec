"""fmap and family over the gallery: ties, cache, prune, several trees, paths, errors, depth."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
from tests.gallery import Dense, gallery
from traversal import (
    KeyPath,
    fcollect,
    fleaves,
    fmap,
    fmap_with_path,
    fmapstructure,
    fmapstructure_with_path,
    getkeypath,
    isnumeric,
    trainables,
)


def cast64(x):
    return x.astype(np.float64) if isnumeric(x) else x


def test_fmap_keeps_ties_and_cache_false_breaks_them():
    m = gallery()["tied"]
    out = fmap(cast64, m)
    assert out["x"] is out["y"] and out["x"] is not m["x"]
    loose = fmap(cast64, m, cache=False)
    assert loose["x"] is not loose["y"]
    np.testing.assert_array_equal(loose["x"], loose["y"])


def test_fmap_keeps_a_tied_layer_object():
    layers = gallery()["tied_layer"]
    out = fmap(cast64, layers)
    assert out[0] is out[1] and isinstance(out[0], Dense)
    assert out[0].activation is np.tanh


def test_prune_replaces_repeats():
    m = gallery()["tied"]
    out = fmap(cast64, m, prune="pruned")
    assert out["y"] == "pruned" and out["x"] is not None


def test_several_trees_cache_keyed_on_first():
    s = np.array([1.0, 2.0, 3.0])
    first = {"x": s, "y": np.array([4.0, 5, 6]), "z": s}
    out = fmap(np.add, first, {"x": s, "y": s, "z": np.array([7.0, 8, 9])})
    assert out["z"] is out["x"]
    np.testing.assert_array_equal(out["x"], s + s)
    np.testing.assert_array_equal(out["y"], np.array([4.0, 5, 6]) + s)


def test_none_in_other_trees_stands_for_a_missing_subtree():
    model = {"a": [np.ones(2), np.ones(2)], "b": np.ones(1)}
    grads = {"a": None, "b": np.full(1, 3.0)}
    out = fmap(lambda x, g: x if g is None else x - g, model, grads)
    assert out["a"][0] is model["a"][0]
    np.testing.assert_array_equal(out["b"], model["b"] - 3.0)


def test_mismatched_trees_raise_with_key_path():
    with pytest.raises(ValueError, match=r"differ at layers\[1\].*\['w'\].*\['v'\]"):
        fmap(np.add, {"layers": [{"w": 1.0}, {"w": 2.0}]}, {"layers": [{"w": 1.0}, {"v": 2.0}]})


def test_cycle_raises_with_key_path():
    a = {"w": np.ones(1)}
    a["kids"] = [a]
    with pytest.raises(ValueError, match=r"cycle: the object at kids\[0\] contains itself"):
        fmap(cast64, a)


def test_deep_nesting():
    deep = np.ones(1, np.float32)
    for _ in range(10_000):
        deep = [deep]
    out = fmap(cast64, deep)
    for _ in range(10_000):
        out = out[0]
    assert out.dtype == np.float64


def test_fmapstructure_returns_plain_containers():
    P = namedtuple("P", "a b")
    out = fmapstructure(cast64, {"p": P(np.ones(1, np.float32), 3), "d": Dense(np.ones(1), np.ones(1))})
    assert type(out["p"]) is dict and type(out["d"]) is dict
    assert out["d"]["activation"] is np.tanh


def test_with_path_variants_give_paths_that_round_trip():
    model = gallery()["nested"]
    paths = fmapstructure_with_path(lambda p, x: p, model)
    w_path = paths["a"][0]["b"]["weight"]
    assert w_path == KeyPath("a", 0, "b", "weight") and getkeypath(model, w_path) is model["a"][0]["b"].weight
    out = fmap_with_path(lambda p, x: str(p), model)
    assert out["a"][0]["b"].bias == "a[0].b.bias" and out["a"][1] == "a[1]"


def test_fleaves_keeps_duplicates_and_fcollect_dedups():
    m = gallery()["tied"]
    assert len(fleaves(m)) == 3
    nodes = fcollect(m)
    assert nodes[0] is m and len(nodes) == 3  # the dict, m1 once, z


def test_fcollect_is_preorder_and_exclude_prunes():
    @dataclasses.dataclass
    class Node:
        left: object
        right: object

    leaf_a, leaf_b = np.zeros(1), np.ones(1)
    tree = Node(Node(leaf_a, leaf_b), leaf_b)
    nodes = fcollect(tree)
    assert [n is x for n, x in zip(nodes, [tree, tree.left, leaf_a, leaf_b])] == [True] * 4
    assert len(nodes) == 4
    assert fcollect(tree, exclude=lambda n: n is tree.left) == [tree, leaf_b]


def test_gallery_round_trip_identity_map():
    for name, model in gallery().items():
        out = fmap(lambda x: x, model)
        for (a, b) in zip(fleaves(model), fleaves(out)):
            assert a is b, name


def _mlp_and_grads():
    model = layers.MLP([3, 4, 2], dtype=np.float64, seed=0)
    grads = autodiff.grad(lambda m: anp.sum(m(np.ones((5, 3))) ** 2))(model)
    return model, grads


def test_none_in_a_later_tree_keeps_the_node_and_never_calls_f():
    model, grads = _mlp_and_grads()
    assert grads.layers[1] is None  # the tanh between the layers has no gradient
    seen = []
    out = fmap(lambda x, g: seen.append(g) or x - 0.1 * g, model, grads)
    assert all(g is not None for g in seen) and len(seen) == 4
    assert out.layers[1] is np.tanh
    for k in (0, 2):
        np.testing.assert_array_equal(out.layers[k].weight, model.layers[k].weight - 0.1 * grads.layers[k].weight)
    partial = fmap(lambda x, g: x - g, model, {"layers": [None, None, grads.layers[2]]})
    assert partial.layers[0] is model.layers[0]  # a whole subtree without gradient is kept as it is


def test_a_tie_keeps_one_update_and_a_gradient_at_a_later_occurrence_is_not_lost():
    w = np.arange(3.0)
    model = {"a": w, "b": w}
    out = fmap(lambda x, g: x - g, model, {"a": np.ones(3), "b": None})
    assert out["a"] is out["b"]
    np.testing.assert_array_equal(out["a"], w - 1)
    late = fmap(lambda x, g: x - g, model, {"a": None, "b": np.ones(3)})  # e.g. "a" sits in a non-trainable field
    assert late["a"] is w
    np.testing.assert_array_equal(late["b"], w - 1)


def test_trees_with_different_leaf_shapes_raise_naming_the_path_and_both_shapes():
    model, grads = _mlp_and_grads()
    wrong = fmap(lambda g: g.T, grads, exclude=isnumeric)
    with pytest.raises(ValueError, match=r"differ at layers\[0\]\.weight: the first tree has shape \(4, 3\), "
                                         r"tree 2 has shape \(3, 4\)"):
        fmap(lambda x, g: x - g, model, wrong)
    with pytest.raises(ValueError, match=r"differ at w: the first tree has a leaf \(numpy\.ndarray of shape "
                                         r"\(2,\), dtype float64\) but tree 2 has a dict"):
        fmap(np.add, {"w": np.ones(2)}, {"w": {"a": np.ones(2)}})
    scaled = fmap(lambda x, lr: x * lr, {"w": np.ones(2), "b": np.ones(3)}, {"w": np.float64(0.5), "b": 2.0})
    np.testing.assert_array_equal(scaled["w"], [0.5, 0.5])  # a scalar per leaf is not a shape mismatch


def test_f_failing_on_a_leaf_names_the_key_path_type_and_shape():
    model = layers.MLP([3, 4, 2], seed=0)
    with pytest.raises(RuntimeError, match=r"fmap: f raised AttributeError on the leaf at layers\[1\] "
                                           r"\(numpy\.ufunc, no shape\).*exclude=traversal\.isnumeric") as info:
        fmap(lambda a: a.astype("float32"), model)
    assert isinstance(info.value.__cause__, AttributeError)
    with pytest.raises(RuntimeError, match=r"at layers\[2\]\.bias \(numpy\.ndarray of shape \(2,\), dtype float32\)"):
        fmap_with_path(lambda p, a: a.reshape(3) if str(p) == "layers[2].bias" else a, model)


def test_casting_the_projects_models_visits_only_parameters_with_exclude_isnumeric():
    for model in (layers.MLP([3, 4, 2], dtype=np.float64), layers.resnet18(10)):
        out = fmap(lambda a: a.astype("float16"), model, exclude=isnumeric)
        assert all(p.dtype == np.float16 for p in trainables(out))
        assert len(trainables(out)) == len(trainables(model))
        before, after = fleaves(model), fleaves(out)
        assert [type(a) for a in before if not isnumeric(a)] == [type(a) for a in after if not isnumeric(a)]
        assert all(a is b for a, b in zip(before, after) if not isnumeric(a))  # ints, functions: carried over
