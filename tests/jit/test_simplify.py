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


def test_a_product_by_one_is_read_as_its_operand_and_keeps_every_bit():
    def f(a, s):
        t = a * 1.0
        return anp.sin(t) + np.float32(1.0) * anp.cos(a), anp.exp(1.0 * s) * (1.0 * t)

    for dtype in (np.float64, np.float32):
        a = np.array([-0.0, np.inf, np.nan, 2.5, -1e-300], dtype)
        s = np.array(0.5, dtype)  # a 0-d array is traced (a numpy scalar would be static)
        program = _lower(f, a, s)
        simplified = simplify(program)
        products = {e.out for e in program.equations if e.prim.__name__ == "multiply"
                    and any(isinstance(x, float | np.floating) and x == 1 for x in e.operands)}
        assert len(products) == 4
        read = {x.ref for e in simplified.equations for x in e.operands if type(x).__name__ == "Var"}
        assert not read & products  # every reader reads the operand instead
        with np.errstate(all="ignore"):
            for inputs in ([a, s], [a[::-1].copy(), s * 3]):
                _same_bits(replay(simplified, inputs), replay(program, inputs))


def test_a_product_by_one_stays_where_it_is_not_the_operand_bit_for_bit():
    def f(a, i, z, h):
        return (anp.sin(a * 1.0), anp.sin(1.0 * i), anp.sin(z * 1.0), anp.sin(h * np.float64(1.0)),
                anp.sin(a * np.ones(3)), anp.sin(a * 1), a * 1.0)

    a, i, z, h = np.ones(3), np.arange(3), np.ones(3) * 1j, np.ones(3, np.float32)
    # an int array's product is float, a complex one may flip a zero's sign, a float32 one by a float64 one is
    # float64; a product by an array of ones or by an int, and an output leaf stay
    program = _lowered(lambda *args: f(*args)[1:], [a, i, z, h], passes=("dce",))
    assert simplify(program).equations == program.equations
    kept = _lowered(f, [a, i, z, h], passes=("simplify", "dce"))
    assert _names(kept).count("multiply") == 6 and kept.outputs[-1].ref == kept.equations[-1].out  # sin(a * 1.0)'s goes


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


def test_the_seed_gradients_product_by_one_is_gone_and_grad_agrees():
    def loss(m):
        return anp.linalg.norm(m["x"]) + anp.sum(anp.tanh(m["y"]))

    m = {"x": np.array([3.0, 4.0]), "y": np.array([0.5, -1.0])}
    g = autodiff.grad(loss)
    plain, simplified = (autodiff.jit(g, passes=p).lower(m) for p in (("dce",), ("simplify", "dce")))
    ones = [e for e in plain.equations if e.prim.__name__ == "multiply" and 1.0 in e.operands[:1]]
    assert ones and len(simplified.equations) == len(plain.equations) - len(ones)
    inputs = [m["x"], m["y"]]
    _same_bits(replay(simplified, inputs), replay(plain, inputs))
    jg = autodiff.jit(g)
    for key in m:
        np.testing.assert_array_equal(jg(m)[key], g(m)[key])
    hess = autodiff.jit(autodiff.hessian(lambda x: loss({"x": x, "y": m["y"]})))
    np.testing.assert_allclose(hess(m["x"]), autodiff.hessian(lambda x: loss({"x": x, "y": m["y"]}))(m["x"]),
                               rtol=1e-12)


def test_mamls_meta_gradient_loses_its_negations_and_keeps_every_bit():
    task = maml_meta_step(None)
    model, meta_loss = task.problem["model"], task.problem["meta_loss"]
    step = autodiff.value_and_grad(meta_loss)
    program = autodiff.jit(step, passes=("dce",)).lower(model)
    simplified = autodiff.jit(step, passes=("simplify", "dce"))
    assert _names(program).count("negative") > 100 and _names(simplified.lower(model)).count("negative") == 0
    inputs = list({id(a): a for a in trainables(model)}.values())
    _same_bits(replay(simplified.lower(model), inputs), replay(program, inputs))
