"""Every rule against torch.optim (or its formula) over 5 steps, 0-d parameters too; ties applied once; None
skipped; nested chains; per-example ClipNorm under vmap; gradients that do not mirror the model refused."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from layers import MLP
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
    "nested chain": (OptimiserChain(OptimiserChain(WeightDecay(0.2), OptimiserChain(ClipGrad(2.0))), Descent(0.1)),
                     lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.2),
                     lambda ps: [p.grad.add_(p.detach(), alpha=0.2).clamp_(-2.0, 2.0).sub_(p.detach(), alpha=0.2)
                                 for p in ps]),  # clip (grad + decay), then SGD adds the decay back
}


def _steps_match_torch(name, start, grads):
    """Five steps of ``CASES[name]`` from ``start`` against torch on the same gradients; the final state."""
    rule, make_torch, before_step = CASES[name]
    model, state = dict(start), setup(rule, start)
    params = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in start.items()}
    opt = make_torch(list(params.values()))
    for g in grads:
        state, model = update(state, model, g)
        for k, p in params.items():
            p.grad = torch.tensor(g[k])
        if before_step:
            before_step(list(params.values()))
        opt.step()
        for k, p in params.items():
            np.testing.assert_allclose(model[k], p.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
    return state, model


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_torch_over_five_steps(name):
    _steps_match_torch(name, {k: v.copy() for k, v in START.items()}, GRADS)


def _state_leaves(state):
    stack, out = [state], []
    while stack:
        s = stack.pop()
        stack.extend(s) if isinstance(s, tuple) else out.append(s)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_zero_dim_parameter_keeps_training_and_stays_an_array(name):
    """A 0-d parameter stepped with 0-d gradients: every step is taken (numpy's scalar from ``x - dx`` is no
    parameter, so it used to stop after one), and the parameter and its state stay 0-d arrays."""
    start = {"s": np.array(0.7), "b": START["b"].copy()}
    grads = [{"s": np.array(5.0 * rng.standard_normal()), "b": g["b"]} for g in GRADS]
    state, model = _steps_match_torch(name, start, grads)
    assert type(model["s"]) is np.ndarray and model["s"].shape == () and model["s"].dtype == np.float64
    for a in _state_leaves(state["s"].state):
        assert a is None or type(a) is int or (type(a) is np.ndarray and a.shape == ())


def test_zero_dim_float32_parameter_keeps_its_dtype_with_adam():
    model = {"s": np.array(2.0, np.float32)}
    state, p = setup(Adam(0.1), model), torch.tensor(2.0, dtype=torch.float32, requires_grad=True)
    opt = torch.optim.Adam([p], lr=0.1)
    for _ in range(3):
        state, model = update(state, model, autodiff.grad(lambda m: m["s"] ** 2)(model))
        p.grad = 2 * p.detach()
        opt.step()
    assert type(model["s"]) is np.ndarray and model["s"].dtype == np.float32
    assert all(a.dtype == np.float32 for a in state["s"].state[:2])
    np.testing.assert_allclose(model["s"], p.detach().numpy(), rtol=1e-6)


def test_nested_chain_is_the_flat_chain_and_adjusts():
    nested = OptimiserChain(OptimiserChain(WeightDecay(0.2)), OptimiserChain(ClipGrad(2.0), Momentum(0.1)))
    flat = OptimiserChain(WeightDecay(0.2), ClipGrad(2.0), Momentum(0.1))
    assert nested == flat
    state = adjust(setup(nested, START), lr=0.5, weight_decay=0.1)
    assert state["w"].rule == OptimiserChain(WeightDecay(0.1), ClipGrad(2.0), Momentum(0.5))
    assert len(state["w"].state) == 3


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
    from tests.gallery import BatchNormLike

    norm = BatchNormLike(np.zeros(2), np.ones(2), np.full(2, 3.0), np.ones(2))
    state = setup(Descent(0.5), norm)
    assert state.running_mean is None and state.momentum is None
    g = autodiff.grad(lambda n: anp.sum(n.gamma * n.running_mean) + anp.sum(n.beta))(norm)
    assert g.running_mean is None  # a constant for grad too (design.md section 1) ...
    g = autodiff.Tangent(BatchNormLike, {**g, "running_mean": np.ones(2)})  # ... and a hand-made entry there
    state, new = update(state, norm, g)
    assert new.running_mean is norm.running_mean  # ... is not stepped: the optimiser only steps trainable ones
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


# --- per-example ClipNorm under vmap ---------------------------------------------------------------------------


def test_clip_norm_under_vmap_clips_each_example_like_torch():
    """DP-SGD style: one ClipNorm + Descent step per example, batched by vmap, against torch per example (the
    first example's gradient is inside the norm, the others outside)."""
    model = {k: v.copy() for k, v in START.items()}
    per_example = {k: np.stack([g[k] * s for g, s in zip(GRADS, [0.01, 1.0, 3.0])]) for k in ("w", "b")}
    rule = OptimiserChain(ClipNorm(3.0), Descent(0.1))
    stepped = autodiff.vmap(lambda g: update(setup(rule, model), model, g)[1])(per_example)
    for i in range(3):
        params = [torch.tensor(model[k].copy(), requires_grad=True) for k in ("w", "b")]
        for p, k in zip(params, ("w", "b")):
            p.grad = torch.tensor(per_example[k][i])
        torch.nn.utils.clip_grad_norm_(params, 3.0)
        torch.optim.SGD(params, lr=0.1).step()
        for p, k in zip(params, ("w", "b")):
            np.testing.assert_allclose(stepped[k][i], p.detach().numpy(), rtol=1e-10)


@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")  # inf * 0, as torch
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_clip_norm_with_a_non_finite_gradient_clips_as_torch_does(bad):
    """One NaN entry makes the global norm NaN: torch's factor is NaN and every gradient turns NaN, where
    ``min(1.0, omega / nan)`` was 1.0 and let the others through unclipped.  An infinite entry makes the factor
    0 (the others zeroed, the infinite one NaN), as in torch."""
    model = {k: v.copy() for k, v in START.items()}
    grads = {"w": GRADS[0]["w"].copy(), "b": GRADS[0]["b"].copy()}
    grads["b"][1] = bad
    stepped = update(setup(OptimiserChain(ClipNorm(1.0), Descent(0.1)), model), model, grads)[1]
    params = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in START.items()}
    for k, p in params.items():
        p.grad = torch.tensor(grads[k])
    torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0)
    torch.optim.SGD(list(params.values()), lr=0.1).step()
    for k, p in params.items():
        np.testing.assert_allclose(stepped[k], p.detach().numpy(), rtol=1e-12, equal_nan=True, err_msg=k)
    assert np.isnan(stepped["w"]).all() == (bad != bad)  # NaN: every entry of every parameter


# --- gradients that do not mirror the model, and other misuse ----------------------------------------------------

DENSE_GRAD = autodiff.grad(lambda d: anp.sum(d(np.ones((1, 2)))))(MLP([2, 3], dtype=np.float64).layers[0])


@pytest.mark.parametrize("model,grads,where,has,given", [
    ({"w": np.ones(3)}, [np.ones(3)], r"\(root\)", r"dict with children \['w'\]", r"list with children \[0\]"),
    ({"w": np.ones(3)}, {"w": np.ones(3), "extra": np.ones(3)}, r"\(root\)", r"dict with children \['w'\]",
     r"dict with children \['w', 'extra'\]"),
    ({"net": {"a": [np.ones(2)]}}, {"net": {"a": np.ones(2)}}, r"net\.a", r"list with children \[0\]", "ndarray"),
    ({"net": MLP([2, 3, 1], dtype=np.float64)}, {"net": DENSE_GRAD}, "net", r"Chain with children \['layers'\]",
     r"Tangent\[Dense\] with children \['weight', 'bias'\]"),
], ids=["list for dict", "extra key", "array for list", "Dense gradient for a Chain"])
def test_a_gradient_that_does_not_mirror_the_model_is_refused(model, grads, where, has, given):
    with pytest.raises(ValueError, match=rf"optimisers\.update: grads does not mirror the model at {where}: the "
                                         rf"model has a {has} there, grads a {given}; pass the structural gradient "
                                         r"of the model, from autodiff\.grad"):
        update(setup(Descent(1.0), model), model, grads)


def test_hand_written_gradients_mirroring_dicts_and_lists_step_like_torch():
    model = {"enc": [START["w"].copy(), START["b"].copy()], "dec": {"b": START["b"].copy(), "n": 3}}
    grads = {"enc": [GRADS[0]["w"], None], "dec": {"b": GRADS[0]["b"], "n": None}}
    _, new = update(setup(Descent(0.1), model), model, grads)
    params = [torch.tensor(a, requires_grad=True) for a in (model["enc"][0], model["dec"]["b"])]
    for p, g in zip(params, (grads["enc"][0], grads["dec"]["b"])):
        p.grad = torch.tensor(g)
    torch.optim.SGD(params, lr=0.1).step()
    np.testing.assert_allclose(new["enc"][0], params[0].detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(new["dec"]["b"], params[1].detach().numpy(), rtol=1e-12)
    assert new["enc"][1] is model["enc"][1] and new["dec"]["n"] == 3  # None: no step


def test_adjust_refuses_a_field_no_rule_has():
    state = setup(OptimiserChain(WeightDecay(), Adam(0.1)), {"enc": {"w": np.ones(2)}, "dec": np.ones(1)})
    with pytest.raises(ValueError, match=r"optimisers\.adjust: no rule in the state has a field 'learning_rate'; "
                                         r"the fields there are \['beta1', 'beta2', 'eps', 'lr', 'weight_decay'\]"):
        adjust(state, learning_rate=0.5)
    with pytest.raises(ValueError, match=r"optimisers\.adjust: no rule at enc has a field 'rho'.*adjust\(state, lr="):
        adjust(state, "enc", rho=0.5)
    assert adjust(state, "enc", lr=0.5)["enc"]["w"].rule.rules[1].lr == 0.5


def test_setup_with_a_rule_class_says_to_pass_an_instance():
    with pytest.raises(TypeError, match=r"optimisers\.setup: got the class Adam, not a rule; pass an instance, "
                                        r"e\.g\. setup\(Adam\(\), model\)"):
        setup(Adam, {"w": np.ones(2)})
