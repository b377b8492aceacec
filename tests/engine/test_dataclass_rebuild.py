"""A dataclass model rebuilt around traced values (``grad`` hands the loss a copy of the model holding its
variables): the copy skips ``__init__``/``__post_init__`` (a check there may not read a traced value, and a
counter there must not count copies), keeps attributes set after construction, and works for slotted and
frozen dataclasses, in the reference rebuild and in the compiled layouts (the second call with one structure
runs them in the default mode)."""

import dataclasses

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp

built = {"count": 0}


@dataclasses.dataclass
class Plain:
    w: object
    b: object

    def __post_init__(self):
        built["count"] += 1


@dataclasses.dataclass(slots=True)
class Slotted:
    w: object
    b: object


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: object
    b: object


def loss(m, x):
    return anp.sum(anp.tanh(x @ m.w + m.b) ** 2)


@pytest.mark.parametrize("cls", [Plain, Slotted, Frozen])
def test_gradient_of_a_dataclass_model_twice(cls):
    rng = np.random.default_rng(0)
    w, b, x = rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((4, 3))
    model = cls(w, b)
    before = built["count"]
    for _ in range(3):  # the first walk is generic; later ones may run a compiled layout
        g = autodiff.grad(loss)(model, x)
    assert built["count"] == before  # copies of the model did not run __post_init__
    assert autodiff.gradcheck(lambda w: loss(cls(w, b), x), w)
    np.testing.assert_allclose(g.w, autodiff.grad(lambda w: loss(cls(w, b), x))(w), rtol=1e-12)
    np.testing.assert_allclose(g.b, autodiff.grad(lambda b: loss(cls(w, b), x))(b), rtol=1e-12)


def test_attributes_set_after_construction_reach_the_loss():
    model = Plain(np.ones((3, 2)), np.zeros(2))
    model.scale = 3.0

    def scaled(m, x):
        return m.scale * loss(m, x)

    x = np.ones((1, 3))
    for _ in range(3):
        g = autodiff.grad(scaled)(model, x)
    np.testing.assert_allclose(g.b, 3.0 * autodiff.grad(lambda b: loss(Plain(model.w, b), x))(model.b), rtol=1e-12)
