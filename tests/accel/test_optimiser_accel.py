"""``optimisers._accel``: ``update``'s rebuild in tight loops gives the objects its reference walk gives, on the
gallery of awkward models (ties, tied layers, a tie into a non-trainable field, functions and ints, None
gradients, frozen leaves, rule chains), and hands a cycle or a state that does not mirror the model to the
reference, whose error names the key path."""

import numpy as np
import pytest

import autodiff
from autodiff._hooks import hooks
from autodiff._trees import leaves
from optimisers import Adam, ClipNorm, Descent, Momentum, OptimiserChain, _accel, _tree, freeze, setup, update
from tests.gallery import gallery
from traversal import fmap, isnumeric, trainables


def _grads(model):
    """A gradient mirroring ``model``: ones at every float array, None elsewhere (no step there)."""
    return fmap(lambda x: np.ones_like(x) if np.result_type(x).kind in "fc" else None, model, exclude=isnumeric)


def _both(monkeypatch, state, model, grads):
    """``update`` through the loops, then through the reference walk."""
    monkeypatch.setattr(hooks, "updater", _accel.update_fast)
    fast = update(state, model, grads)
    monkeypatch.setattr(hooks, "updater", _tree._update)
    return fast, update(state, model, grads)


def _same_objects(a, b):
    """Same structure and values, and the same identity relations: two positions hold one object in ``a``
    exactly where they do in ``b`` (ties kept, unstepped arrays passed through)."""
    la, lb = leaves(a), leaves(b)
    assert [p for p, _ in la] == [p for p, _ in lb]
    for (path, x), (_, y) in zip(la, lb):
        assert type(x) is type(y), path
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=str(path))
        elif not isinstance(x, _tree.Leaf):
            assert x is y or x == y, path
    ids_a, ids_b = [id(x) for _, x in la], [id(x) for _, x in lb]
    assert [ids_a.index(i) for i in ids_a] == [ids_b.index(i) for i in ids_b]


def _leaves_of(state):
    return _tree._state_leaves(state)


@pytest.mark.parametrize("name", sorted(gallery()))
@pytest.mark.parametrize("rule", [Descent(0.1), Adam(0.1), OptimiserChain(ClipNorm(1.0), Descent(0.1))],
                         ids=["descent", "adam", "chain"])
def test_the_loops_rebuild_what_the_reference_rebuilds(monkeypatch, name, rule):
    model = gallery()[name]
    state = setup(rule, model)
    (fast_state, fast_model), (ref_state, ref_model) = _both(monkeypatch, state, model, _grads(model))
    _same_objects(fast_model, ref_model)
    _same_objects(fast_state, ref_state)
    for x, y in zip(_leaves_of(fast_state), _leaves_of(ref_state)):
        assert x.rule is y.rule and x.frozen == y.frozen
        for s, t in zip(leaves(x.state), leaves(y.state)):
            np.testing.assert_array_equal(s[1], t[1])
    if trainables(model):  # the step happened: something changed
        assert any(a is not b for a, b in zip(trainables(fast_model), trainables(model)))


def test_frozen_leaves_and_none_gradients_stay_what_they_were(monkeypatch):
    model = gallery()["tied_layer"] + [{"w": np.ones(2), "v": np.ones(3)}]
    state = freeze(setup(Adam(0.1), model), 2)
    grads = _grads(model)
    grads[2]["v"] = None
    (fast_state, fast_model), (ref_state, ref_model) = _both(monkeypatch, state, model, grads)
    _same_objects(fast_model, ref_model)
    assert fast_model[2]["w"] is model[2]["w"] and fast_model[0] is fast_model[1]
    assert fast_state[2]["w"] is state[2]["w"]


def test_traced_steps_rebuild_the_same_and_differentiate_the_same(monkeypatch):
    """Under ``grad`` (MAML's inner loop) the loops hold traced arrays and give the reference's meta-gradient."""
    model = gallery()["tied_layer"]
    x = np.linspace(-1.0, 1.0, 6).reshape(3, 2)

    def meta(m):
        state = setup(Descent(0.1), m)
        for _ in range(2):
            g = autodiff.grad(lambda m: autodiff.numpy.sum(np.tanh(x) @ m[0].weight[:2] * m[1].bias))(m)
            state, m = update(state, m, g)
        return autodiff.numpy.sum(m[0].weight ** 2) + autodiff.numpy.sum(m[1].bias ** 3)

    monkeypatch.setattr(hooks, "updater", _accel.update_fast)
    fast = autodiff.grad(meta)(model)
    monkeypatch.setattr(hooks, "updater", _tree._update)
    ref = autodiff.grad(meta)(model)
    for a, b in zip(trainables(fast), trainables(ref)):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_a_cycle_goes_to_the_reference_and_its_error(monkeypatch):
    model = {"w": np.ones(2), "more": []}
    state = setup(Descent(0.1), model)
    model["more"].append(model)  # made after setup, which refuses cycles itself
    monkeypatch.setattr(hooks, "updater", _accel.update_fast)
    with pytest.raises(ValueError, match="cycle"):
        update(state, model, {"w": np.ones(2), "more": None})


def test_a_cycle_below_a_non_trainable_field_is_refused_as_the_reference_refuses_it(monkeypatch):
    """No state and no gradient reach a non-trainable field, but the new model is rebuilt through it: a cycle
    there must raise the reference's error, not come back as a copy pointing into the old model."""
    import dataclasses

    from traversal import trainable

    @dataclasses.dataclass
    class WithBuffers:
        w: np.ndarray
        buffers: dict

    trainable.register(WithBuffers, lambda layer: ("w",))
    model = WithBuffers(np.ones(2), {"n": np.zeros(1)})
    state = setup(Descent(0.1), model)
    model.buffers["self"] = model.buffers
    grads = WithBuffers(np.ones(2), None)
    errors = []
    for updater in (_accel.update_fast, _tree._update):
        monkeypatch.setattr(hooks, "updater", updater)
        errors.append(_raised(lambda: update(state, model, grads)))
    assert type(errors[0]) is type(errors[1]) is ValueError and str(errors[0]) == str(errors[1])
    assert "cycle" in str(errors[0])


def test_a_state_not_mirroring_the_model_where_no_gradient_reached_goes_to_the_reference(monkeypatch):
    model = {"w": np.ones(2), "rest": {"a": np.ones(1)}}
    state = setup(Descent(0.1), model)
    state = {"w": state["w"], "rest": {"b": state["rest"]["a"]}}  # keys that are not the model's
    monkeypatch.setattr(hooks, "updater", _accel.update_fast)
    fast = _raised(lambda: update(state, model, {"w": np.ones(2), "rest": None}))
    monkeypatch.setattr(hooks, "updater", _tree._update)
    ref = _raised(lambda: update(state, model, {"w": np.ones(2), "rest": None}))
    assert type(fast) is type(ref) and str(fast) == str(ref)


def _raised(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001  (the reference's own error, whatever it is)
        return e
    raise AssertionError("no error")


def test_a_tied_layer_with_entries_at_both_positions_adds_them_as_the_reference_does(monkeypatch):
    """A hand-made gradient with an entry at each position of a tied layer: the walk hands it to the reference,
    which steps the layer once with the sum."""
    model = gallery()["tied_layer"]
    state = setup(Adam(0.1), model)
    (fast_state, fast_model), (ref_state, ref_model) = _both(monkeypatch, state, model, _grads(model))
    _same_objects(fast_model, ref_model)
    assert fast_model[0] is fast_model[1]
    one_entry = update(state, model, [_grads(model)[0], None])[1]
    assert not np.array_equal(fast_model[0].weight, one_entry[0].weight)  # both entries counted


def test_a_cycle_in_the_model_and_in_the_gradient_is_refused_not_walked_forever(monkeypatch):
    model = {"w": np.ones(2), "more": []}
    state = setup(Descent(0.1), model)
    model["more"].append(model)
    grads = {"w": np.ones(2), "more": []}
    grads["more"].append(grads)
    for updater in (_accel.update_fast, _tree._update):
        monkeypatch.setattr(hooks, "updater", updater)
        with pytest.raises(ValueError, match=r"optimisers.update: cycle: the object at more\[0\] contains itself"):
            update(state, model, grads)


# === random trees ==================================================================================================

_POOL = [np.linspace(-1.0, 1.0, 3), np.ones((2, 2)), np.arange(3.0), np.full(1, 2.0).astype(np.float32)]


def _trees():
    """Nested dicts, lists, tuples and gallery ``Dense`` layers over a few shared arrays (so ties appear), with
    ints, an int array and a function among the leaves."""
    from hypothesis import strategies as st

    from tests.gallery import Dense

    leaf = st.one_of(st.sampled_from(range(len(_POOL))).map(lambda k: _POOL[k]),
                     st.sampled_from([3, np.sin, np.arange(2)]))
    return st.recursive(leaf, lambda kids: st.one_of(
        st.dictionaries(st.sampled_from("abc"), kids, max_size=3),
        st.lists(kids, max_size=3),
        st.lists(kids, max_size=2).map(tuple),
        st.tuples(kids, kids).map(lambda wb: Dense(*wb))), max_leaves=10)


def _sparse_grads(model, keep):
    """A gradient mirroring ``model``: ones at float arrays, with ``None`` for whole subtrees where ``keep``
    says so (no step there)."""
    from traversal import children, rebuild

    def walk(x):
        if isnumeric(x):
            return np.ones_like(x) if keep() else None
        kids = children(x)
        if not kids:
            return None
        if not keep():
            return None
        return rebuild(x, {k: walk(v) for k, v in kids.items()})

    return walk(model)


@pytest.mark.parametrize("kernels", ["numpy", "kernels"])
def test_random_trees_step_as_the_reference_steps(monkeypatch, kernels):
    """Also with the rules' one-pass kernels taking every array, however small (``optimisers/_fused.py``)."""
    from hypothesis import example, given, settings

    from optimisers import _fused

    monkeypatch.setattr(_fused, "MIN_SIZE", 1 if kernels == "kernels" else _fused.MIN_SIZE)
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(_trees(), st.sampled_from(["descent", "adam", "momentum", "chain"]), st.lists(st.booleans(), min_size=1))
    @example(_POOL[0], "adam", [True])  # a bare array: the state is its one Leaf (it once stayed unstepped)
    def check(model, rule_name, keeps):
        rule = {"descent": Descent(0.1), "adam": Adam(0.1), "momentum": Momentum(0.1, 0.9),
                "chain": OptimiserChain(ClipNorm(1.0), Descent(0.1))}[rule_name]
        flags = iter(keeps * 50)
        grads = _sparse_grads(model, lambda: next(flags, True))
        try:
            state = setup(rule, model)
        except ValueError:  # setup refuses what it refuses, walk or no walk
            return
        results = []
        for updater in (_accel.update_fast, _tree._update):
            previous, hooks.updater = hooks.updater, updater
            try:
                results.append(_outcome(lambda: _twice(state, model, grads)))
            finally:
                hooks.updater = previous
        (fast, fast_error), (ref, ref_error) = results
        assert type(fast_error) is type(ref_error) and str(fast_error) == str(ref_error)
        if ref is not None:
            _same_objects(fast[1], ref[1])
            _same_objects(fast[0], ref[0])
            for x, y in zip(_leaves_of(fast[0]), _leaves_of(ref[0])):
                for s, t in zip(leaves(x.state), leaves(y.state)):
                    np.testing.assert_array_equal(s[1], t[1])

    check()


def _twice(state, model, grads):
    """Two steps, the second from the first's state and model (a state that failed to advance shows there)."""
    state, model = update(state, model, grads)
    return update(state, model, grads)


def _outcome(f):
    try:
        return f(), None
    except (ValueError, TypeError) as e:
        return None, e
