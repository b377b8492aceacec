"""Rules refuse invalid hyperparameters (as torch.optim does), setup and OptimiserChain refuse non-rules, and
freeze/adjust at any position of a tied array change its one shared Leaf (design.md section 3).  States that do
not fit their parameters are refused in both of update's walks: ``tests/accel/test_optimiser_misfit_states.py``."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import layers
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
    update,
)

MODEL = {"w": np.array([1.0, -2.0, 3.0])}
GRAD = {"w": np.array([0.5, 1.0, -0.25])}

INVALID = [
    (Descent, "lr", -0.1), (Descent, "lr", float("nan")),
    (Momentum, "lr", -1.0), (Momentum, "rho", -1.0), (Nesterov, "rho", -0.5),
    (Adam, "lr", -1e-3), (Adam, "beta1", 1.0), (Adam, "beta1", -0.1), (Adam, "beta2", 1.5), (Adam, "eps", -1.0),
    (AdamW, "beta2", 1.0), (AdamW, "weight_decay", -0.01),
    (WeightDecay, "weight_decay", -1.0), (SignDecay, "lam", -1.0),
    (ClipGrad, "delta", -1.0), (ClipNorm, "omega", -1.0),
]


def _ids(case):
    return f"{case[0].__name__}-{case[1]}={case[2]}"


@pytest.mark.parametrize("cls,field,value", INVALID, ids=[_ids(c) for c in INVALID])
def test_invalid_hyperparameter_is_refused_at_construction(cls, field, value):
    with pytest.raises(ValueError, match=rf"{cls.__name__}: {field}={value!r} is invalid; {field} must be") as e:
        cls(**{field: value})
    assert "pass e.g." in str(e.value)


@pytest.mark.parametrize("cls,field,value", INVALID, ids=[_ids(c) for c in INVALID])
def test_invalid_hyperparameter_is_refused_by_adjust(cls, field, value):
    state = setup(OptimiserChain(ClipGrad(5.0), cls()), MODEL)
    with pytest.raises(ValueError, match=rf"{cls.__name__}: {field}={value!r} is invalid"):
        adjust(state, **{field: value})


@pytest.mark.parametrize("value", [None, "0.1"])
def test_non_number_hyperparameter_is_refused(value):
    with pytest.raises(TypeError, match=r"Descent: lr=.* is not a number"):
        Descent(value)


def test_edge_values_step_and_the_values_just_past_them_are_refused():
    w, g = MODEL["w"], GRAD["w"]
    assert np.array_equal(update(setup(Descent(0.0), MODEL), MODEL, GRAD)[1]["w"], w)
    # eps=0 (torch allows it): Adam's first step is lr * sign(g)
    np.testing.assert_allclose(update(setup(Adam(0.1, eps=0.0), MODEL), MODEL, GRAD)[1]["w"], w - 0.1 * np.sign(g))
    np.testing.assert_allclose(update(setup(Adam(0.1, beta1=0.0, beta2=0.0), MODEL), MODEL, GRAD)[1]["w"],
                               w - 0.1 * g / (np.abs(g) + 1e-8))
    zeroed = OptimiserChain(ClipNorm(0.0), Descent(1.0)), OptimiserChain(ClipGrad(0.0), Descent(1.0))
    for rule in zeroed:  # a threshold of 0 zeroes the gradient, as torch's clip formulas do
        assert np.array_equal(update(setup(rule, MODEL), MODEL, GRAD)[1]["w"], w)
    for make in (lambda: Descent(-1e-12), lambda: Adam(eps=-1e-12), lambda: ClipNorm(-1e-12)):
        with pytest.raises(ValueError, match="must be >= 0"):
            make()


def test_a_traced_hyperparameter_is_not_checked_but_a_plain_one_is():
    w, g = MODEL["w"], GRAD["w"]

    def loss(lr):
        return anp.sum(update(setup(Descent(lr), MODEL), MODEL, GRAD)[1]["w"] ** 2)

    np.testing.assert_allclose(autodiff.grad(loss)(0.1), np.sum(-2 * g * (w - 0.1 * g)))
    np.testing.assert_allclose(autodiff.vmap(loss)(np.array([0.1, 0.2])), [loss(0.1), loss(0.2)])
    with pytest.raises(ValueError, match="lr=-0.1 is invalid"):
        loss(-0.1)


@pytest.mark.parametrize("bad", [None, "adam", lambda: 0, 5], ids=["None", "str", "lambda", "int"])
def test_setup_refuses_a_non_rule(bad):
    fix = r"optimisers\.setup: got .* not an optimiser rule.* e\.g\. setup\(Adam\(\), model\)"
    with pytest.raises(TypeError, match=fix):
        setup(bad, MODEL)


@pytest.mark.parametrize("bad", [None, "adam", 5, Descent], ids=["None", "str", "int", "class"])
def test_optimiser_chain_refuses_a_non_rule(bad):
    with pytest.raises(TypeError, match=r"optimisers\.OptimiserChain: got .*(not an optimiser rule|not a rule)"):
        OptimiserChain(ClipNorm(1.0), bad)


# ---- freeze / adjust at a later position of a tie ---------------------------------------------------------

W = np.array([[1.0, -2.0], [0.5, 3.0]])
C = np.array([2.0, -1.0])
G1, G2, GC = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[-0.5, 0.25], [2.0, -1.0]]), np.array([1.0, 1.0])


def _two_steps(state, model, grads_of):
    for _ in range(2):
        state, model = update(state, model, grads_of(model))
    return state, model


def _tied_dict_steps(change):
    model = {"a": W, "b": W, "c": C}
    state = change(setup(Descent(0.3), model))
    return _two_steps(state, model, lambda m: {"a": G1, "b": G2, "c": GC})  # hand-made: entries add up


def _assert_dict_tie_kept(state, new):
    assert state["a"] is state["b"] and new["a"] is new["b"]


@pytest.mark.parametrize("where", ["a", "b"])
def test_freeze_at_either_position_of_a_tied_array_freezes_it_everywhere(where):
    state, new = _tied_dict_steps(lambda s: freeze(s, where))
    assert np.array_equal(new["a"], W) and np.array_equal(new["b"], W)
    np.testing.assert_allclose(new["c"], C - 2 * 0.3 * GC)  # the untied array still moves
    assert state["a"].frozen and not state["c"].frozen
    _assert_dict_tie_kept(state, new)


@pytest.mark.parametrize("where", ["a", "b"])
def test_adjust_at_either_position_of_a_tied_array_adjusts_it_everywhere(where):
    state, new = _tied_dict_steps(lambda s: adjust(s, where, lr=0.05))
    oracle = W - 2 * 0.05 * (G1 + G2)  # one untied parameter, stepped with the summed gradient, twice
    np.testing.assert_allclose(new["a"], oracle)
    np.testing.assert_allclose(new["b"], oracle)
    assert state["a"].rule.lr == 0.05 and state["c"].rule.lr == 0.3
    np.testing.assert_allclose(new["c"], C - 2 * 0.3 * GC)
    _assert_dict_tie_kept(state, new)


X = np.array([[0.3, -0.7], [1.2, 0.4], [-0.5, 0.9]])


def _loss(m):
    return anp.sum(anp.tanh(m[1](anp.tanh(m[0](X)))) ** 2)


def _tied_layer_steps(change):
    d = layers.Dense(W.copy(), C.copy())
    model = [d, d]
    state = change(setup(Descent(0.3), model))
    return _two_steps(state, model, autodiff.grad(_loss))


def _assert_layer_tie_kept(state, new):
    assert state[0].weight is state[1].weight and state[0].bias is state[1].bias
    assert new[0].weight is new[1].weight


def test_freeze_at_the_second_position_of_a_tied_layer_freezes_it_at_both():
    state, new = _tied_layer_steps(lambda s: freeze(s, 1))
    for layer in new:
        assert np.array_equal(layer.weight, W) and np.array_equal(layer.bias, C)
    assert state[0].weight.frozen and state[0].bias.frozen
    _assert_layer_tie_kept(state, new)


def _hand_oracle(lr):
    """The untied model: one Dense used twice, its gradient the accumulated one, p - lr * g twice."""
    d = layers.Dense(W.copy(), C.copy())
    for _ in range(2):
        g = autodiff.grad(lambda d: _loss([d, d]))(d)
        d = layers.Dense(d.weight - lr * g.weight, d.bias - lr * g.bias)
    return d


def test_adjust_at_the_second_position_of_a_tied_layer_adjusts_it_at_both():
    state, new = _tied_layer_steps(lambda s: adjust(s, 1, lr=0.05))
    oracle = _hand_oracle(0.05)
    for layer in new:
        np.testing.assert_allclose(layer.weight, oracle.weight, rtol=1e-12)
        np.testing.assert_allclose(layer.bias, oracle.bias, rtol=1e-12)
    assert state[0].weight.rule.lr == 0.05
    _assert_layer_tie_kept(state, new)


def test_adjust_at_the_second_position_of_a_tied_layer_matches_torch():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    state, new = _tied_layer_steps(lambda s: adjust(s, 1, lr=0.05))
    lin = torch.nn.Linear(2, 2, dtype=torch.float64)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(W))
        lin.bias.copy_(torch.tensor(C))
    opt = torch.optim.SGD(lin.parameters(), lr=0.05)
    for _ in range(2):
        opt.zero_grad()
        (torch.tanh(lin(torch.tanh(lin(torch.tensor(X))))) ** 2).sum().backward()
        opt.step()
    for layer in new:
        np.testing.assert_allclose(layer.weight, lin.weight.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(layer.bias, lin.bias.detach().numpy(), rtol=1e-12)
    _assert_layer_tie_kept(state, new)
