"""State arrays and array hyperparameters must fit their parameter (issue 36), in both of ``update``'s walks: the
accelerated one (``optimisers._accel``, which hands a misfit to the reference) and the reference walk.  A state
built for another shape, an array hyperparameter that would widen the parameter, a custom rule's step of another
shape and a chain state that is not one state per rule are refused, naming the key path and the fix."""

import numpy as np
import pytest

from autodiff._hooks import hooks
from optimisers import (
    Adam,
    AdamW,
    ClipNorm,
    Descent,
    Leaf,
    Momentum,
    Nesterov,
    OptimiserChain,
    WeightDecay,
    _accel,
    _tree,
    setup,
    update,
)


@pytest.fixture(params=["one walk", "reference"])
def walk(request, monkeypatch):
    """Run each test through the accelerated walk (which hands a misfit to the reference) and the reference."""
    monkeypatch.setattr(hooks, "updater", _accel.update_fast if request.param == "one walk" else _tree._update)


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
