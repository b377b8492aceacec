"""Every documented misuse raises a clear error naming the problem and the fix."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, vjp


def test_non_scalar_output_suggests_jacobian_or_sum():
    with pytest.raises(TypeError, match=r"scalar.*shape \(3,\).*\.sum\(\).*jacobian"):
        grad(anp.sin)(np.ones(3))


def test_complex_output_is_refused():
    with pytest.raises(TypeError, match="complex"):
        grad(lambda x: x * 1j)(1.0)


@pytest.mark.parametrize("bad", [3, True, np.arange(3), np.array([True, False])])
def test_integer_or_bool_argument(bad):
    with pytest.raises(TypeError, match=r"argument 0 has dtype .*(int|bool).*float"):
        grad(lambda x: 1.0)(bad)


@pytest.mark.parametrize("argnums", [1, -1, (0, 2), 1.0])
def test_argnums_out_of_range(argnums):
    with pytest.raises(ValueError, match=r"argnums=.*out of range.*1 positional"):
        grad(lambda x: x, argnums=argnums)(1.0)


def test_has_aux_without_a_pair():
    with pytest.raises(TypeError, match=r"has_aux=True.*pair.*returned a float64"):
        grad(lambda x: x * 2.0 + 0.0, has_aux=True)(1.0)


def test_has_aux_returns_aux_unwrapped():
    g, aux = grad(lambda x: (x * x, {"x": x}), has_aux=True)(3.0)
    assert g == 6.0 and aux == {"x": 3.0}


@pytest.mark.parametrize(
    "ct, match",
    [
        (np.ones(2), r"shape \(2,\).*output has shape \(3,\)"),
        (np.ones(3, np.float32), r"dtype float32.*dtype float64"),
        (np.ones(3, int), r"dtype int64.*dtype float64"),
    ],
)
def test_pullback_checks_cotangent(ct, match):
    _, pullback = vjp(anp.sin, np.ones(3))
    with pytest.raises(ValueError, match=match):
        pullback(ct)


def test_pullback_checks_structure():
    _, pullback = vjp(lambda x: (x, x * 2), np.ones(3))
    with pytest.raises(ValueError, match="output has 2"):
        pullback(np.ones(3))


def test_object_engine_cannot_see_inside():
    class Opaque:
        def __init__(self):
            self.w = np.ones(2)

    with pytest.raises(TypeError, match=r"Opaque.*cannot see inside.*register_container"):
        grad(lambda o: anp.sum(o.w))(Opaque())
    with pytest.raises(TypeError, match=r"Opaque holding float arrays.*register_container"):
        grad(lambda m: anp.sum(m["o"].w))({"o": Opaque()})


def test_string_argument():
    with pytest.raises(TypeError, match=r"argument 0 is a str"):
        grad(lambda s: 1.0)("text")


def test_output_independent_of_input_is_zeros_not_error():
    g = grad(lambda x, y: anp.sum(y), argnums=0)(np.ones(3), np.ones(2))
    np.testing.assert_array_equal(g, np.zeros(3))


def test_float_of_traced_value_refuses_to_detach():
    with pytest.raises(TypeError, match="detach"):
        grad(lambda x: float(x) * 2.0)(1.0)


def test_gradcheck_names_the_worst_leaf():
    from autodiff.extend import defvjp, primitive

    wrong = primitive(np.sin, "wrong_sin")
    defvjp(wrong, lambda g, ans, x: g * anp.sin(x))
    model = {"good": np.array([0.3, 0.4]), "bad": np.array([0.5, 0.9])}
    with pytest.raises(autodiff.GradcheckError, match=r"\['bad'\].*vjp gives .*finite differences give"):
        autodiff.gradcheck(lambda m: anp.sum(anp.sin(m["good"])) + anp.sum(wrong(m["bad"])), model)


def test_missing_rule_names_the_primitive():
    from autodiff.extend import primitive

    norule = primitive(np.cos, "norule_cos")
    with pytest.raises(NotImplementedError, match="norule_cos has no registered pullback"):
        grad(lambda x: norule(x))(1.0)


def test_plain_numpy_is_routed_or_refused():
    np.testing.assert_allclose(grad(lambda x: np.sum(np.sin(x)))(np.zeros(2)), np.cos(np.zeros(2)))
    with pytest.raises(TypeError, match=r"numpy\.unwrap was called on a traced value.*defvjp"):
        grad(lambda x: np.unwrap(x).sum())(np.zeros(2))
    with pytest.raises(TypeError, match=r"np\.asarray.*detach.*stop_gradient"):
        grad(lambda x: np.asarray(x).sum())(np.zeros(2))
