"""gradcheck never passes having checked nothing: int points and int leaves are refused by name, and so are
a call with no float argument and a step that is not positive and finite; a wrong rule is still caught."""

import numpy as np
import pytest

import autodiff.numpy as anp
from autodiff import GradcheckError, gradcheck
from autodiff.extend import defvjp, primitive

wrong_sin = primitive(np.sin, "gradcheck_wrong_sin")
defvjp(wrong_sin, lambda g, ans, x: g * anp.sin(x))  # deliberately wrong: should be cos


@pytest.mark.parametrize("point", [3, np.int64(3), True], ids=["int", "np.int64", "bool"])
def test_gradcheck_at_an_int_point_refuses_instead_of_passing(point):
    message = r"gradcheck: nothing to check: arg 0 has dtype (int|bool).*np\.asarray\(x, float\)"
    with pytest.raises(ValueError, match=message):
        gradcheck(wrong_sin, point)


@pytest.mark.parametrize("order", [1, 2])
def test_gradcheck_at_an_int_array_refuses_at_both_orders(order):
    with pytest.raises(ValueError, match=r"arg 0 has dtype int64"):
        gradcheck(lambda x: anp.sum(wrong_sin(x)), np.array([1, 2, 3]), order=order)


def test_gradcheck_names_the_int_leaf_inside_a_structure():
    with pytest.raises(ValueError, match=r"arg 0: \['w'\] has dtype int"):
        gradcheck(lambda m: anp.sum(wrong_sin(m["w"])), {"w": np.array([1, 2])})


def test_gradcheck_at_the_float_point_still_catches_the_wrong_rule():
    with pytest.raises(GradcheckError):
        gradcheck(wrong_sin, 3.0)
    assert gradcheck(anp.sin, 3.0)


def test_int_arguments_beside_a_float_are_still_constants():
    assert gradcheck(lambda x, k: anp.sum(x ** k), np.array([0.5, 2.0]), 3)
    with pytest.raises(GradcheckError):
        gradcheck(lambda x, k: anp.sum(wrong_sin(x) * k), np.array([0.5, 2.0]), 3)


def test_gradcheck_with_no_numeric_argument_refuses():
    with pytest.raises(ValueError, match="no float or complex argument"):
        gradcheck(lambda s: 1.0, "text")


@pytest.mark.parametrize("eps", [0, 0.0, -1e-6, float("nan"), float("inf")])
def test_gradcheck_refuses_a_step_that_is_not_positive_and_finite(eps):
    with pytest.raises(ValueError, match=r"gradcheck: eps must be a positive finite step"):
        gradcheck(anp.sin, 0.5, eps=eps)
