"""total(f, model): value, one tape entry, ties, closures, second order, grads form, only=, errors."""

import dataclasses

import numpy as np
import pytest
from gallery import BatchNormLike, Dense, gallery

import autodiff
import autodiff.numpy as anp
import layers
from autodiff import grad
from layers import Chain
from traversal import fmap, isnumeric, total, trainables


def seed():
    return {"x": np.array([3.0, 4.0]), "y": (np.sin, np.array([5.0])), "z": (6, 7)}


def m4():
    m1 = np.array([1.0, 2.0, 3.0])
    return {"x": m1, "y": m1, "z": np.array([4.0, 5.0, 6.0])}


def sumsq(p):
    return anp.sum(p * p)


def test_seed_values_against_the_plain_sum():
    m = seed()
    for f in (anp.sum, anp.linalg.norm, len):
        assert total(f, m) == sum(f(p) for p in [m["x"], m["y"][1]])
    assert total(anp.sum, m) == 12 and total(anp.linalg.norm, m) == 10 and total(len, m) == 3


def test_seed_gradient_structure():
    m = seed()
    g = grad(lambda m: total(anp.linalg.norm, m))(m)
    np.testing.assert_allclose(g["x"], m["x"] / np.linalg.norm(m["x"]))
    assert g["y"][0] is None and g["z"] is None
    np.testing.assert_allclose(g["y"][1], np.sign(m["y"][1]))
    assert autodiff.gradcheck(lambda m: total(anp.linalg.norm, m), m, order=2)


def test_tied_model_counts_once_and_puts_the_gradient_first():
    m = m4()
    assert total(anp.sum, m) == anp.sum(m["x"]) + anp.sum(m["z"])
    g = grad(lambda m: total(anp.sum, m))(m)
    np.testing.assert_array_equal(g["x"], np.ones(3))
    assert g["y"] is None
    np.testing.assert_array_equal(g["z"], np.ones(3))


def test_non_trainable_fields_get_none_and_are_not_counted():
    norm = BatchNormLike(np.zeros(3), np.ones(3), np.full(3, 7.0), np.ones(3))
    assert total(len, norm) == 6
    g = grad(lambda n: total(sumsq, n))(norm)
    assert g.running_mean is None and g.running_var is None and g.momentum is None
    np.testing.assert_allclose(g.gamma, 2 * norm.gamma)


def test_ints_bools_and_scalars_are_ignored():
    m = {"i": np.arange(3), "b": np.ones(2) > 0, "s": 2.5, "n": 4, "w": np.ones(2)}
    assert total(len, m) == 2


def test_empty_model_gives_init():
    assert total(sumsq, {}, init=1.5) == 1.5
    assert total(sumsq, {"f": np.sin, "n": 3}) == 0.0


@pytest.mark.parametrize("f", [sumsq, autodiff.sumsq, autodiff.abssum, autodiff.maxabs], ids=lambda f: f.__name__)
def test_no_parameters_give_the_empty_sum_with_every_reduction(f):
    """The known reductions' fused path too (it once failed on an empty list): the sum over no arrays is ``init``,
    as Python's ``sum`` of nothing, and the gradient is the one of a model with nothing to differentiate."""
    w = {"w": np.ones(3)}
    for model in ({}, {"n": 3, "f": np.sin}, Chain([np.tanh])):
        assert total(f, model, init=1.5) == sum(map(f, trainables(model)), 1.5)
        assert grad(lambda m: total(f, m))(model) == grad(lambda m: total(sumsq, m))(model)
    assert total(lambda x, dx: f(dx), w, {"w": None}) == total(f, {})
    assert total(f, w, {"w": None}) == total(f, {})


def test_closure_over_a_traced_value():
    m1, z = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    m3 = {"x": m1, "z": z}
    for model in (m3, m4()):
        expected = grad(lambda lam, model=model: sum(anp.sum(p * lam) for p in trainables(model)))(1.0)
        assert grad(lambda lam, model=model: total(lambda p: anp.sum(p * lam), model))(1.0) == expected
        assert expected == anp.sum(m1) + anp.sum(z)
    both = grad(lambda m, lam: total(lambda p: lam * sumsq(p), m), argnums=(0, 1))(m4(), 2.0)
    assert both[0]["y"] is None
    assert autodiff.gradcheck(lambda m, lam: total(lambda p: lam * sumsq(p), m), m4(), 2.0, order=2)


def test_one_tape_entry_however_many_leaves():
    for n in (3, 30, 300):
        model = [np.full(2, float(k)) for k in range(n)]
        _, pullback = autodiff.vjp(lambda m: total(sumsq, m), model)
        entries = [e for e in pullback._tape.entries if e[0] is not None]
        assert [e[0].__name__ for e in entries] == ["total"]


def test_hessian_of_norm_total():
    v = np.array([1.0, 2.0, 3.0])
    h = autodiff.hessian(lambda v: total(anp.linalg.norm, {"x": v, "y": np.sin, "z": [4, 5, 6.0]}))(v)
    oracle = autodiff.hessian(lambda v: anp.linalg.norm(v) + 0.0)(v)
    np.testing.assert_allclose(h, oracle, rtol=1e-12)
    n = np.linalg.norm(v)
    np.testing.assert_allclose(h, np.eye(3) / n - np.outer(v, v) / n ** 3, rtol=1e-12)


def test_gradient_of_a_function_of_the_gradient_of_total():
    m = m4()
    f = lambda m: anp.sum(grad(lambda m: total(lambda p: anp.sum(anp.sin(p) ** 2), m))(m)["x"] ** 2)  # noqa: E731
    assert autodiff.gradcheck(f, m, order=1)
    assert autodiff.gradcheck(lambda m: total(lambda p: anp.sum(anp.tanh(p) * p), m), m, order=2)


def test_consistency_with_trainables_and_fmap_on_the_gallery():
    f = lambda p: anp.sum(anp.sin(p) * p)  # noqa: E731
    for name, model in gallery().items():
        if name == "complex":
            continue  # sin of complex has no real-valued gradient convention yet
        ours = total(f, model)
        via_trainables = sum((f(p) for p in trainables(model)), 0.0)
        via_fmap = []
        fmap(lambda x, out=via_fmap: out.append(f(x)) if isnumeric(x) else None, model, exclude=isnumeric)
        np.testing.assert_allclose(ours, via_trainables)
        g1 = grad(lambda m: total(f, m))(model) if trainables(model) else None
        g2 = grad(lambda m: sum((f(p) for p in trainables(m)), 0.0))(model) if trainables(model) else None
        _assert_same_tree(g1, g2)
        if name not in ("partly_trainable", "tied_into_non_trainable"):  # fmap ignores trainable
            np.testing.assert_allclose(ours, sum(via_fmap, 0.0))


def _assert_same_tree(a, b):
    from traversal import fleaves

    la, lb = fleaves(a), fleaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert (x is None) == (y is None)
        if x is not None and not callable(x):
            tight = np.result_type(x) == np.float64
            np.testing.assert_allclose(x, y, rtol=1e-12 if tight else 1e-5, atol=1e-12 if tight else 1e-6)


def test_grads_form_gives_the_global_gradient_norm():
    m = m4()
    loss = lambda m: anp.sum(anp.sin(m["x"]) * m["y"]) + sumsq(m["z"])  # noqa: E731
    g = grad(loss)(m)
    norm = anp.sqrt(total(lambda x, dx: sumsq(dx), m, g))
    flat = np.concatenate([g["x"], g["z"]])
    np.testing.assert_allclose(norm, np.linalg.norm(flat))


def test_grads_form_adds_tied_contributions_before_f():
    m1 = np.array([1.0, -2.0])
    model = {"a": m1, "b": m1}
    grads = {"a": np.array([1.0, 1.0]), "b": np.array([2.0, 3.0])}
    value = total(lambda x, dx: sumsq(dx), model, grads)
    assert value == sumsq(grads["a"] + grads["b"])
    gg = grad(lambda g: total(lambda x, dx: sumsq(dx), model, g))(grads)
    np.testing.assert_allclose(gg["a"], 2 * (grads["a"] + grads["b"]))
    np.testing.assert_allclose(gg["b"], 2 * (grads["a"] + grads["b"]))
    weighted = lambda m, g: total(lambda x, dx: anp.sum(x * dx * dx), m, g)  # noqa: E731
    assert autodiff.gradcheck(weighted, model, grads, order=2)


def test_grads_none_entries_are_skipped():
    model = {"a": np.ones(2), "b": np.ones(3)}
    assert total(lambda x, dx: len(dx), model, {"a": None, "b": np.zeros(3)}) == 3


def test_gradient_penalty_against_torch():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    rng = np.random.default_rng(0)
    w1, w2, x = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((5, 3))
    model = {"w1": w1, "w2": w2, "act": "tanh"}

    def loss(m):
        return anp.sum(anp.tanh(x @ m["w1"]) @ m["w2"]) ** 2 / 10

    ours = grad(lambda m: loss(m) + total(sumsq, grad(loss)(m)))(model)
    tw1 = torch.tensor(w1, requires_grad=True)
    tw2 = torch.tensor(w2, requires_grad=True)
    tl = (torch.tanh(torch.tensor(x) @ tw1) @ tw2).sum() ** 2 / 10
    g1, g2 = torch.autograd.grad(tl, [tw1, tw2], create_graph=True)
    penalised = tl + (g1 ** 2).sum() + (g2 ** 2).sum()
    t1, t2 = torch.autograd.grad(penalised, [tw1, tw2])
    np.testing.assert_allclose(ours["w1"], t1.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours["w2"], t2.numpy(), rtol=1e-10)
    assert ours["act"] is None


def test_only_filters_by_type_and_predicate():
    inner = Dense(np.ones((2, 2)), np.zeros(2))
    model = {"dense": inner, "norm": BatchNormLike(np.ones(2), np.ones(2), np.ones(2), np.ones(2)),
             "free": np.ones(5)}
    count = lambda p: p.size  # noqa: E731
    assert total(count, model, only=Dense) == inner.weight.size + inner.bias.size
    assert total(count, model, only=(Dense, BatchNormLike)) == total(count, model) - model["free"].size
    assert total(count, model, only=lambda n: isinstance(n, Dense) and n.bias.size == 3) == 0
    g = grad(lambda m: total(sumsq, m, only=Dense))(model)
    assert g["norm"] is None and g["free"] is None
    np.testing.assert_allclose(g["dense"].weight, 2 * inner.weight)


def _mlp():
    return layers.MLP([3, 4, 2], dtype=np.float64, seed=1)


_MATRICES = lambda n: getattr(n, "ndim", 0) == 2  # noqa: E731


@pytest.mark.parametrize("layouts", [False, True])
@pytest.mark.parametrize("f", [autodiff.sumsq, sumsq], ids=["known reduction", "any f"])
def test_only_tests_the_parameters_themselves_as_well_as_their_containers(monkeypatch, layouts, f):
    from autodiff._accel import layouts as _layouts

    monkeypatch.setattr(_layouts, "ENABLED", layouts)
    model = _mlp()
    weights = [p for p in trainables(model) if p.ndim == 2]
    for _ in range(3):  # later calls may take the compiled readers: they must not bypass only=
        assert np.isclose(total(f, model, only=_MATRICES), sum(float((w * w).sum()) for w in weights))
        assert np.isclose(total(f, model, only=np.ndarray), total(f, model))
        assert np.isclose(total(f, model, only=(np.ndarray,)), total(f, model))
        g = grad(lambda m: total(f, m, only=_MATRICES))(model)
        for layer in (0, 2):
            np.testing.assert_allclose(g.layers[layer].weight, 2 * model.layers[layer].weight)
            assert g.layers[layer].bias is None
        g = grad(lambda m: total(f, m, only=np.ndarray))(model)
        np.testing.assert_allclose(g.layers[2].bias, 2 * model.layers[2].bias)


def test_only_matching_a_parameter_with_grads_and_at_second_order():
    model = _mlp()
    loss = lambda m: anp.sum(m(np.ones((2, 3))) ** 2)  # noqa: E731
    grads = grad(loss)(model)
    weights = [(model.layers[k].weight, grads.layers[k].weight) for k in (0, 2)]
    for f in (autodiff.sumsq, lambda x, dx: anp.sum(dx * dx)):
        value = total(f, model, grads, only=_MATRICES)
        assert np.isclose(value, sum(float((dx * dx).sum()) for _, dx in weights))
    penalty = lambda m: total(autodiff.sumsq, grad(loss)(m), only=_MATRICES)  # noqa: E731
    assert autodiff.gradcheck(penalty, model)


def test_a_predicate_that_fails_on_a_container_names_it_and_the_fix():
    with pytest.raises(TypeError, match=r"only= predicate raised AttributeError on the Dense at layers\[0\].*getattr"):
        total(autodiff.sumsq, _mlp(), only=lambda n: False if isinstance(n, list | Chain) else n.ndim == 2)


def test_errors_name_the_key_path():
    model = {"a": np.ones(2), "b": [np.ones(3)]}
    with pytest.raises(ValueError, match=r"shape \(3,\) at b\[0\] but shape \(2,\) at a"):
        total(lambda p: p * 2.0, model)
    with pytest.raises(ValueError, match=r"grads does not match the model at b"):
        total(lambda x, dx: sumsq(dx), model, {"a": np.ones(2), "b": np.ones(3)})
    with pytest.raises(TypeError, match=r"only= must be a type"):
        total(sumsq, model, only=3)
    with pytest.raises(RuntimeError, match=r"f failed on the parameter at b\[0\] \(shape \(3,\)"):
        total(lambda p: p.reshape(2).sum(), model)
    with pytest.raises(RuntimeError, match=r"f failed on the parameter at b\[0\]"):
        grad(lambda m: total(lambda p: p.reshape(2).sum(), m))(model)


@dataclasses.dataclass
class _Holder:
    w: np.ndarray


def test_cycle_in_total_raises():
    h = _Holder(np.ones(2))
    loop = {"h": h, "again": None}
    loop["again"] = [loop]
    with pytest.raises(ValueError, match="cycle"):
        total(sumsq, loop)


GENERIC = {
    "sum": (anp.sum, lambda p: anp.sum(p * 1.0)),
    "norm": (anp.linalg.norm, lambda p: anp.sqrt(anp.sum(p * p))),
    "sumsq": (autodiff.sumsq, lambda p: anp.sum(p * p)),
    "abssum": (autodiff.abssum, lambda p: anp.sum(anp.abs(p))),
    "maxabs": (autodiff.maxabs, lambda p: autodiff.maxabs(p) + 0.0),
}


@pytest.mark.parametrize("name", sorted(GENERIC))
def test_fast_path_equals_generic_path_to_second_order(name):
    fast, generic = GENERIC[name]
    rng = np.random.default_rng(3)
    shared = rng.standard_normal(4) + 0.5
    models = [m4(), {"a": shared, "b": [shared, rng.standard_normal((2, 3))], "n": 3},
              {"w32": rng.standard_normal(5).astype(np.float32), "w64": rng.standard_normal(3)}]
    models += [m for k, m in gallery().items() if k not in ("complex", "empty")]
    if name == "norm":  # at a zero vector our norm's rule gives the subgradient 0; sqrt(sum(p*p)) gives nan
        models = [m for m in models if all(np.any(p != 0) for p in trainables(m))]
    for model in models:
        np.testing.assert_allclose(total(fast, model), total(generic, model), rtol=1e-6)
        g_fast = grad(lambda m: total(fast, m))(model)  # noqa: B023
        g_gen = grad(lambda m: total(generic, m))(model)  # noqa: B023
        _assert_same_tree(g_fast, g_gen)
        penalty = lambda m: total(autodiff.sumsq, grad(lambda m: total(fast, m))(m))  # noqa: E731, B023
        generic_penalty = lambda m: total(autodiff.sumsq, grad(lambda m: total(generic, m))(m))  # noqa: E731, B023
        np.testing.assert_allclose(penalty(model), generic_penalty(model), rtol=1e-6)
        _assert_same_tree(grad(penalty)(model), grad(generic_penalty)(model))  # second order: fast = generic
        assert autodiff.gradcheck(penalty, model, order=1)
    assert autodiff.gradcheck(lambda m: total(fast, m), models[1], order=2)


def test_scaled_and_grads_forms_take_the_fast_path_and_agree_with_the_generic_one():
    from autodiff._accel.reductions import lookup
    from autodiff._for_traversal import is_known
    from autodiff._hooks import REFERENCE

    rng = np.random.default_rng(5)
    shared = rng.standard_normal(3)
    model = {"a": shared, "b": [shared, rng.standard_normal((2, 2))]}
    half = autodiff.scaled(0.5, autodiff.sumsq)
    assert is_known(half)
    assert (lookup(half) is None) == REFERENCE  # the fused path (an acceleration) takes it unless switched off
    generic = lambda p: 0.5 * anp.sum(p * p)  # noqa: E731
    np.testing.assert_allclose(total(half, model), total(generic, model), rtol=1e-12)
    _assert_same_tree(grad(lambda m: total(half, m))(model), grad(lambda m: total(generic, m))(model))
    assert autodiff.gradcheck(lambda m: total(half, m), model, order=2)
    g = grad(lambda m: anp.sum(anp.sin(m["a"]) * m["b"][0]) + anp.sum(m["b"][1] ** 3))(model)
    by_known = total(autodiff.sumsq, model, g)
    by_pairs = total(lambda x, dx: anp.sum(dx * dx), model, g)
    np.testing.assert_allclose(by_known, by_pairs, rtol=1e-12)
    lam_traced = grad(lambda lam: total(autodiff.scaled(lam, autodiff.sumsq), model))(2.0)  # a traced scale
    np.testing.assert_allclose(lam_traced, total(autodiff.sumsq, model), rtol=1e-12)
    penalty = lambda m: total(autodiff.sumsq, m, grad(lambda q: anp.sum(anp.tanh(q["b"][1])))(m))  # noqa: E731
    assert autodiff.gradcheck(penalty, model, order=1)


# --- complex parameters: total's pushforward pairs as Re Σ c·t (the engine's convention), never conjugated ---


def _complex_model():
    rng = np.random.default_rng(11)
    shared = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    return {"a": shared, "b": [shared, rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))],
            "r": rng.standard_normal(2)}


def _direction(model, seed):
    rng = np.random.default_rng(seed)
    return fmap(lambda p: rng.standard_normal(p.shape) + (1j * rng.standard_normal(p.shape) if p.dtype.kind == "c"
                                                          else 0), model)


def _moved(model, v, s):
    """``model + s v`` (a tie moves once: fmap keeps ties)."""
    return fmap(lambda p, d: p + s * d, model, v)


@pytest.mark.parametrize("name", ["sumsq", "abssum", "norm", "scaled"])
def test_jvp_and_hvp_of_a_known_reduction_on_complex_parameters_match_central_differences(name):
    """The real-linear map v -> d total(m + s v)/ds at 0, and d/ds of the gradient, by central differences.
    (The fused path once pushed with vdot(unit, t) = Σ conj(unit) t, wrong for complex parameters.)"""
    f = {"sumsq": autodiff.sumsq, "abssum": autodiff.abssum, "norm": anp.linalg.norm,
         "scaled": autodiff.scaled(0.5, autodiff.sumsq)}[name]
    m = _complex_model()
    v = _direction(m, 1)
    eps = 1e-6
    value = lambda m: total(f, m)  # noqa: E731
    numeric = (value(_moved(m, v, eps)) - value(_moved(m, v, -eps))) / (2 * eps)
    _, t = autodiff.jvp(value, (m,), (v,))
    np.testing.assert_allclose(t, numeric, rtol=1e-6)
    squared = lambda m: total(f, m) ** 2  # noqa: E731  (a curved function of the total: a real Hessian term)
    g_plus, g_minus = grad(squared)(_moved(m, v, eps)), grad(squared)(_moved(m, v, -eps))
    numeric_hv = fmap(lambda a, b: (a - b) / (2 * eps), g_plus, g_minus)
    for mode in ("reverse_over_forward", "forward_over_reverse"):
        got = autodiff.hvp(squared, (m,), (v,), mode=mode)[0]
        for a, b in zip(trainables(got), trainables(numeric_hv)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
