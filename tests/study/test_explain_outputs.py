"""explain names each pullback's outputs, and says when the rule gave a symbolic zero (issue 41):
`explain(sign)` used to print `out ?` and `explain(abs, order=2)` an unlabelled `out`."""

import numpy as np

import autodiff
import autodiff.numpy as anp


def _out_lines(text):
    return [line.strip() for line in text.splitlines() if line.strip().startswith("out ")]


def test_sign_says_its_pullback_is_a_symbolic_zero():
    text = str(autodiff.explain(anp.sign, 0.5))
    outs = _out_lines(text)
    assert "?" not in text
    assert outs[1] == "out cotangent of x = symbolic zero (no derivative flows)"
    assert outs[2] == ("out cotangent of x = symbolic zero (no derivative flows), "
                       "cotangent of g = symbolic zero (no derivative flows)")
    assert autodiff.grad(anp.sign)(0.5) == 0.0  # what the words say, by our own grad


def test_abs_at_order_two_labels_both_cotangents():
    e = autodiff.explain(anp.abs, 0.0, order=2)
    out = _out_lines(str(e))[2]
    assert out.startswith("out cotangent of x = symbolic zero (no derivative flows), cotangent of g = %")
    row = out.rsplit("%", 1)[1]
    ours = e.trace.output  # (cotangent of x, cotangent of g) of the order-2 pullback, g = h = 1
    assert ours[0] == autodiff.grad(autodiff.grad(anp.abs))(0.0)  # abs's second derivative at its kink: 0
    line = next(x for x in str(e).splitlines() if x.strip().startswith(f"%{row} = "))
    assert "pullback of tape 2" in line and "# dead" not in line


def test_multi_argument_outputs_are_named_in_order():
    out = _out_lines(str(autodiff.explain(anp.matmul, np.ones((2, 3)), np.ones((3, 2)), order=1)))[1]
    assert out.startswith("out cotangent of x1 = %") and ", cotangent of x2 = %" in out
