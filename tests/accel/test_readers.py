"""Compiled parameter readers: they agree with the generic walk, and a changed structure falls back to it."""

import collections
import dataclasses

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
from autodiff import grad
from tests.gallery import BatchNormLike, Dense, gallery
from traversal import register, total, trainable, trainables
from traversal._accel import readers as _readers
from traversal._accel.collect import _walk, parameters


@pytest.fixture(autouse=True)
def _fresh_readers():
    _readers.clear()
    yield
    _readers.clear()


def _compiled(model):
    """``parameters(model)`` after its structure has been compiled (and checked to have been)."""
    from autodiff._accel import layouts as _layouts

    if not _layouts.ENABLED:
        pytest.skip("compiled readers (compiled layouts) are off (AUTODIFF_ACCEL_OFF=layouts or AUTODIFF_REFERENCE=1)")
    parameters(model)
    parameters(model)
    assert _readers.read(model) is not None, "the structure should have compiled"
    return parameters(model)


def _same(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


@pytest.mark.parametrize("name", sorted(set(gallery()) - {"tied_layer"}))
def test_readers_agree_with_the_generic_walk_on_the_gallery(name):
    model = gallery()[name]
    assert _same(_compiled(model), _walk(model))
    assert _same(_compiled(model), trainables(model))


def test_a_tied_layer_object_is_left_to_the_generic_walk():
    model = gallery()["tied_layer"]
    for _ in range(3):
        assert _same(parameters(model), trainables(model))
    assert _readers.read(model) is None


def _model():
    return {"layers": [Dense(np.ones((2, 2)), np.zeros(2)), BatchNormLike(np.zeros(3), np.ones(3), np.zeros(3),
                                                                          np.ones(3))],
            "scale": 2, "head": (np.ones(4), np.sin)}


@pytest.mark.parametrize("change", [
    lambda m: m["layers"].append(Dense(np.ones(1), np.ones(1))),  # a list grows
    lambda m: m.update(extra=np.ones(5)),  # a dict gains a key
    lambda m: m.update(scale=np.full(2, 3.0)),  # an int becomes a parameter
    lambda m: m.update(head=({"w": np.ones(2)}, np.sin)),  # a leaf becomes a container
    lambda m: m["layers"].__setitem__(0, BatchNormLike(np.ones(1), np.ones(1), np.ones(1), np.ones(1))),
    lambda m: setattr(m["layers"][0], "weight", [np.ones(3), np.ones(2)]),  # a field now holds a list
    lambda m: m["layers"].__setitem__(1, m["layers"][0]),  # a container tie appears
])
def test_a_changed_structure_falls_back_to_the_walk(change):
    model = _model()
    _compiled(model)
    change(model)
    assert _same(parameters(model), _walk(model))
    assert _same(parameters(model), trainables(model))


def test_a_per_instance_trainable_selection_is_checked():
    @dataclasses.dataclass
    class Freezable:
        w: np.ndarray
        b: np.ndarray
        frozen: bool = False

    trainable.register(Freezable)(lambda layer: ("b",) if layer.frozen else ("w", "b"))
    model = [Freezable(np.ones(2), np.zeros(2))]
    assert len(_compiled(model)) == 2
    model[0].frozen = True
    assert _same(parameters(model), [model[0].b])


def test_a_cycle_made_after_compiling_still_raises_with_its_path():
    model = {"a": [np.ones(2), [np.ones(1)]]}
    _compiled(model)
    model["a"][1].append(model["a"])
    with pytest.raises(ValueError, match="cycle"):
        parameters(model)


def test_registering_a_type_forgets_the_readers():
    Pair = collections.namedtuple("Pair", "left right")
    model = {"p": Pair(np.ones(1), np.ones(2))}
    assert len(_compiled(model)) == 2
    register(Pair, lambda p: {"left": p.left}, lambda p, kids: Pair(kids["left"], p.right))
    assert _same(parameters(model), [model["p"].left])  # the compiled reader would have read both fields


def test_total_and_its_gradient_through_a_compiled_reader():
    model = _model()
    _compiled(model)
    value, g = autodiff.value_and_grad(lambda m: total(anp.linalg.norm, m))(model)
    expected = sum(np.linalg.norm(p) for p in _walk(model))
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    assert autodiff.gradcheck(lambda w: total(anp.linalg.norm, {**model, "head": (w, np.sin)}),
                              (np.array([1.0, -2.0, 0.5, 3.0]),), order=2)
    assert g["scale"] is None and g["head"][1] is None


def _sumsq(p):  # not a known reduction: total's generic path
    return anp.sum(p * p)


def _matrices(node):
    return getattr(node, "ndim", 0) == 2


@pytest.mark.parametrize("layouts", [False, True])
@pytest.mark.parametrize("f", [autodiff.sumsq, _sumsq], ids=["known reduction", "any f"])
def test_total_only_tests_the_parameters_themselves_as_well_as_their_containers(monkeypatch, layouts, f):
    """``total(f, model, only=...)`` with the compiled readers on and off: ``only`` tests each parameter as well as
    its containers, and later calls, which may take the compiled readers, never bypass it."""
    from autodiff._accel import layouts as _layouts

    monkeypatch.setattr(_layouts, "ENABLED", layouts)
    model = layers.MLP([3, 4, 2], dtype=np.float64, seed=1)
    weights = [p for p in trainables(model) if p.ndim == 2]
    for _ in range(3):  # later calls may take the compiled readers: they must not bypass only=
        assert np.isclose(total(f, model, only=_matrices), sum(float((w * w).sum()) for w in weights))
        assert np.isclose(total(f, model, only=np.ndarray), total(f, model))
        assert np.isclose(total(f, model, only=(np.ndarray,)), total(f, model))
        g = grad(lambda m: total(f, m, only=_matrices))(model)
        for layer in (0, 2):
            np.testing.assert_allclose(g.layers[layer].weight, 2 * model.layers[layer].weight)
            assert g.layers[layer].bias is None
        g = grad(lambda m: total(f, m, only=np.ndarray))(model)
        np.testing.assert_allclose(g.layers[2].bias, 2 * model.layers[2].bias)
