"""A rule writer's rules are checked where they run: a traced keyword argument to a primitive is refused by name
(it reached the plain forward still traced), and a pullback, a JVP or a batching rule that returns the wrong shape
is refused at the rule, naming it, instead of being broadcast into a wrong number downstream."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, jvp
from autodiff.extend import defvjp, primitive


def test_a_traced_keyword_argument_to_a_primitive_is_refused_by_name():
    p = primitive(lambda x, c=2.0: c * x ** 2, name="scaled_square")
    defvjp(p, lambda g, ans, x, c=2.0: g * 2 * c * x)
    assert grad(lambda x: p(x, c=3.0))(1.5) == pytest.approx(9.0)  # a constant keyword is fine
    for call in (lambda: jvp(lambda x, c: p(x, c=c), (1.5, 3.0), (1.0, 1.0)),
                 lambda: grad(lambda x, c: p(x, c=c), argnums=(0, 1))(1.5, 3.0),
                 lambda: grad(lambda c: p(1.5, c=c))(3.0)):
        with pytest.raises(TypeError, match=r"scaled_square: the keyword argument c= is a value being differentiated"):
            call()


def test_a_pullback_of_the_wrong_shape_is_refused_not_broadcast():
    twice = primitive(lambda x: 2.0 * x, name="twice_wrong_rule")
    defvjp(twice, lambda g, ans, x: anp.reshape(2.0 * g, (-1, 1)))  # (3, 1) for a (3,) argument
    x, w = np.array([0.3, -0.7, 1.1]), np.arange(1.0, 4.0)
    message = r"twice_wrong_rule: its pullback for argument 0 returned a cotangent of shape \(3, 1\), but the " \
              r"argument has shape \(3,\)"
    with pytest.raises(ValueError, match=message):
        grad(lambda x: anp.sum(twice(x) * w) + anp.sum(x))(x)
    with pytest.raises(ValueError, match=message):
        grad(lambda p: anp.sum(twice(p["x"])))({"x": x})


def test_a_wrong_shape_in_the_middle_of_the_tape_is_refused_at_the_rule():
    """Below a user rule, a matmul's or a sum's pullback folded its (3, 1) cotangent back to (3,) and the input
    check saw nothing: the rule itself is refused, naming it, wherever it sits."""
    twice = primitive(lambda x: 2.0 * x, name="twice_mid_tape")
    defvjp(twice, lambda g, ans, x: anp.reshape(2.0 * g, (-1, 1)))
    a, w = np.arange(9.0).reshape(3, 3), np.array([1.0, 2.0, 3.0])
    for f, x in [(lambda x: anp.sum(twice(a @ x) * w), np.ones(3)),
                 (lambda x: anp.sum(twice(anp.sum(x, axis=0)) * w), np.ones((2, 3)))]:
        with pytest.raises(ValueError, match=r"twice_mid_tape: its pullback for argument 0 .* shape \(3, 1\)"):
            grad(f)(x)


def test_the_rule_shape_check_reads_one_example_under_vmap_and_checks_joint_rules():
    from autodiff.extend import defbatch, defvjp_joint

    scale = primitive(lambda x, c: x * c, name="scale_right")
    defvjp(scale, lambda g, ans, x, c: g * c, lambda g, ans, x, c: anp.sum(g * x))
    defbatch(scale, lambda level, args, bdims, kwargs: (scale(*args), 0))  # x batched, c shared: x * c
    xs = np.arange(6.0).reshape(2, 3)
    per = autodiff.vmap(grad(lambda x, c: anp.sum(scale(x, c) ** 2), argnums=(0, 1)), in_axes=(0, None))(xs, 1.5)
    np.testing.assert_allclose(per[0], 2 * 1.5 ** 2 * xs)
    np.testing.assert_allclose(per[1], [2 * 1.5 * np.sum(x * x) for x in xs])
    joint = primitive(lambda x, y: x * y, name="joint_wrong_rule")
    defvjp_joint(joint, lambda g, ans, x, y: (g * y, anp.reshape(g * x, (1, -1))))
    with pytest.raises(ValueError, match=r"joint_wrong_rule: its pullback for argument 1 returned .* \(1, 3\)"):
        grad(lambda y: anp.sum(joint(np.ones(3), y)))(np.ones(3))


@pytest.mark.parametrize("rule, error", [
    (lambda level, args, bdims, kwargs: (args[0][:2] * 2.0, 0), r"2 entries along the batch axis, but the vmap"),
    (lambda level, args, bdims, kwargs: (np.transpose(args[0] * 2.0), 0), r"returned 2 entries along the batch axis"),
    (lambda level, args, bdims, kwargs: args[0] * 2.0, r"returned a ndarray, not the pair \(out, batch axis\)"),
])
def test_a_batching_rule_that_loses_the_batch_is_refused(rule, error):
    from autodiff.extend import defbatch

    double = primitive(lambda x: 2.0 * x, name="double_wrong_batch")
    defbatch(double, rule)
    with pytest.raises((ValueError, TypeError), match=error):
        autodiff.vmap(double)(np.arange(6.0).reshape(3, 2))


def test_a_correct_batching_rule_under_nested_vmap_passes_the_check():
    from autodiff.extend import defbatch

    double = primitive(lambda x: 2.0 * x, name="double_batched")
    defbatch(double, lambda level, args, bdims, kwargs: (double(args[0]), bdims[0]))
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(autodiff.vmap(autodiff.vmap(double))(x), 2.0 * x)
    np.testing.assert_array_equal(autodiff.vmap(double, in_axes=1)(x), 2.0 * np.moveaxis(x, 1, 0))


def test_the_loop_fallback_over_an_empty_batch_gives_what_a_loop_would_stack():
    """A batch of 0 works wherever a batch of 1 does (issue 36 item 12), the loop fallback included: the
    shape and dtype one example's call gives, stacked zero times."""
    square = primitive(lambda x: x * x, name="square_without_batch_rule")
    defvjp(square, lambda g, ans, x: 2.0 * g * x)
    assert autodiff.vmap(anp.sin)(np.zeros((0, 3))).shape == (0, 3)
    with pytest.warns(UserWarning, match=r"square_without_batch_rule has no batching rule"):
        out = autodiff.vmap(square)(np.zeros((0, 3), np.float32))
    one = autodiff.vmap(square)(np.zeros((1, 3), np.float32))
    assert out.shape == (0,) + one.shape[1:] and out.dtype == one.dtype


def test_a_custom_jvp_of_the_wrong_shape_is_refused_at_the_rule():
    """The pushforward's twin: a (3, 1) tangent for a (3,) output broadcast against the next op's (3,) into a
    (3, 3) and summed into a wrong number, without a word."""
    from autodiff.extend import defjvp

    twice = primitive(lambda x: 2.0 * x, name="twice_wrong_jvp")
    defjvp(twice, lambda t, ans, x: anp.reshape(2.0 * t, (-1, 1)))
    x, w = np.array([0.3, -0.7, 1.1]), np.arange(1.0, 4.0)
    with pytest.raises(ValueError, match=r"twice_wrong_jvp: its JVP returned a tangent of shape \(3, 1\), but "
                                         r"the output has shape \(3,\)"):
        jvp(lambda x: anp.sum(twice(x) * w), x, np.ones(3))
    right = primitive(lambda x: 2.0 * x, name="twice_right_jvp")
    defjvp(right, lambda t, ans, x: 2.0 * t)
    assert jvp(lambda x: anp.sum(right(x) * w), x, np.ones(3))[1] == pytest.approx(2.0 * w.sum())


def test_a_scalar_zero_for_an_argument_that_does_not_move_the_output_is_taken_by_both_rule_checks():
    """``0.0`` for "no derivative through this argument" broadcasts harmlessly, in a pullback mid-tape as in a
    JVP, so the shape checks take it (they refuse only shapes that broadcasting would widen)."""
    from autodiff.extend import defjvp

    ignore_y = primitive(lambda x, y: 2.0 * x + 0.0 * y, name="ignores_its_second_argument")
    defvjp(ignore_y, lambda g, ans, x, y: 2.0 * g, lambda g, ans, x, y: 0.0)
    defjvp(ignore_y, lambda t, ans, x, y: 2.0 * t, lambda t, ans, x, y: 0.0)
    x, y = np.array([0.3, -0.7, 1.1]), np.array([0.5, 0.2, -0.4])
    f = lambda x, y: anp.sum(ignore_y(x, anp.sin(y)) * np.arange(1.0, 4.0))  # noqa: E731
    np.testing.assert_array_equal(grad(f, argnums=1)(x, y), np.zeros(3))
    assert gradcheck(lambda y: f(x, y), y)
    assert jvp(lambda y: f(x, y), y, np.ones(3))[1] == 0.0
