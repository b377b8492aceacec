"""Every rule against torch.optim (or its formula) over 5 steps; ties applied once; None skipped."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from optimisers import (
    Adam,
    AdamW,
    ClipGrad,
    ClipNorm,
    Descent,
    Momentum,
    Nesterov,
    OptimiserChain,
    SignDecay,
    WeightDecay,
    adjust,
    freeze,
    setup,
    thaw,
    update,
)
from traversal import KeyPath

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

rng = np.random.default_rng(0)
START = {"w": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)}
GRADS = [{"w": rng.standard_normal((3, 4)) * 5, "b": rng.standard_normal(4) * 5} for _ in range(5)]

CASES = {
    "Descent": (Descent(0.1), lambda p: torch.optim.SGD(p, lr=0.1), None),
    "Momentum": (Momentum(0.05, 0.9), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9), None),
    "Nesterov": (Nesterov(0.05, 0.8), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True), None),
    "Adam": (Adam(0.01, 0.8, 0.99, 1e-7), lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), eps=1e-7), None),
    "AdamW": (AdamW(0.01, 0.9, 0.999, 1e-8, 0.1),
              lambda p: torch.optim.AdamW(p, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1), None),
    "WeightDecay": (OptimiserChain(WeightDecay(0.2), Descent(0.1)),
                    lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.2), None),
    "ClipGrad": (OptimiserChain(ClipGrad(2.0), Descent(0.1)), lambda p: torch.optim.SGD(p, lr=0.1),
                 lambda ps: torch.nn.utils.clip_grad_value_(ps, 2.0)),
    "ClipNorm": (OptimiserChain(ClipNorm(3.0), Adam(0.01)), lambda p: torch.optim.Adam(p, lr=0.01),
                 lambda ps: torch.nn.utils.clip_grad_norm_(ps, 3.0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_torch_over_five_steps(name):
    rule, make_torch, before_step = CASES[name]
    model = {k: v.copy() for k, v in START.items()}
    state = setup(rule, model)
    params = [torch.tensor(START[k].copy(), requires_grad=True) for k in ("w", "b")]
    opt = make_torch(params)
    for g in GRADS:
        state, model = update(state, model, g)
        for p, k in zip(params, ("w", "b")):
            p.grad = torch.tensor(g[k])
        if before_step:
            before_step(params)
        opt.step()
        for p, k in zip(params, ("w", "b")):
            np.testing.assert_allclose(model[k], p.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_sign_decay_follows_its_formula():
    rule = OptimiserChain(SignDecay(0.3), Descent(0.1))
    model, state = {k: v.copy() for k, v in START.items()}, setup(rule, START)
    expected = {k: v.copy() for k, v in START.items()}
    for g in GRADS:
        state, model = update(state, model, g)
        expected = {k: expected[k] - 0.1 * (g[k] + 0.3 * np.sign(expected[k])) for k in expected}
        for k in expected:
            np.testing.assert_allclose(model[k], expected[k], rtol=1e-12)


def test_tied_array_is_updated_once_and_stays_tied():
    w = rng.standard_normal(3)
    tied = {"a": w, "b": w, "c": np.ones(2)}
    loss = lambda m: anp.sum(m["a"] ** 2) + anp.sum(anp.sin(m["b"])) + anp.sum(m["c"])  # noqa: E731
    state = setup(Adam(0.1), tied)
    assert state["a"] is state["b"]
    single = {"w": w.copy()}
    single_state = setup(Adam(0.1), single)
    model = tied
    for _ in range(5):
        g = autodiff.grad(loss)(model)
        assert g["b"] is None  # the tie's total sits at its first occurrence
        state, model = update(state, model, g)
        single_state, single = update(single_state, single, {"w": g["a"]})
        assert model["a"] is model["b"] and state["a"] is state["b"]
        np.testing.assert_allclose(model["a"], single["w"], rtol=1e-12)
    assert state["a"].state[2] == 5  # five Adam steps, not ten


def test_none_gradient_means_no_step_and_no_state_advance():
    model = {"w": np.ones(2), "frozen_by_none": np.ones(2)}
    state = setup(Adam(0.1), model)
    state, new = update(state, model, {"w": np.ones(2), "frozen_by_none": None})
    assert new["frozen_by_none"] is model["frozen_by_none"]
    assert state["frozen_by_none"].state[2] == 0 and state["w"].state[2] == 1
    state, new2 = update(state, new, None)
    assert new2["w"] is new["w"]


def test_non_trainable_fields_are_carried_over():
    from gallery import BatchNormLike

    norm = BatchNormLike(np.zeros(2), np.ones(2), np.full(2, 3.0), np.ones(2))
    state = setup(Descent(0.5), norm)
    assert state.running_mean is None and state.momentum is None
    g = autodiff.grad(lambda n: anp.sum(n.gamma * n.running_mean) + anp.sum(n.beta))(norm)
    assert g.running_mean is not None  # grad differentiates every float array ...
    state, new = update(state, norm, g)
    assert new.running_mean is norm.running_mean  # ... but the optimiser only steps trainable ones
    np.testing.assert_allclose(new.gamma, norm.gamma - 0.5 * g.gamma)


def test_freeze_thaw_adjust():
    model = {"enc": [np.ones(2)], "dec": np.ones(2)}
    g = {"enc": [np.ones(2)], "dec": np.ones(2)}
    state = freeze(setup(Descent(0.1), model), KeyPath("enc"))
    state, new = update(state, model, g)
    assert new["enc"][0] is model["enc"][0] and not np.array_equal(new["dec"], model["dec"])
    state = adjust(thaw(state), lr=1.0)
    state, newer = update(state, new, g)
    np.testing.assert_allclose(newer["enc"][0], new["enc"][0] - 1.0)
    np.testing.assert_allclose(newer["dec"], new["dec"] - 1.0)


def test_inputs_are_not_modified():
    model = {k: v.copy() for k, v in START.items()}
    before = {k: v.copy() for k, v in model.items()}
    state = setup(Momentum(0.1), model)
    update(state, model, GRADS[0])
    for k in model:
        np.testing.assert_array_equal(model[k], before[k])
        assert not state[k].state.any()


def test_a_gradient_of_the_wrong_shape_is_refused_naming_the_path():
    model = {"layer": {"b": np.ones(3)}}
    state = setup(Descent(0.1), model)
    with pytest.raises(ValueError, match=r"layer\.b has shape \(2, 3\).*parameter has shape \(3,\)"):
        update(state, model, {"layer": {"b": np.ones((2, 3))}})
    with pytest.raises(TypeError, match=r"gradient at layer\.b is a dict"):
        update(state, model, {"layer": {"b": {"x": np.ones(3)}}})


def test_swapped_state_and_model_are_refused():
    model = {"w": np.ones(2), "b": np.zeros(2)}
    state = setup(Descent(0.1), model)
    g = {"w": np.ones(2), "b": np.ones(2)}
    with pytest.raises(TypeError, match=r"swapped.*update\(state, model, grads\)"):
        update(model, state, g)
    with pytest.raises(TypeError, match=r"swapped.*update\(state, model, grads\)"):
        update(model, model, g)  # a model where the state should be


@pytest.mark.parametrize("path", ["enc", "enc[0]", KeyPath("enc", 0), ("enc", 0)])
def test_freeze_takes_a_key_a_printed_key_path_or_a_keypath(path):
    model = {"enc": [np.ones(2), np.ones(1)], "dec": {"w": np.ones(2)}}
    state = freeze(setup(Descent(0.1), model), path)
    assert state["enc"][0].frozen and not state["dec"]["w"].frozen
    assert not thaw(state, path)["enc"][0].frozen
    assert freeze(setup(Descent(0.1), model), "dec.w")["dec"]["w"].frozen


def test_freeze_prefers_a_key_that_looks_like_a_path():
    model = {"a.b": np.ones(2), "a": {"b": np.ones(2)}}
    state = freeze(setup(Descent(0.1), model), "a.b")
    assert state["a.b"].frozen and not state["a"]["b"].frozen
