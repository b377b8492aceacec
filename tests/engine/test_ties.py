"""One tie rule (design.md section 3), everywhere: grad, total, trainables and the optimisers.

Ties are by identity, for arrays only; within an argument a tied array's gradient sits at its first
trainable occurrence; across arguments each argument is its own variable; hand-made gradients at
several positions of a tie add up.  Oracle: the same loss on an untied copy, whose positions'
gradients must add up to the tie's.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad
from optimisers import Descent, setup, update
from tests.gallery import BatchNormLike, gallery
from traversal import total, trainables


def _tied_into_statistics():
    return gallery()["tied_into_non_trainable"]


def _loss(m):
    norm = m["norm"]
    return anp.sum(anp.sin(m["w"]) * norm.gamma) + anp.sum(norm.running_mean ** 2) + anp.sum(norm.beta)


def _untied(m, running_mean=None):
    norm = m["norm"]
    running_mean = norm.running_mean.copy() if running_mean is None else running_mean
    copy = BatchNormLike(norm.beta, norm.gamma, running_mean, norm.running_var)
    return {"norm": copy, "w": m["w"]}


def _through_statistics(m):
    """The untied loss's derivative through the running statistics' position alone: a constant of the
    model (design.md section 1), so taken as an argument of its own."""
    return grad(lambda rm: _loss(_untied(m, rm)))(m["norm"].running_mean.copy())


def test_a_tie_into_a_non_trainable_field_puts_the_gradient_at_the_trainable_position():
    m = _tied_into_statistics()
    assert m["norm"].running_mean is m["w"]  # first met as running statistics, which are not trainable
    g = grad(_loss)(m)
    gu = grad(_loss)(_untied(m))
    assert g["norm"].running_mean is None and gu["norm"].running_mean is None  # untied: a constant
    np.testing.assert_allclose(g["w"], gu["w"] + _through_statistics(m))  # tied: one variable, the true derivative
    assert autodiff.gradcheck(_loss, m)


def test_total_and_update_see_the_gradient_of_a_tie_into_statistics():
    m = _tied_into_statistics()
    g = grad(_loss)(m)
    gu = grad(_loss)(_untied(m))
    expected = sum(np.sum(d ** 2) for d in (gu["w"] + _through_statistics(m), gu["norm"].beta, gu["norm"].gamma))
    np.testing.assert_allclose(total(autodiff.sumsq, m, g), expected)
    _, new = update(setup(Descent(0.5), m), m, g)
    np.testing.assert_allclose(new["w"], m["w"] - 0.5 * g["w"])
    assert new["norm"].running_mean is new["w"]  # the tie is kept


def test_total_under_grad_of_a_tie_into_statistics():
    m = _tied_into_statistics()
    g = grad(lambda m: total(autodiff.sumsq, m))(m)
    assert g["norm"].running_mean is None
    np.testing.assert_allclose(g["w"], 2 * m["w"])
    via_trainables = grad(lambda m: sum(anp.sum(p * p) for p in trainables(m)))(m)
    np.testing.assert_allclose(via_trainables["w"], g["w"])
    assert via_trainables["norm"].running_mean is None


def test_one_array_in_two_structured_arguments_gets_each_arguments_partial():
    a, b = gallery()["one_array_in_two_arguments"]
    shared = a["w"]
    assert b["w"] is shared

    def f(p, q):
        return anp.sum(anp.sin(p["w"]) * q["w"] * q["b"])

    ga, gb = grad(f, argnums=(0, 1))(a, b)
    copy = {"w": shared.copy(), "b": b["b"]}
    oa, ob = grad(f, argnums=(0, 1))(a, copy)  # oracle: the same values, not tied
    np.testing.assert_allclose(ga["w"], oa["w"])
    np.testing.assert_allclose(gb["w"], ob["w"])
    np.testing.assert_allclose(gb["b"], ob["b"])
    bare = grad(lambda x, y: anp.sum(anp.sin(x) * y * b["b"]), argnums=(0, 1))(shared, shared)  # bare arguments
    np.testing.assert_allclose(ga["w"], bare[0])
    np.testing.assert_allclose(gb["w"], bare[1])


@pytest.mark.parametrize("x", [1.5, np.float64(1.5)])
def test_python_and_numpy_scalars_are_never_tied(x):
    g = grad(lambda y: y[0] * y[1] * y[1])((x, x))
    gu = grad(lambda y: y[0] * y[1] * y[1])((float(x), float(x) + 0.0 * 1))
    assert g == gu == (x * x, 2 * x * x)


def test_hand_made_entries_at_several_positions_of_a_tie_add_up_in_update_and_total():
    w = np.array([1.0, -2.0, 3.0])
    m = {"a": w, "b": w, "c": np.ones(2)}
    g = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([0.5, 0.5, 0.5]), "c": np.ones(2)}
    summed = {"a": g["a"] + g["b"], "b": None, "c": g["c"]}
    _, stepped = update(setup(Descent(0.1), m), m, g)
    _, oracle = update(setup(Descent(0.1), m), m, summed)
    np.testing.assert_allclose(stepped["a"], oracle["a"])
    assert stepped["a"] is stepped["b"]
    dot = lambda x, dx: anp.sum(x * dx)  # noqa: E731
    np.testing.assert_allclose(total(dot, m, g), total(dot, m, summed))


def test_a_tied_layer_object_gets_its_gradient_once():
    model = gallery()["tied_layer"]

    def loss(m):
        return sum(anp.sum(anp.tanh(np.ones((1, 3)) @ d.weight + d.bias) ** 2) for d in m)

    g = grad(loss)(model)
    assert g[1] is None
    twice = 2 * grad(lambda d: loss([d]))(model[0]).weight
    np.testing.assert_allclose(g[0].weight, twice)


def test_trainable_changed_through_an_abc_registration_is_seen_by_total():
    import abc
    import dataclasses

    from traversal import trainable

    class OnlyScale(abc.ABC):  # noqa: B024 (a marker ABC: classes join it through register)
        pass

    @trainable.register(OnlyScale)
    def _(layer):
        return ("scale",)

    @dataclasses.dataclass
    class Affine:
        scale: np.ndarray
        shift: np.ndarray

    model = [Affine(np.full(2, 2.0), np.full(2, 3.0))]
    for _ in range(3):  # walked (and compiled) before the registration
        assert total(anp.sum, model) == 10.0
    OnlyScale.register(Affine)  # changes trainable(Affine) without touching trainable's registry
    assert len(trainables(model)) == 1
    assert total(anp.sum, model) == total(anp.sum, trainables(model)) == 4.0
    assert grad(lambda m: total(anp.sum, m))(model)[0].shift is None
