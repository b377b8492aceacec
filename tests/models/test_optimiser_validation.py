"""Rules refuse invalid hyperparameters (as torch.optim does), setup and OptimiserChain refuse non-rules, and
freeze/adjust at any position of a tied array change its one shared Leaf (design.md section 3)."""

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


# --- state arrays and array hyperparameters must fit their parameter (issue 36) ----------------------------------

from optimisers import Leaf, _accel, _tree  # noqa: E402


@pytest.fixture(params=["one walk", "reference"])
def walk(request, monkeypatch):
    """Run each test through the accelerated walk (which hands a misfit to the reference) and the reference."""
    monkeypatch.setattr(_tree, "updater", _accel.update_fast if request.param == "one walk" else _tree._update)


def _step(rule, built_for, model, grads=None):
    """``update`` of ``model`` with the state ``setup(rule, built_for)`` (a state built for another model)."""
    grads = grads if grads is not None else {k: np.ones_like(v) for k, v in model.items()}
    return update(setup(rule, built_for), model, grads)


@pytest.mark.parametrize("rule,field", [
    (Momentum(), "Momentum"), (Nesterov(), "Nesterov"), (Adam(), "Adam"), (AdamW(), "AdamW"),
    (OptimiserChain(ClipNorm(1.0), Adam()), "Adam"),
], ids=["Momentum", "Nesterov", "Adam", "AdamW", "chain"])
@pytest.mark.parametrize("size", [3, 1 << 16], ids=["small", "large"])
def test_a_state_built_for_another_shape_is_refused_naming_the_path(walk, rule, field, size):
    """A state built for a (size,) array would broadcast a (1,) parameter to (size,): refused, naming the key path,
    both shapes and the fix (large arrays are the fused kernels' size)."""
    with pytest.raises(ValueError, match=rf"optimisers.update: the state at enc.w does not fit its parameter: its "
                                         rf"{field} state holds an array of shape \({size},\), but the parameter "
                                         rf"has shape \(1, {size}\).*setup\(rule, model\)"):
        _step(rule, {"enc": {"w": np.ones(size)}}, {"enc": {"w": np.ones((1, size))}},
              {"enc": {"w": np.ones((1, size))}})


@pytest.mark.parametrize("rule,name", [
    (Descent(lr=np.array([0.1, 0.2, 0.3])), "Descent's lr"), (Momentum(rho=np.full(3, 0.5)), "Momentum's rho"),
    (Adam(eps=np.full(3, 1e-8)), "Adam's eps"), (AdamW(weight_decay=np.full(3, 0.1)), "AdamW's weight_decay"),
    (OptimiserChain(ClipNorm(np.full(3, 1.0)), Descent()), "ClipNorm's omega"),
    (OptimiserChain(WeightDecay(np.full(3, 0.1)), Descent()), "WeightDecay's weight_decay"),
], ids=["Descent lr", "Momentum rho", "Adam eps", "AdamW decay", "ClipNorm omega", "WeightDecay"])
def test_an_array_hyperparameter_that_would_change_the_parameters_shape_is_refused(walk, rule, name):
    with pytest.raises(ValueError, match=rf"the state at w does not fit its parameter: {name} has shape \(3,\), "
                                         r"which does not broadcast to the parameter's shape \(1,\) without "
                                         r"changing it; pass a number, a 0-d array, or an array whose shape"):
        _step(rule, {"w": np.ones(1)}, {"w": np.ones(1)})


def test_array_hyperparameters_that_broadcast_into_the_parameter_step_per_entry(walk):
    """An lr per column (3,) or per row (2, 1) of a (2, 3) weight, or a 0-d one: each entry steps as Descent with
    that entry's number would (the oracle: the scalar rule, entry by entry)."""
    x, g = np.arange(6.0).reshape(2, 3), np.linspace(-1, 1, 6).reshape(2, 3)
    for lr in (np.array([0.1, 0.2, 0.3]), np.array([[0.5], [0.25]]), np.array(0.2)):
        stepped = update(setup(Descent(lr=lr), {"w": x}), {"w": x}, {"w": g})[1]["w"]
        full = np.broadcast_to(lr, x.shape).ravel()
        entries = [(np.array(x.flat[i]), np.array(g.flat[i]), float(full[i])) for i in range(x.size)]
        expected = [update(setup(Descent(r), xi), xi, gi)[1] for xi, gi, r in entries]
        assert stepped.shape == x.shape and np.array_equal(stepped.ravel(), np.array(expected))


class _Widen:
    """A custom rule whose step has another shape than its parameter's (a mistake update must catch)."""

    is_global = False

    def init(self, x):
        return None

    def apply(self, state, x, dx):
        return None, np.ones(3) * np.sum(dx)


def test_a_custom_rule_returning_a_step_of_another_shape_is_refused_naming_the_path(walk):
    with pytest.raises(ValueError, match=r"optimisers.update: _Widen.apply returned a step of shape \(3,\) for the "
                                         r"parameter at layer.w of shape \(1,\)"):
        _step(_Widen(), {"layer": {"w": np.ones(1)}}, {"layer": {"w": np.ones(1)}}, {"layer": {"w": np.ones(1)}})


class _RunningNorm:
    """A custom rule whose state is a per-parameter scalar (a numpy float, kept as a 0-d array by update)."""

    is_global = False

    def init(self, x):
        return np.float64(0.0)

    def apply(self, state, x, dx):
        state = 0.9 * state + 0.1 * np.sqrt(np.sum(dx * dx))
        return state, dx / (state + 1.0)


def test_a_0d_state_array_is_allowed_as_a_per_parameter_scalar(walk):
    model = {"w": np.ones((2, 3))}
    state = setup(_RunningNorm(), model)
    for _ in range(3):
        state, model = update(state, model, {"w": np.ones((2, 3))})
    assert model["w"].shape == (2, 3) and np.shape(state["w"].state) == ()


def test_a_chain_state_that_is_not_one_state_per_rule_is_refused_naming_the_path(walk):
    """A chain's state is a tuple of one state per rule; anything else raised a bare TypeError from inside."""
    rule = OptimiserChain(ClipNorm(1.0), Momentum())
    for state in (None, (None,), np.zeros(2)):
        with pytest.raises(ValueError, match=r"the state at w does not fit its parameter: its state is not a tuple "
                                             r"of one state per rule of its chain of 2; build the state with setup"):
            update({"w": Leaf(rule, state)}, {"w": np.ones(2)}, {"w": np.ones(2)})
