"""Compiled layouts behind flatten: they agree with the walk, and a changed structure falls back to it."""

import collections
import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

import autodiff
from autodiff import _trees
from autodiff._accel import flatten as accel_flatten
from autodiff._accel.flatten import LAYOUTS
from autodiff._accel.layouts import compile_layout
from autodiff._hooks import hooks
from autodiff.extend import register_container
from tests.gallery import Dense, gallery


@pytest.fixture(autouse=True)
def _fresh_layouts():
    LAYOUTS.clear()
    yield
    LAYOUTS.clear()


def _skip_without_layouts():
    from autodiff._accel import layouts as _layouts

    if not _layouts.ENABLED:
        pytest.skip("compiled layouts are off (AUTODIFF_ACCEL_OFF=layouts or AUTODIFF_REFERENCE=1)")


def _flatten_compiled(root):
    """``flatten(root)`` once its structure has been compiled (and checked to have been)."""
    _skip_without_layouts()
    hooks.flatten(root)
    hooks.flatten(root)
    assert any(layout.read(root) is not None for layout in LAYOUTS.get(type(root))), "not compiled"
    return hooks.flatten(root)


def _ops(treedef):
    return getattr(treedef.template, "ops", treedef.template)


def _same_flat(a, b):
    (la, ta), (lb, tb) = a, b
    return (len(la) == len(lb) and all(x is y for x, y in zip(la, lb)) and _ops(ta) == _ops(tb)
            and len(ta.containers) == len(tb.containers)
            and all(x is y for x, y in zip(ta.containers, tb.containers)))


def _same_builds(a, b):
    """The compiled and the walked treedef rebuild, and build tangents, alike (some leaves None)."""
    (leaves, ta), (_, tb) = a, b
    new = [f"leaf{k}" for k in range(len(leaves))]
    holes = [None if k % 3 == 1 else x for k, x in enumerate(new)]
    return repr(ta.unflatten(new)) == repr(tb.unflatten(new)) and repr(ta.tangent(holes)) == repr(tb.tangent(holes))


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("name", sorted(set(gallery()) - {"tied_layer"}))
def test_layouts_agree_with_the_walk_on_the_gallery(name):
    model = gallery()[name]
    assert _same_flat(_flatten_compiled(model), _trees.walk_flatten(model))
    assert _same_builds(_flatten_compiled(model), _trees.walk_flatten(model))


def test_layouts_handle_namedtuples_tangents_and_empty_containers():
    model = {"p": Point(np.ones(2), [np.zeros(1), ()]), "t": autodiff.extend.Tangent(Point, {"x": 1.0}),
             "e": [], "d": {}}
    assert _same_flat(_flatten_compiled(model), _trees.walk_flatten(model))
    assert _same_builds(_flatten_compiled(model), _trees.walk_flatten(model))


@pytest.mark.parametrize("change", [
    lambda m: m["layers"].append(np.ones(1)),
    lambda m: m.update(extra=np.ones(5)),
    lambda m: m.update(n=[np.ones(2)]),  # a leaf becomes a container
    lambda m: m.__setitem__("layers", tuple(m["layers"])),  # same length, another type
    lambda m: setattr(m["layers"][0], "bias", {"b": np.ones(2)}),
    lambda m: m["layers"].__setitem__(0, m["layers"][1]),  # a container tie appears
])
def test_a_changed_structure_falls_back_to_the_walk(change):
    model = {"layers": [Dense(np.ones((2, 2)), np.zeros(2)), Dense(np.ones((2, 1)), np.zeros(1))], "n": 3}
    _flatten_compiled(model)
    change(model)
    assert _same_flat(hooks.flatten(model), _trees.walk_flatten(model))


def test_grad_is_right_after_the_model_changes_shape():
    loss = autodiff.grad(lambda m: sum(autodiff.numpy.sum(d.weight ** 2) for d in m["layers"]))
    model = {"layers": [Dense(np.ones((2, 2)), np.zeros(2))]}
    for _ in range(3):
        loss(model)
    model["layers"].append(Dense(np.full((1, 2), 3.0), np.zeros(2)))
    g = loss(model)
    np.testing.assert_array_equal(g["layers"][1].weight, np.full((1, 2), 6.0))


def test_a_cycle_made_after_compiling_still_raises_with_its_path():
    model = {"a": [np.ones(2), [np.ones(1)]]}
    _flatten_compiled(model)
    model["a"][1].append(model["a"])
    with pytest.raises(ValueError, match=r"cycle: the object at arg a: \[1\]\[1\]"):
        hooks.flatten(model)


def test_registering_a_type_forgets_the_layouts():
    @dataclasses.dataclass
    class Opaque:
        value: np.ndarray

    autodiff.extend.register_leaf(Opaque)
    model = {"o": Opaque(np.ones(2)), "w": np.ones(1)}
    assert len(_flatten_compiled(model)[0]) == 2

    class Box:
        def __init__(self, inner):
            self.inner = inner

    register_container(Box, lambda b: {"inner": b.inner}, lambda b, kids: Box(kids["inner"]))
    model = {"o": Box(np.ones(2)), "w": np.ones(1)}  # Box was a leaf type; it is a container now
    assert len(hooks.flatten(model)[0]) == 2


def test_ties_cycles_and_huge_structures_are_not_compiled():
    shared = [np.ones(1)]
    assert compile_layout({"a": shared, "b": shared}) is None
    deep = []
    for _ in range(6000):
        deep = [deep]
    assert compile_layout(deep) is None


def test_layouts_can_be_switched_off():
    code = ("import numpy as np; from autodiff._hooks import hooks; from autodiff._accel.flatten import LAYOUTS\n"
            "m = {'w': np.ones(2)}\n"
            "for _ in range(3): hooks.flatten(m)\n"
            "print(len(LAYOUTS.get(dict)))")
    for off, reference, compiled in (("layouts", "", "0"), ("", "", "1"), ("", "1", "0")):
        env = {**os.environ, "AUTODIFF_ACCEL_OFF": off, "AUTODIFF_REFERENCE": reference}
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
        assert out.stdout.strip() == compiled


def test_a_stream_of_new_structures_stops_compiling():
    _skip_without_layouts()
    models = [{f"k{j}": np.ones(1) for j in range(n + 1)} for n in range(40)]
    for _ in range(3):
        for model in models:
            leaves, treedef = hooks.flatten(model)
            assert leaves == list(model.values()) and treedef.unflatten(leaves) == model
    assert LAYOUTS._compiles[dict] == LAYOUTS.__class__.COMPILES_PER_TYPE
    assert len(LAYOUTS.get(dict)) == LAYOUTS.__class__.PER_TYPE


def test_second_order_through_compiled_layouts_matches_generic_walks(monkeypatch):
    from autodiff._accel import layouts as _layouts
    from traversal import total

    def loss(m):
        h = autodiff.numpy.tanh(m["layers"][0].weight @ np.ones(2) + m["layers"][0].bias)
        return autodiff.numpy.sum(h ** 2) + m["scale"] * autodiff.numpy.sum(m["layers"][1].weight ** 2)

    penalty = autodiff.grad(lambda m: loss(m) + total(autodiff.sumsq, autodiff.grad(loss)(m)))
    rng = np.random.default_rng(5)
    model = {"layers": [Dense(rng.standard_normal((3, 2)), rng.standard_normal(3)),
                        Dense(rng.standard_normal((2, 2)), np.zeros(2))], "scale": 0.5}
    monkeypatch.setattr(_layouts, "ENABLED", False)
    first = penalty(model)  # every walk generic
    penalty(model)
    assert not LAYOUTS.get(dict)
    monkeypatch.setattr(_layouts, "ENABLED", True)
    monkeypatch.setattr(hooks, "flatten", accel_flatten.flatten)  # plugged in even in reference mode
    LAYOUTS.clear()
    for _ in range(3):
        again = penalty(model)  # later calls read compiled layouts, outer and inner
    assert len(LAYOUTS.get(dict)) == 2, "the plain and the traced model should both have compiled"
    np.testing.assert_array_equal(first["layers"][0].weight, again["layers"][0].weight)
    np.testing.assert_array_equal(first["layers"][0].bias, again["layers"][0].bias)
    np.testing.assert_array_equal(first["layers"][1].weight, again["layers"][1].weight)
    assert first["scale"] == again["scale"] and first["layers"][1].bias is None


def test_a_traceback_through_a_compiled_layout_shows_the_generated_line():
    import traceback

    class Key(str):  # a dict key whose comparison fails inside the generated code
        __hash__ = str.__hash__

        def __eq__(self, other):
            raise LookupError("comparison failed")

    layout = compile_layout({"w": np.ones(2), "b": [0.5, np.zeros(1)]})
    with pytest.raises(LookupError) as raised:
        layout.read({Key("w"): np.ones(2), "b": [0.5, np.zeros(1)]})
    frames = [frame for frame in traceback.format_exception(raised.value) if '"<autodiff layout' in frame]
    assert len(frames) == 1, traceback.format_exception(raised.value)
    assert "if type(v0) is not dict" in frames[0]  # the generated statement itself, not a bare file name
