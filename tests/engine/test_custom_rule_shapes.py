"""Ops a second foreign audit found wrong: clip with crossed bounds, full/full_like's fill value, and a traced
keyword argument to a primitive (which reached the plain forward still traced)."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, jvp
from autodiff.extend import defvjp, primitive

X = np.array([0.5, 1.5, 3.0, -1.0])


@pytest.mark.parametrize("lo, hi", [(2.0, 1.0), (1.0, 2.0), (3.0, -2.0)])  # lo == hi is a tie: a convention
def test_clip_gradient_in_every_argument_matches_torch(lo, hi):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    f = lambda x, a, b: anp.sum(weights * anp.clip(x, a, b))  # noqa: E731
    ours = grad(f, argnums=(0, 1, 2))(X, lo, hi)
    tx, ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (X, lo, hi))
    expected = torch.autograd.grad((torch.tensor(weights) * torch.clamp(tx, ta, tb)).sum(), (tx, ta, tb))
    for got, want in zip(ours, expected):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-14)


@pytest.mark.parametrize("lo, hi", [(2.0, 1.0), (0.0, 2.0)])
def test_clip_forward_and_reverse_agree_with_finite_differences(lo, hi):
    x = np.array([0.3, 1.2, 2.7, -0.8])
    f = lambda x, a, b: anp.sum(anp.sin(x) * anp.clip(x, a, b))  # noqa: E731
    assert gradcheck(f, x, lo, hi)
    g = grad(f, argnums=(1, 2))(x, lo, hi)
    assert jvp(f, (x, lo, hi), (np.zeros(4), 1.0, 0.0))[1] == pytest.approx(g[0], abs=1e-14)
    assert jvp(f, (x, lo, hi), (np.zeros(4), 0.0, 1.0))[1] == pytest.approx(g[1], abs=1e-14)


def test_clip_with_one_bound():
    x = np.array([0.3, 1.2, 2.7])
    assert gradcheck(lambda x, b: anp.sum(anp.clip(x, None, b) ** 2), x, 1.0)
    assert gradcheck(lambda x, a: anp.sum(anp.clip(x, a, None) ** 2), x, 1.0)


def test_full_like_and_full_are_differentiable_in_the_fill_value():
    like = np.zeros((2, 3), np.float32)
    assert grad(lambda c: anp.sum(anp.full_like(like, c) * 2.0))(1.5) == pytest.approx(12.0)
    assert gradcheck(lambda c: anp.sum(anp.sin(anp.full((2, 2), c))), 0.7, order=2)
    assert gradcheck(lambda c: anp.sum(anp.full_like(X, c, dtype=np.float64) * X), 0.3, order=2)
    assert jvp(lambda c: anp.full_like(X, c), (2.0,), (1.0,))[1].tolist() == [1.0] * 4
    assert anp.full_like(like, 2).dtype == np.float32 and anp.full((2,), 2.0).dtype == np.float64


def test_full_like_of_a_batched_array_under_vmap():
    out = autodiff.vmap(lambda c: anp.full_like(np.zeros(3), c))(np.arange(2.0))
    np.testing.assert_array_equal(out, [[0.0] * 3, [1.0] * 3])


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


def test_argnums_reads_numpy_ints_and_says_what_is_wrong_otherwise():
    f = lambda a, b: a * b  # noqa: E731
    assert grad(f, argnums=np.int64(1))(2.0, 3.0) == 2.0
    with pytest.raises(TypeError, match=r"argnums=1.0 holds 1.0, a float, not an argument number"):
        grad(f, argnums=1.0)(2.0, 3.0)
    with pytest.raises(ValueError, match=r"the call passed none \(keyword arguments are held"):
        grad(lambda a, b=1.0: a * b)(a=1.0, b=2.0)


@pytest.mark.parametrize("transform", [autodiff.jacobian, autodiff.jacfwd, autodiff.hessian])
def test_jacobians_and_hessian_hold_keyword_arguments_as_grad_does(transform):
    f = lambda x, y=1.0: anp.sum(anp.sin(x) * x) * y  # noqa: E731
    x = np.array([0.3, 1.1])
    got = transform(f)(x, y=3.0)
    expected = transform(lambda x: f(x, 3.0))(x)
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    assert not np.allclose(got, transform(f)(x))


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
