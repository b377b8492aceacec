"""trace lists every transform in one format: vmap's batched program (each op's batching rule and batch axes),
linearize's primal, linear and transposed programs, jvp, and compositions such as vmap(grad(f)) (issue 41)."""

import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.extend import BatchingWarning, defvjp, primitive
from tests.internals import batch_rules, rule_name, value_text

XS = np.arange(6.0).reshape(3, 2) / 4


def _rows(text, name):
    return [line.strip() for line in text.splitlines() if f"= {name}(" in line]


def test_vmap_alone_lists_each_ops_batching_rule_and_batch_axes():
    f = lambda x: anp.sum(anp.sin(x) * 2.0)  # noqa: E731
    t = autodiff.trace(f, XS, transform="vmap")
    text = str(t)
    assert text.splitlines()[0] == "batch 1 (level 1, 3 examples)"
    assert "in  %0 x float64[2]  batched float64[3,2]" in text  # one example's shape, then the batch's
    sin = _rows(text, "sin")[0]
    assert sin.endswith(f"batch axes (0) -> 0  (rule {rule_name(batch_rules[anp.sin])})")
    assert "batch axes (0, None) -> 0" in _rows(text, "multiply")[0]  # the constant 2.0 is not batched
    assert np.allclose(t.output, autodiff.vmap(f)(XS))
    assert text.splitlines()[-1] == "  out %3"


def test_vmap_values_and_a_primitive_without_a_rule_runs_the_loop():
    cube = primitive(lambda x: x ** 3, "cube_unbatched")
    defvjp(cube, lambda g, ans, x: g * 3.0 * x ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchingWarning)
        t = autodiff.trace(lambda x: cube(x), XS, transform="vmap", values=True)
    lines = str(t).splitlines()
    row = next(k for k, line in enumerate(lines) if "= cube_unbatched(" in line)
    assert lines[row].endswith("(rule loop over the examples)")
    assert lines[row + 1].strip() == f"value {value_text(XS ** 3)}"


def test_linearize_lists_primal_linear_and_transposed_programs():
    f = lambda x: anp.sum(anp.sin(x) * x)  # noqa: E731
    x, v = np.array([0.5, 1.0]), np.array([1.0, -2.0])
    lin = autodiff.trace(f, x, tangents=(v,), cotangent=2.0, transform="linearize", values=True)
    text = str(lin)
    titles = [line for line in text.splitlines() if not line.startswith(" ") and not line.startswith("tape")]
    assert [t.split(":")[0] for t in titles] == ["linearize", "linear program", "transposed"]
    assert np.allclose(lin.tangent, autodiff.jvp(f, (x,), (v,))[1])
    assert np.allclose(lin.gradients[0], 2.0 * autodiff.grad(f)(x))
    linear = text.split("linear program")[1].split("transposed")[0]
    assert "in  %0 dx float64[2]" in linear and "sin_backward(%0:float64[2], [0.5, 1.0])" in linear  # x is a constant
    out_row = linear.splitlines()[-1].split("%")[1]
    values = linear.splitlines()
    at = next(k for k, line in enumerate(values) if line.strip().startswith(f"%{out_row} = "))
    assert values[at + 1].strip() == f"value {value_text(lin.tangent)}"  # J v, no cotangent shown
    transposed = text.split("transposed")[1]
    assert "in  %0 ct float64[]" in transposed and _rows(transposed, "sin_backward")


def test_jvp_is_the_default_with_tangents_and_is_one_pushforward():
    t = autodiff.trace(anp.sin, 0.5, tangents=(1.0,))
    assert str(t).splitlines()[0] == "pushforward 1 (level 1)"
    assert t.tangent == autodiff.jvp(anp.sin, (0.5,), (1.0,))[1]


def test_vmap_of_grad_is_listed_level_by_level_and_can_be_differentiated_again():
    loss = lambda w, x: anp.sum(anp.tanh(x @ w))  # noqa: E731
    per_example = autodiff.vmap(autodiff.grad(loss), in_axes=(None, 0))
    w = np.ones((2, 2))
    t = autodiff.trace(per_example, w, XS, transform="call")
    text = str(t)
    assert "batch 1 (level 1, 3 examples)" in text and "tape 1 (level 2)" in text
    assert any(line.endswith("# pullback of tape 1 %2") for line in text.splitlines())  # grad's rule, batched
    assert np.allclose(t.output, per_example(w, XS))
    twice = autodiff.trace(per_example, w, XS)  # vjp of the composition: three levels
    assert "tape 1 (level 1)" in str(twice) and "batch 1 (level 2" in str(twice)
    assert "# batching rule of batch 1 %" in str(twice)
    expected = autodiff.grad(lambda w: anp.sum(per_example(w, XS)))(w)
    assert np.allclose(twice.gradients[0], expected)


def test_transform_choices_are_checked_with_the_fix():
    with pytest.raises(ValueError, match="transform must be one of"):
        autodiff.trace(anp.sin, 0.5, transform="pmap")
    with pytest.raises(TypeError, match="tangents= are pushed forward by transform='jvp' or 'linearize'"):
        autodiff.trace(anp.sin, np.ones(2), tangents=(np.ones(2),), transform="vmap")
    with pytest.raises(TypeError, match="needs tangents="):
        autodiff.trace(anp.sin, 0.5, transform="jvp")
    assert str(autodiff.trace(lambda x: x + 1.0, 0.5, transform="call")).startswith("(nothing traced")
