"""Every documented misuse raises a clear error naming the problem and the fix."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import DetachError, grad, vjp


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


@pytest.mark.parametrize("argnums", [1, -2, (0, 2)])  # -1 is the last argument (issue 37): -2 is out of range
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
    with pytest.raises(TypeError, match=r"numpy\.nanmedian was called on a traced value.*defvjp"):
        grad(lambda x: np.nanmedian(x).sum())(np.zeros(2))  # np.unwrap was here until it had rules
    with pytest.raises(TypeError, match=r"np\.asarray.*detach.*stop_gradient"):
        grad(lambda x: np.asarray(x).sum())(np.zeros(2))


def _refusal(f):
    """The error ``grad(f)`` raises, and the error it was raised from (numpy wraps some of ours)."""
    with pytest.raises(Exception) as info:
        grad(f)(np.array([1.0, 2.0]))
    return info.value, info.value.__cause__


@pytest.mark.parametrize("method", ["item", "tolist"])
def test_item_and_tolist_refuse_to_detach(method):
    err, _ = _refusal(lambda x: anp.sum(x) + getattr(anp.sum(x), method)())
    assert isinstance(err, TypeError)
    assert f"x.{method}()" in str(err) and f"stop_gradient(x).{method}()" in str(err)


@pytest.mark.parametrize("write", [
    lambda x: x.__setitem__(0, 5.0),
    lambda x: x.__setitem__(slice(0, 1), x[1:]),
])
def test_item_assignment_to_a_traced_value_says_how_to_build_a_new_array(write):
    def f(x):
        write(x)
        return anp.sum(x)

    err, _ = _refusal(f)
    assert isinstance(err, TypeError)
    assert "cannot be changed in place" in str(err) and "anp.where" in str(err) and "anp.concatenate" in str(err)


def test_in_place_update_of_a_plain_array_with_a_traced_value():
    def f(x):
        a = np.zeros(2)
        a += x
        return anp.sum(x)

    err, _ = _refusal(f)
    assert isinstance(err, TypeError) and "in place" in str(err) and "a = a + x" in str(err)


def test_storing_a_traced_value_into_a_plain_array():
    def f(x):
        a = np.zeros(2)
        a[0] = x[0]
        return anp.sum(x)

    err, _ = _refusal(f)  # our DetachError, not numpy's ValueError raised from it (issue 36 item 13)
    assert isinstance(err, DetachError) and "a[i] = x" in str(err) and "anp.stack" in str(err)
    err, _ = _refusal(lambda x: anp.sum(np.array([x[0], x[1]])))
    assert "np.array" in str(err) and "anp.stack" in str(err) and "stop_gradient" in str(err)


def test_in_place_operator_on_a_traced_value_rebinds_as_in_jax():
    def f(x):
        y = x
        x += 1.0  # a new traced value; y keeps the old one
        return anp.sum(x * y)

    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(grad(f)(x), 2 * x + 1)


def test_total_with_grads_checks_each_gradient_against_its_parameter():
    from traversal import total

    with pytest.raises(ValueError, match=r"grads at a has shape \(7,\).*parameter there has shape \(2,\)"):
        total(autodiff.sumsq, {"a": np.ones(2)}, {"a": np.ones(7)})
    with pytest.raises(ValueError, match=r"grads at a has shape \(7,\)"):
        total(lambda x, dx: anp.sum(x * dx), {"a": np.ones(2)}, {"a": np.ones(7)})
    with pytest.raises(TypeError, match=r"grads has a dict at a, where the model has an array of shape \(2,\)"):
        total(lambda x, dx: anp.sum(x * dx), {"a": np.ones(2)}, {"a": {"b": np.ones(2)}})


def test_pullback_checks_the_cotangents_key_paths():
    out, pullback = vjp(lambda x: {"a": x * 2, "b": x * 3}, np.ones(2))
    with pytest.raises(ValueError, match=r"cotangent has a leaf at output\['b'\] where the output has one at "
                                         r"output\['a'\]"):
        pullback({"b": np.ones(2), "a": np.zeros(2)})  # same leaves and shapes, in another order


def test_gradcheck_never_passes_a_nan_derivative():
    """A NaN compares false with every tolerance, so it used to pass; outside log's domain it must fail."""
    import autodiff
    import autodiff.numpy as anp

    with pytest.raises(autodiff.GradcheckError, match="nan"):
        autodiff.gradcheck(anp.log, np.array([-1.0, 2.0]))
    assert autodiff.gradcheck(anp.log, np.array([1.0, 2.0]))
