"""Algebraic simplification (``autodiff._jit.passes.simplify``) against the plain replay of the same program.

Every op-table program (value, gradient, gradient of gradient; float32 value) and programs written to negate run
simplified and not on new inputs, and must give bitwise the same leaves.  Then what must not be absorbed: a
``negative`` read twice or returned, one of integers or complex numbers, a product by an int or an array; and the
transforms around a jitted function.  The pass is on in both modes, so these tests run the same in both.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from bench._so_maml import maml_meta_step
from tests.accel.test_jit_codegen import _lowered, _same_bits, op_table_programs
from tests.internals import replay, simplify
from tests.op_table import OPS
from traversal import trainables


def _names(program):
    return [e.prim.__name__ for e in program.equations]


def _lower(f, *args):
    return _lowered(f, list(args), passes=())


@pytest.mark.parametrize("op", OPS, ids=repr)
def test_every_op_table_program_runs_bitwise_as_the_unsimplified_one(op):
    for program, inputs in op_table_programs(op, passes=()):
        with np.errstate(all="ignore"):
            _same_bits(replay(simplify(program), inputs), replay(program, inputs))


def test_each_rule_absorbs_the_negative_and_keeps_every_bit():
    def f(a, b):
        return a + -b, -b + a, a - -b, -a * 0.5, 0.0 * -b, -a * np.float32(-2.0)

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    a[0], b[1] = -0.0, np.inf  # signed zero and infinity keep their bits too
    program = _lower(f, a, b)
    simplified = simplify(program)
    readers = [e for e in simplified.equations if e.prim.__name__ != "negative"]
    assert _names(program).count("negative") == 6
    assert [e.prim.__name__ for e in readers] == ["subtract", "subtract", "add", "multiply", "multiply", "multiply"]
    assert not any(type(x).__name__ == "Var" and x.ref in {e.out for e in simplified.equations
                                                           if e.prim.__name__ == "negative"}
                   for e in readers for x in e.operands)  # no reader reads a negation any more
    for draw in range(3):
        x, y = np.random.default_rng(draw + 1).standard_normal((2, 5))
        _same_bits(replay(simplified, [x, y]), replay(program, [x, y]))
    _same_bits(replay(simplified, [a, b]), replay(program, [a, b]))


def test_what_must_not_be_absorbed():
    def f(a, b, i):
        n = -b
        return n + a, n * a, -a * 2, -a * b, -i + i, -(a + 0j) * 2.0

    a, b, i = np.ones(3), np.full(3, 2.0), np.arange(3)
    program = _lower(f, a, b, i)
    # n is read twice; a product by an int (a signed zero's bit) or an array; integers; complex numbers
    assert _names(simplify(program)) == _names(program)


def test_jit_drops_the_absorbed_negatives_and_grad_and_vmap_agree():
    def f(x):
        return anp.sum(anp.tanh(x - -x * 0.5) * -x)  # -x * 0.5 is absorbed; a product by an array is not

    x = np.random.default_rng(3).standard_normal(4)
    jf = autodiff.jit(f)
    simplified = autodiff.jit(f, passes=("simplify", "dce")).lower(x)
    assert _names(_lower(f, x)).count("negative") == 2 and _names(simplified).count("negative") == 1
    np.testing.assert_allclose(jf(x), f(x), rtol=1e-12)
    for transform in (autodiff.grad, lambda h: autodiff.grad(lambda y: anp.sum(autodiff.grad(h)(y) ** 2))):
        np.testing.assert_allclose(transform(jf)(x), transform(f)(x), rtol=1e-12)
    np.testing.assert_allclose(autodiff.vmap(jf)(np.stack([x, 2 * x])), [f(x), f(2 * x)], rtol=1e-12)


def test_mamls_meta_gradient_loses_its_negations_and_keeps_every_bit():
    task = maml_meta_step(None)
    model, meta_loss = task.problem["model"], task.problem["meta_loss"]
    step = autodiff.value_and_grad(meta_loss)
    program = autodiff.jit(step, passes=("dce",)).lower(model)
    simplified = autodiff.jit(step, passes=("simplify", "dce"))
    assert _names(program).count("negative") > 100 and _names(simplified.lower(model)).count("negative") == 0
    inputs = list({id(a): a for a in trainables(model)}.values())
    _same_bits(replay(simplified.lower(model), inputs), replay(program, inputs))
