"""fmap and family over the gallery: ties, cache, prune, several trees, paths, errors, depth."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest
from gallery import Dense, gallery

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
    with pytest.raises(ValueError, match=r"cycle at kids\[0\]"):
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
