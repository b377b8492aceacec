"""A custom JVP rule's tangent is checked for shape and dtype, as custom pullbacks are (issue 36 item 10).

A (1,) tangent for a (3,) output broadcast through the ops after it: ``jvp`` of the sum came out a third of the
truth, with no error.  Every rule registered from outside autodiff (``defjvp``, ``defjvp_joint``, ``deflinear``)
is now checked at each call against its output's exact shape and dtype, tuple outputs part by part, and a wrong
one is refused naming the primitive.  Oracles: central finite differences of the forward, and the same
primitive with a correct rule.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import jacfwd, jvp, vmap
from autodiff.extend import (
    ZeroTangent,
    batch_through,
    defbatch,
    defjvp,
    defjvp_joint,
    deflinear,
    defvjp,
    primitive,
)

X = np.array([0.3, -0.7, 1.1])
V = np.array([1.0, 2.0, -0.5])


def _fd(f, x, v, h=1e-6):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def _twice(name, jvp_rule):
    prim = primitive(lambda x: 2.0 * x, name)
    defjvp(prim, jvp_rule)
    return prim


def test_a_tangent_smaller_than_the_output_is_refused_naming_the_primitive():
    """The issue's case: (1,) for (3,) broadcasts harmlessly at the next product and sums to a wrong number."""
    wrong = _twice("twice_summed_jvp", lambda t, ans, x: anp.sum(2.0 * t, keepdims=True))
    with pytest.raises(ValueError, match=r"^twice_summed_jvp: its JVP returned a tangent of shape \(1,\), but the "
                                         r"output has shape \(3,\); a JVP must return a tangent of its output's "
                                         r"exact shape and dtype"):
        jvp(lambda x: anp.sum(wrong(x)), X, V)
    right = _twice("twice_right", lambda t, ans, x: 2.0 * t)
    got = jvp(lambda x: anp.sum(right(x)), X, V)[1]
    assert got == pytest.approx(_fd(lambda x: np.sum(2.0 * x), X, V), rel=1e-9)


def test_a_tangent_that_broadcasting_would_widen_is_still_refused():
    wrong = _twice("twice_column_jvp", lambda t, ans, x: anp.reshape(2.0 * t, (-1, 1)))
    with pytest.raises(ValueError, match=r"twice_column_jvp: its JVP returned a tangent of shape \(3, 1\)"):
        jvp(lambda x: anp.sum(wrong(x) * X), X, V)


@pytest.mark.parametrize("make, dtype, message", [
    (lambda t: t * (1.0 + 0.0j), np.float64, r"complex128, but the output has dtype float64"),
    (lambda t: anp.astype(t, np.float64), np.float32, r"float64, but the output has dtype float32.*cast with \.astype"),
])
def test_a_tangent_of_another_dtype_is_refused(make, dtype, message):
    prim = primitive(lambda x: 2.0 * x, f"twice_{np.dtype(dtype).name}")
    defjvp(prim, lambda t, ans, x: make(2.0 * t))
    x = X.astype(dtype)
    with pytest.raises(ValueError, match=rf"twice_{np.dtype(dtype).name}: its JVP returned a tangent of dtype "
                                         rf"{message}"):
        jvp(lambda x: anp.sum(prim(x)), x, V.astype(dtype))


def test_a_tangent_for_an_integer_output_is_refused():
    rounded = primitive(lambda x: np.round(x).astype(np.int64), "rounded_to_int")
    defjvp(rounded, lambda t, ans, x: t)
    with pytest.raises(ValueError, match=r"rounded_to_int: its JVP returned a tangent of dtype float64, but the "
                                         r"output has dtype int64, which carries no tangent; return "
                                         r"autodiff\.extend\.ZeroTangent\(\)"):
        jvp(lambda x: rounded(x) * x, X, V)
    quiet = primitive(lambda x: np.round(x).astype(np.int64), "rounded_quietly")
    defjvp(quiet, lambda t, ans, x: ZeroTangent())
    np.testing.assert_allclose(jvp(lambda x: quiet(x) * x, X, V)[1], np.round(X) * V)


def test_defjvp_joint_is_checked():
    join = primitive(lambda a, b: np.concatenate([a, b]), "join_checked")
    defjvp_joint(join, lambda ts, ans, a, b: ts[0] if type(ts[1]) is ZeroTangent else ts[1])  # forgets the other
    with pytest.raises(ValueError, match=r"join_checked: its JVP returned a tangent of shape \(3,\), but the output "
                                         r"has shape \(5,\)"):
        jvp(lambda a: join(a, np.ones(2)), X, V)


def test_deflinear_on_an_op_that_is_not_linear_is_caught_by_its_shape():
    """deflinear pushes the tangent through the op itself; for a selection by value (not linear) the tangent's
    selection has another shape, which used to flow on."""
    positives = primitive(lambda x: x[x > 0], "positives")
    deflinear(positives)
    with pytest.raises(ValueError, match=r"positives: its JVP returned a tangent of shape \(3,\).*output has shape "
                                         r"\(2,\)"):
        jvp(lambda x: anp.sum(positives(x)), X, np.ones(3))
    scale = primitive(lambda x, c: x * c, "scale_linear")
    deflinear(scale)
    got = jvp(lambda x, c: anp.sum(scale(x, c)), (X, 3.0), (V, 0.5))[1]
    assert got == pytest.approx(_fd(lambda p: np.sum(p[:3] * p[3]), np.append(X, 3.0), np.append(V, 0.5)), rel=1e-9)


def _pair(name, jvp_rule):
    prim = primitive(lambda x: (np.sin(x), np.sum(x)), name)
    defjvp(prim, jvp_rule)
    return prim


def test_a_tuple_output_is_checked_part_by_part():
    wrong = _pair("pair_wrong_part", lambda t, ans, x: (anp.cos(x) * t, t))
    with pytest.raises(ValueError, match=r"pair_wrong_part: its JVP returned a tangent for output part 1 of shape "
                                         r"\(3,\), but the output has shape \(\)"):
        jvp(lambda x: wrong(x)[1], X, V)
    not_a_tuple = _pair("pair_one_tangent", lambda t, ans, x: anp.cos(x) * t)
    with pytest.raises(ValueError, match=r"pair_one_tangent: its JVP returned an array of shape \(3,\) for an output "
                                         r"of 2 parts; a JVP of a primitive with several outputs returns a tuple"):
        jvp(lambda x: not_a_tuple(x)[0], X, V)
    right = _pair("pair_right", lambda t, ans, x: (anp.cos(x) * t, anp.sum(t)))
    got = jvp(lambda x: anp.sum(right(x)[0]) + right(x)[1], X, V)[1]
    assert got == pytest.approx(_fd(lambda x: np.sum(np.sin(x)) + np.sum(x), X, V), rel=1e-9)
    quiet = _pair("pair_zero_part", lambda t, ans, x: (anp.cos(x) * t, ZeroTangent()))
    np.testing.assert_allclose(jvp(lambda x: quiet(x)[0], X, V)[1], np.cos(X) * V, rtol=1e-15)


def test_a_python_zero_for_an_argument_that_does_not_move_the_output_is_a_symbolic_zero():
    """"0.0: no derivative through this argument" is taken (as the pullback check takes it), and the tangent the
    caller gets back has the output's shape: it used to be the bare 0.0, and jacfwd failed reshaping it."""
    ignore_y = primitive(lambda x, y: 2.0 * x + 0.0 * y, "ignores_y")
    defjvp(ignore_y, lambda t, ans, x, y: 2.0 * t, lambda t, ans, x, y: 0.0)
    tangent = jvp(lambda y: ignore_y(X, y), V, np.ones(3))[1]
    assert type(tangent) is np.ndarray and tangent.shape == (3,)
    np.testing.assert_array_equal(tangent, np.zeros(3))
    np.testing.assert_array_equal(jacfwd(lambda y: ignore_y(X, y))(V), np.zeros((3, 3)))


def test_a_python_scalar_tangent_fits_a_zero_d_output():
    half_sum = primitive(lambda x: np.float32(np.sum(x) / 2), "half_sum_f32")
    defjvp(half_sum, lambda t, ans, x: float(np.sum(autodiff.extend.plain_value(t))) / 2)  # a Python float
    x = X.astype(np.float32)
    assert jvp(half_sum, x, np.ones(3, np.float32))[1] == pytest.approx(1.5)


def _softplus():
    prim = primitive(lambda x: anp.log1p(anp.exp(x)), "softplus_checked")
    defjvp(prim, lambda t, ans, x: t * (1.0 / (1.0 + anp.exp(-x))))
    defvjp(prim, lambda g, ans, x: g * (1.0 / (1.0 + anp.exp(-x))))
    defbatch(prim, batch_through(prim.fun))  # batched examples reach the JVP rule as one batched value
    return prim


def test_a_right_rule_passes_the_check_under_vmap_nesting_and_jacfwd():
    """No false refusal where the tangent is batched (vmap, jacfwd's columns) or traced at an outer level."""
    softplus = _softplus()
    exact = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731
    np.testing.assert_allclose(jacfwd(softplus)(X), np.diag(exact(X)), rtol=1e-12)
    xs = np.stack([X, 2 * X])
    got = vmap(lambda x: jvp(softplus, x, V)[1])(xs)
    np.testing.assert_allclose(got, exact(xs) * V, rtol=1e-12)
    second = jvp(lambda x: jvp(softplus, x, V)[1], X, V)[1]  # forward over forward
    np.testing.assert_allclose(second, _fd(lambda x: exact(x) * V, X, V), rtol=1e-6)
    hess = autodiff.hessian(lambda x: anp.sum(softplus(x)))(X)  # forward over reverse
    np.testing.assert_allclose(np.diag(hess), _fd(exact, X, np.ones(3)), rtol=1e-6)


def test_a_wrong_rule_is_refused_under_vmap_too():
    wrong = _twice("twice_summed_under_vmap", lambda t, ans, x: anp.sum(2.0 * t, keepdims=True))
    with pytest.raises(ValueError, match=r"twice_summed_under_vmap: its JVP returned a tangent of shape \(1,\)"):
        jacfwd(lambda x: wrong(x))(X)
