"""Rules shown as rules: rules=True lists each pullback as the ops it calls, the mask it builds from its inputs
included, where the ordinary listing shows that mask as a frozen constant (issue 41)."""

import numpy as np

import autodiff
import autodiff.numpy as anp
from tests.internals import value_text

TIED = np.array([1.0, 1.0, 0.0])  # max with a tie: the cotangent is shared between the two maxima


def _program(text, title):
    """The lines of the program whose heading contains ``title``."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if title in line and line.startswith("rule of"))
    end = next((k for k in range(start + 1, len(lines)) if not lines[k].startswith(" ")), len(lines))
    return [line.strip() for line in lines[start + 1:end]]


def _op(program, name):
    return next(line for line in program if f"= {name}(" in line)


def test_max_with_ties_shows_the_mask_ops_where_explain_shows_a_constant():
    frozen = str(autodiff.explain(anp.max, TIED, order=1))
    share = autodiff.grad(anp.max)(TIED)  # our own rule's cotangent: [0.5, 0.5, 0.0]
    assert f"multiply(%3:float64[3], {value_text(share)})" in frozen  # the mask as a constant
    program = _program(str(autodiff.explain(anp.max, TIED, order=1, rules=True)), "rule of max")
    ops = [line.split(" = ")[1].split("(")[0] for line in program if " = " in line]
    assert ops[:1] == ["broadcast_to"] and {"equal", "sum", "divide", "where"} <= set(ops)
    x_row, ans_row = (next(line.split()[1] for line in program if line.startswith("in") and f" {n} " in line)
                      for n in ("x", "ans"))
    assert _op(program, "equal").startswith(f"%4 = equal({x_row}, {ans_row})")  # x == max(x), read from inputs
    assert program[-1].startswith("out cotangent of x = %")


def test_the_programs_values_are_our_gradient_at_a_tie():
    t = autodiff.trace(lambda x: anp.max(x) * 2.0, TIED, rules=True)
    program = t.rule_programs()[-1]  # max's pullback ran last
    program.values = True
    lines = str(program).splitlines()
    out = lines[-1].split("= %")[1]
    at = next(k for k, line in enumerate(lines) if line.strip().startswith(f"%{out} = "))
    assert lines[at + 1].strip() == f"value {value_text([2.0 * autodiff.grad(anp.max)(TIED)])}"  # one example
    assert autodiff.gradcheck(lambda x: anp.max(x) * 2.0, np.array([1.0, 3.0, 0.0]))  # the rule off the tie


def test_maximum_and_clip_show_their_comparisons():
    t = autodiff.trace(lambda a, b: anp.sum(anp.maximum(a, b)), np.array([1.0, 2.0]), np.array([1.0, 0.0]),
                       rules=True)
    program = _program(str(t), "maximum")
    assert _op(program, "greater") and _op(program, "equal")
    assert program[-1].startswith("out cotangent of x1 (for %0) = %") and "cotangent of x2 (for %1) = %" in program[-1]
    clip = _program(str(autodiff.trace(lambda x: anp.sum(anp.clip(x, 0.0, 1.0)), np.array([0.0, 1.0, 0.5]),
                                       rules=True)), "clip")
    assert _op(clip, "less") and _op(clip, "greater")


def test_a_rule_with_no_mask_is_its_ops_and_a_tuple_output_is_batched_part_by_part():
    sin = _program(str(autodiff.trace(anp.sin, 0.5, rules=True)), "sin")
    assert sin[-2].startswith("%") and "sin_backward(" in sin[-2]
    eigh = _program(str(autodiff.trace(lambda x: anp.sum(anp.linalg.eigh(x)[0]), np.eye(2), rules=True)), "eigh")
    assert any(line.startswith("in  %0 g[0]") for line in eigh) and any(" ans[1] " in line for line in eigh)
