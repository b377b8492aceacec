"""A per-argument rule (``defvjp``/``defjvp`` given one function per argument) refuses an argument it has no
function for, naming the primitive and the argument, wherever that argument sits: given ``None``, or past the
end of the functions given (a primitive of ten arguments with one pullback; the rule was once padded with eight
refusals, so the tenth argument met a bare IndexError).  Both modes: the accelerated backward pass falls back to
the reference for such an entry."""

import numpy as np
import pytest

import autodiff
from autodiff.extend import defjvp, defvjp, primitive


def _ten(*xs):
    return xs[0] * sum(xs[1:])


ten = primitive(_ten, "ten")
defvjp(ten, lambda g, ans, *xs: g * sum(xs[1:]))
defjvp(ten, lambda t, ans, *xs: t * sum(xs[1:]))

half = primitive(lambda x, y: x * y, "half_product")
defvjp(half, lambda g, ans, x, y: g * y, None)


def test_the_argument_given_a_pullback_differentiates():
    args = [float(k + 1) for k in range(10)]
    assert autodiff.gradcheck(lambda x: ten(x, *args[1:]), args[0])


@pytest.mark.parametrize("k", [1, 9])
@pytest.mark.parametrize("transform, refusal", [
    (lambda f, x: autodiff.grad(f)(x), "has no pullback.*defvjp"),
    (lambda f, x: autodiff.jvp(f, x, 1.0), "has no JVP.*defjvp"),
], ids=["grad", "jvp"])
def test_an_argument_past_the_functions_given_is_refused_by_name(k, transform, refusal):
    args = [float(j + 1) for j in range(10)]

    def f(x):
        return ten(*args[:k], x, *args[k + 1:])

    with pytest.raises(NotImplementedError, match=rf"ten: argument {k} {refusal}"):
        transform(f, args[k])


def test_an_argument_given_none_is_refused_by_name():
    with pytest.raises(NotImplementedError, match=r"half_product: argument 1 has no pullback.*defvjp"):
        autodiff.grad(lambda y: half(np.ones(2), y).sum())(np.ones(2))
