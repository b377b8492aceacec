"""Functor protocol, key paths and trainables over the gallery."""

import dataclasses

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from tests.gallery import BatchNormLike, gallery
from traversal import (
    KeyPath,
    children,
    getkeypath,
    haskeypath,
    isleaf,
    isnumeric,
    rebuild,
    setkeypath,
    trainable,
    trainables,
)


def test_children_and_rebuild_round_trip_on_every_gallery_model():
    for model in gallery().values():
        stack = [model]
        while stack:
            node = stack.pop()
            kids = children(node)
            if kids:
                again = rebuild(node, kids)
                assert type(again) is type(node) and children(again).keys() == kids.keys()
                stack.extend(kids.values())


def test_trainables_ties_once_in_order():
    m1, z = np.array([1.0, 2, 3]), np.array([4.0, 5, 6])
    m4 = {"x": m1, "y": m1, "z": z}
    got = trainables(m4)
    assert len(got) == 2 and got[0] is m1 and got[1] is z


def test_trainables_skip_ints_bools_scalars_and_non_trainable_fields():
    g = gallery()
    fi = trainables(g["functions_and_ints"])
    assert len(fi) == 1 and fi[0] is g["functions_and_ints"]["w"]
    norm = g["partly_trainable"]["norm"]
    got = trainables(g["partly_trainable"])
    assert [a is b for a, b in zip(got, [norm.beta, norm.gamma])] == [True, True]
    assert trainables(g["empty"]) == []


def test_trainable_filters_without_reordering():
    norm = BatchNormLike(np.zeros(1), np.ones(1), np.zeros(1), np.ones(1))
    assert trainable(norm) == ("beta", "gamma")

    @dataclasses.dataclass
    class Reordered:
        weight: np.ndarray
        bias: np.ndarray
        frozen: np.ndarray

    @trainable.register(Reordered)
    def _(layer):
        return ("bias", "weight")  # asked for in the other order

    d = Reordered(np.ones((1, 1)), np.zeros(1), np.ones(2))
    got = trainables(d)
    assert len(got) == 2 and got[0] is d.weight and got[1] is d.bias


def test_paths_round_trip_through_getkeypath():
    model = gallery()
    pairs = trainables(model, path=True)
    assert any(p == KeyPath("nested", "a", 0, "b", "weight") for p, _ in pairs)
    for p, arr in pairs:
        assert getkeypath(model, p) is arr and haskeypath(model, p)
    assert str(KeyPath("b", 0, "c")) == "b[0].c"
    assert not haskeypath(model, KeyPath("nested", "missing"))
    with pytest.raises(KeyError, match=r"no key 'missing' at nested"):
        getkeypath(model, KeyPath("nested", "missing"))


def test_setkeypath_copies():
    model = {"a": [np.zeros(2), np.ones(2)]}
    new = setkeypath(model, KeyPath("a", 1), np.full(2, 7.0))
    assert model["a"][1][0] == 1.0 and new["a"][1] is not model["a"][1]
    assert new["a"][0] is model["a"][0]


def test_a_printed_key_path_string_is_read_as_the_path_it_prints():
    model = gallery()
    for p, arr in trainables(model, path=True):
        assert getkeypath(model, str(p)) is arr and haskeypath(model, str(p))
        assert getkeypath(setkeypath(model, str(p), "new"), p) == "new"
    assert getkeypath({"a": [5, {"b": 6}]}, "a[1].b") == 6 and not haskeypath({"a": [5]}, "a[1]")
    assert getkeypath({"a.b": 1, "a": {"b": 2}}, "a.b") == 1  # a string that is a top-level key is that key
    with pytest.raises(ValueError, match=r"getkeypath: 'a\.\.b' is not a key of the dict at the root, and "
                                         r"KeyPath.parse: cannot read .*write keys as in str\(KeyPath"):
        getkeypath({"a": 1}, "a..b")


@pytest.mark.parametrize("fn", [getkeypath, haskeypath, lambda x, p: setkeypath(x, p, 0)])
def test_a_bool_is_refused_as_a_sequence_position(fn):
    with pytest.raises(TypeError, match=r"keypath: the key True at a is a bool, but the list there is indexed "
                                        r"by int positions; write 1 if you mean position 1"):
        fn({"a": [5, 6]}, ("a", True))
    assert getkeypath({True: 3}, (True,)) == 3  # a dict may have bool keys


def test_setkeypath_replaces_one_position_of_a_tie_or_shared_layer():
    w = np.ones(2)
    new = setkeypath({"enc": w, "dec": w, "more": [w]}, "dec", np.zeros(2))
    assert new["enc"] is w and new["more"][0] is w and not new["dec"].any()
    layer = {"weight": w}
    shared = setkeypath([layer, layer], KeyPath(1, "weight"), np.zeros(2))
    assert shared[0] is layer and shared[1]["weight"].sum() == 0


def test_gradient_through_trainables_first_occurrence_and_none():
    m1, z = np.array([1.0, 2, 3]), np.array([4.0, 5, 6])
    m4 = {"x": m1, "y": m1, "z": z}
    loss = lambda m: sum(anp.sum(p ** 2) for p in trainables(m))  # noqa: E731
    g = autodiff.grad(loss)(m4)
    direct = autodiff.grad(lambda m: anp.sum(m["x"] ** 2) + anp.sum(m["z"] ** 2))(m4)
    np.testing.assert_allclose(g["x"], direct["x"])
    np.testing.assert_allclose(g["z"], direct["z"])
    assert g["y"] is None
    assert autodiff.gradcheck(loss, m4, order=2)


def test_non_trainable_field_gets_none_never_its_value():
    norm = BatchNormLike(np.zeros(3), np.ones(3), np.full(3, 5.0), np.ones(3))
    g = autodiff.grad(lambda m: sum(anp.sum(anp.sin(p)) for p in trainables(m)))(norm)
    assert g.running_mean is None and g.running_var is None and g.momentum is None
    np.testing.assert_allclose(g.beta, np.cos(norm.beta))


def test_isnumeric_and_isleaf():
    assert isnumeric(np.ones(2, np.float32)) and isnumeric(np.ones(2, complex))
    assert not isnumeric(np.arange(2)) and not isnumeric(2.0) and not isnumeric(np.ones(2) > 0)
    assert isleaf(np.ones(2)) and not isleaf({"a": 1})


def test_cycle_and_deep_nesting():
    a = {"w": np.ones(1)}
    a["loop"] = [a]
    with pytest.raises(ValueError, match=r"cycle: the object at loop\[0\] contains itself"):
        trainables(a)
    deep = np.ones(1)
    for _ in range(5000):
        deep = {"inner": deep}
    assert len(trainables(deep)) == 1


def test_every_public_function_has_a_runnable_example():
    import traversal

    missing = [name for name in traversal.__all__
               if not isinstance(getattr(traversal, name), (str, type(traversal.NOPRUNE)))
               and ">>>" not in (getattr(traversal, name).__doc__ or "")]
    assert missing == []


def test_registration_is_shared_with_grad():
    import traversal

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    traversal.register(Pair, lambda p: {"a": p.a, "b": p.b}, lambda p, kids: Pair(kids["a"], kids["b"]))
    model = Pair(np.array([0.5, 1.0]), np.array([2.0]))
    g = autodiff.grad(lambda m: anp.sum(anp.sin(m.a)) * anp.sum(m.b))(model)
    assert g.primal_type is Pair
    assert autodiff.gradcheck(lambda m: anp.sum(anp.sin(m.a)) * anp.sum(m.b), model, order=2)
    assert [x is y for x, y in zip(traversal.trainables(model), [model.a, model.b])] == [True, True]
