"""jit's signature read through the accelerated flatten (a structure seen before is read by its compiled layout,
with its structure's key worked out once) equals the signature read by the reference walk, on every gallery
model, as a positional and as a keyword argument beside a static one; and a compiled layout's key stays right when
the structure changes under it."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import traversal
from autodiff._accel.flatten import LAYOUTS
from autodiff._jit.signature import read_signature
from autodiff._trees import walk_flatten
from tests.gallery import gallery
from tests.modes import REFERENCE

MODELS = gallery()


@pytest.fixture(autouse=True)
def _fresh_layouts():
    """No layouts from earlier tests: a root type compiles at most ``COMPILES_PER_TYPE`` structures."""
    LAYOUTS.clear()
    yield
    LAYOUTS.clear()


def _read(flatten, model, extra):
    return read_signature("f", (model, 3.0), {"m": extra, "mode": "a"}, (1,), ("mode",), flatten=flatten)


def _assert_same_signature(got, want):
    assert got.key == want.key and hash(got.key) == hash(want.key)
    assert got.slots == want.slots and got.statics == want.statics
    assert len(got.leaves) == len(want.leaves) and all(a is b for a, b in zip(got.leaves, want.leaves))
    assert len(got.distinct) == len(want.distinct) and all(a is b for a, b in zip(got.distinct, want.distinct))
    inputs = [np.zeros(np.shape(v)) for v in want.distinct]  # rebuilt around new inputs, the same way
    (got_args, got_kw), (want_args, want_kw) = got.rebuild(inputs), want.rebuild(inputs)
    assert repr((got_args, got_kw)) == repr((want_args, want_kw))


@pytest.mark.parametrize("name", list(MODELS))
def test_the_accelerated_flatten_gives_the_reference_signature(name):
    model, extra = MODELS[name], MODELS["nested"]
    want = _read(walk_flatten, model, extra)
    for _ in range(3):  # a root type is compiled after two walks: the third read goes through the layout
        got = _read(None, model, extra)
        _assert_same_signature(got, want)
    compiled = [type(t).__name__ == "CompiledTreeDef" for t in got.treedef.parts]
    container_tie = name in ("tied_layer",)  # a container met twice is left to the walk
    assert all(compiled) == (not REFERENCE and not container_tie)


def test_a_compiled_structure_changed_under_it_gets_its_own_key():
    f = autodiff.jit(lambda t: anp.sum(t["a"]) + sum(anp.sum(b) for b in t["b"]))
    for t in [{"a": np.ones(2), "b": [np.ones(1)]}] * 3 + [{"a": np.ones(2), "b": [np.ones(1), np.ones(2)]},
                                                           {"b": [np.ones(1)], "a": np.ones(2)}]:
        want = read_signature("f", (t,), {}, (), (), flatten=walk_flatten).key
        assert read_signature("f", (t,), {}, (), ()).key == want
        assert f(t) == np.sum(t["a"]) + sum(np.sum(b) for b in t["b"])
    assert f.cache_info().traces == 3 and f.cache_info().hits == 2


@pytest.mark.parametrize("name", list(MODELS))
def test_a_jitted_functions_output_tree_rebuilds_as_the_walk_does(name):
    """jit's output tree rebuilds on every call, by generated code when accelerations are on (``rebuilder``): each
    gallery model's tree, and its gradient's as a jitted gradient's program holds it, rebuild doubled leaves as the
    walk's treedef does."""
    from autodiff._hooks import hooks

    g = autodiff.grad(lambda m: traversal.total(autodiff.sumsq, m))
    for tree, program_tree in ((MODELS[name], None), (g(MODELS[name]), autodiff.jit(g).lower(MODELS[name]).out_tree)):
        leaves, treedef = walk_flatten(tree)
        doubled = [2.0 * x if isinstance(x, np.ndarray) and x.dtype.kind == "f" else x for x in leaves]
        want = repr(treedef.unflatten(doubled))
        assert repr(hooks.rebuilder(treedef).unflatten(doubled)) == want
        if program_tree is not None:
            assert type(program_tree).__name__ == ("TreeDef" if REFERENCE else "CompiledTreeDef")
            assert repr(program_tree.unflatten(doubled)) == want
