"""Rule checks: the strip warning (the silent f'' = 0), defvjp(check=True) and its global switch, and
gradcheck's report of the order that failed and of the complex convention it measures with."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import GradcheckError, gradcheck
from autodiff.extend import RuleWarning, check_rules, defvjp, defvjp_joint, primitive, value_of

X = np.array([0.5, -1.2, 2.0])


def _rule_warnings(run):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run()
    return result, [w for w in caught if issubclass(w.category, RuleWarning)]


def _sin_with(rule, name):
    p = primitive(np.sin, name)
    defvjp(p, rule)
    return p


def test_a_rule_that_strips_its_argument_warns_naming_it_and_its_second_derivative_is_the_silent_zero():
    bad = _sin_with(lambda g, ans, x: g * np.cos(value_of(x)), "stripping_sin")
    hessian, caught = _rule_warnings(lambda: autodiff.hessian(lambda x: anp.sum(bad(x)))(X))
    assert np.allclose(hessian, 0.0) and not np.allclose(np.diag(-np.sin(X)), 0.0)  # the wrong answer it explains
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("stripping_sin: its pullback stripped tracing") and "f'' = 0" in message
    assert caught[0].filename == __file__  # it points at the rule's definition


@pytest.mark.parametrize("mode", ["forward_over_reverse", "reverse_over_forward"])
def test_stripping_ans_with_stop_gradient_warns_under_both_hvp_modes(mode):
    # reverse over forward pushes the VJP-only rule forward by linearising its pullback at a zero cotangent
    bad_exp = primitive(np.exp, f"stripping_exp_{mode}")
    defvjp(bad_exp, lambda g, ans, x: g * autodiff.stop_gradient(ans))
    _, caught = _rule_warnings(lambda: autodiff.hvp(lambda x: anp.sum(bad_exp(x)), X, np.ones(3), mode=mode))
    assert len(caught) == 1 and "from its output `ans`" in str(caught[0].message)


def test_a_joint_rule_that_strips_warns():
    times = primitive(np.multiply, "stripping_times")
    defvjp_joint(times, lambda g, ans, x, y: (g * value_of(y), g * value_of(x)))
    _, caught = _rule_warnings(lambda: autodiff.grad(autodiff.grad(lambda x: times(x, x)))(1.5))
    assert len(caught) == 1 and "stripping_times" in str(caught[0].message)


def test_a_correct_rule_and_strips_for_shapes_or_masks_do_not_warn():
    good = _sin_with(lambda g, ans, x: g * anp.cos(x), "correct_sin")
    relu = primitive(lambda x: np.maximum(x, 0.0), "masking_relu")
    defvjp(relu, lambda g, ans, x: g * (value_of(x) > 0))  # a mask: the cotangent does not move with x
    spread = primitive(lambda x: np.full(4, np.sum(x)), "spread")
    defvjp(spread, lambda g, ans, x: anp.broadcast_to(anp.sum(g), np.shape(value_of(x))))  # a shape
    cases = [
        (lambda: autodiff.hessian(lambda x: anp.sum(good(x)))(X), np.diag(-np.sin(X))),
        (lambda: autodiff.hessian(lambda x: anp.sum(relu(x) ** 2))(X), np.diag(2.0 * (X > 0))),
        (lambda: autodiff.hessian(lambda x: anp.sum(spread(x) ** 2))(X), np.full((3, 3), 8.0)),
    ]
    for run, expected in cases:
        result, caught = _rule_warnings(run)
        assert caught == [] and np.allclose(result, expected)
    assert gradcheck(lambda x: anp.sum(good(x)), X, order=2)  # the oracle agrees with the expected Hessians
    assert gradcheck(lambda x: anp.sum(spread(x) ** 2), X, order=2)


def test_a_strip_for_a_shape_of_a_value_the_rule_also_reads_differentiably_does_not_warn():
    """A convolution-like rule strips its weight for the weight's shape and multiplies by the traced weight:
    the cotangent moves with the weight, but the rule's own ops carry that, so nothing is lost."""
    scale = primitive(lambda x, w: x * w.sum(), "shape_stripping_scale")
    defvjp(scale,
           lambda g, ans, x, w: g * anp.sum(anp.reshape(w, np.shape(value_of(w)))),
           lambda g, ans, x, w: anp.broadcast_to(anp.sum(g * x), np.shape(value_of(w))))
    w = np.array([0.3, -0.8])
    f = lambda x, w: anp.sum(anp.sin(scale(x, w)))  # noqa: E731
    hessian, caught = _rule_warnings(lambda: autodiff.hessian(f, (0, 1))(X, w))
    assert caught == []
    assert gradcheck(f, X, w, order=2)


def test_convolution_under_a_retained_hvp_operator_does_not_warn():
    """layers' conv2d pullback reads its weight's shape through value_of (a false alarm before the check
    compared the rule's own derivative with central differences)."""
    from layers import Conv2d

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    f = lambda x, w: anp.sum(anp.sin(Conv2d(w, None, 1, 1)(x)))  # noqa: E731
    _, caught = _rule_warnings(lambda: autodiff.vjp(autodiff.grad(f, (0, 1)), x, w)[1]((x, w)))
    assert caught == []
    assert gradcheck(f, x, w, order=2)


def test_first_order_passes_of_user_rules_are_not_watched_and_autodiffs_own_rules_are_not_wrapped():
    bad = _sin_with(lambda g, ans, x: g * np.cos(value_of(x)), "first_order_only")
    grads, caught = _rule_warnings(lambda: autodiff.grad(lambda x: anp.sum(bad(x)))(X))
    assert caught == [] and np.allclose(grads, np.cos(X))  # at first order the strip is harmless
    from tests.internals import vjp_rules

    assert all(type(r).__module__ != check_rules.__module__ for r in vjp_rules[anp.sin])  # plain functions


def test_check_true_gradchecks_at_the_first_call_and_names_the_rule_and_the_order():
    wrong = primitive(np.sin, "wrong_sin_checked")
    defvjp(wrong, lambda g, ans, x: g * anp.sin(x), check=True)
    with pytest.raises(GradcheckError, match=r"wrong_sin_checked: its rule fails gradcheck .*\(order 1, eps"):
        autodiff.grad(lambda x: anp.sum(wrong(x)))(X)
    flat = primitive(np.sin, "flat_sin_checked")
    defvjp(flat, lambda g, ans, x: g * np.cos(value_of(x)), check=True)  # right at order 1, f'' = 0
    with pytest.raises(GradcheckError, match=r"flat_sin_checked: .*\(order 2: the VJP of the VJP"):
        with pytest.warns(RuleWarning, match="flat_sin_checked"):  # the strip is named at its source too
            autodiff.grad(lambda x: anp.sum(flat(x)))(X)


def test_check_true_runs_once_and_a_correct_rule_passes():
    calls = []
    good = primitive(np.sin, "counted_sin")
    defvjp(good, lambda g, ans, x: calls.append(1) or g * anp.cos(x), check=True)
    first = autodiff.grad(lambda x: anp.sum(good(x)))(X)
    checked = len(calls)
    second = autodiff.grad(lambda x: anp.sum(good(x)))(X)
    assert checked > 1 and len(calls) == checked + 1  # the first call ran gradcheck; the next one did not
    assert np.allclose(first, np.cos(X)) and np.allclose(second, first)


def test_the_global_switch_checks_rules_without_check_and_respects_check_false():
    previous = check_rules(True)
    try:
        wrong = _sin_with(lambda g, ans, x: g * anp.sin(x), "wrong_under_switch")
        with pytest.raises(GradcheckError, match="wrong_under_switch"):
            autodiff.grad(lambda x: anp.sum(wrong(x)))(X)
        exempt = primitive(np.sin, "exempt_sin")
        defvjp(exempt, lambda g, ans, x: g * anp.sin(x), check=False)
        assert np.allclose(autodiff.grad(lambda x: anp.sum(exempt(x)))(X), np.sin(X))
    finally:
        check_rules(previous)
    wrong_after = _sin_with(lambda g, ans, x: g * anp.sin(x), "wrong_after_switch")
    assert np.allclose(autodiff.grad(lambda x: anp.sum(wrong_after(x)))(X), np.sin(X))  # off again: unchecked


def test_the_environment_variable_switches_the_checks_on_for_a_session():
    program = (
        "import numpy as np, autodiff, autodiff.numpy as anp\n"
        "from autodiff.extend import primitive, defvjp\n"
        "p = primitive(np.sin, 'env_sin')\n"
        "defvjp(p, lambda g, ans, x: g * anp.sin(x))\n"
        "try:\n"
        "    autodiff.grad(p)(0.5)\n"
        "except autodiff.GradcheckError as e:\n"
        "    print('checked:', str(e).split(':')[0])\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, AUTODIFF_CHECK_RULES="1", PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, cwd=root)
    assert out.stdout.strip() == "checked: env_sin", out.stderr


def test_the_check_does_not_show_in_a_trace():
    good = primitive(np.sin, "traced_checked_sin")
    defvjp(good, lambda g, ans, x: g * anp.cos(x), check=True)
    t = autodiff.trace(lambda x: anp.sum(good(x)), X)
    assert len(t.tapes) == 1 and [e[0].__name__ for e in t.tapes[0].entries[1:]] == ["traced_checked_sin", "sum"]


def test_gradcheck_names_order_two_when_only_order_two_fails():
    flat = primitive(np.sin, "flat_sin_for_gradcheck")
    defvjp(flat, lambda g, ans, x: g * np.cos(value_of(x)))
    assert gradcheck(flat, 0.5)
    with pytest.raises(GradcheckError, match=r"\(order 2: the VJP of the VJP, eps"):
        with pytest.warns(RuleWarning):
            gradcheck(flat, 0.5, order=2)
    wrong = _sin_with(lambda g, ans, x: g * anp.sin(x), "wrong_for_gradcheck")
    with pytest.raises(GradcheckError, match=r"\(order 1, eps"):
        gradcheck(wrong, 0.5)


def test_gradcheck_measures_complex_rules_with_the_declared_convention():
    """docs/complex.md declares JAX's convention: a cotangent pairs with a tangent unconjugated, so a rule
    written with torch's conjugated convention must fail, for a holomorphic op and for abs alike."""
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    ours_sin = primitive(np.sin, "sin_jax_convention")
    defvjp(ours_sin, lambda g, ans, x: g * anp.cos(x))
    torchs_sin = primitive(np.sin, "sin_torch_convention")
    defvjp(torchs_sin, lambda g, ans, x: g * anp.conj(anp.cos(x)))
    ours_abs = primitive(np.abs, "abs_jax_convention")
    defvjp(ours_abs, lambda g, ans, x: g * anp.conj(x) / ans)
    torchs_abs = primitive(np.abs, "abs_torch_convention")
    defvjp(torchs_abs, lambda g, ans, x: g * x / ans)
    assert gradcheck(ours_sin, z) and gradcheck(lambda z: anp.sum(ours_abs(z)), z)
    for wrong in (torchs_sin, lambda z: anp.sum(torchs_abs(z))):
        with pytest.raises(GradcheckError, match="order 1"):
            gradcheck(wrong, z)
    assert gradcheck(lambda z: anp.sum(anp.abs(z)), z) and gradcheck(anp.sin, z)  # the built-in rules follow it
