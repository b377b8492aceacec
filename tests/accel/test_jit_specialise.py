"""jit's shape specialisation (``autodiff._accel.specialise``) against the unspecialised program.

A ``sum_to_shape`` made one reduction with fixed axes is numpy's same reduction, so its bits are the plain
primitive's; a matrix product made ``np.dot`` may differ in the last place (numpy may pick another BLAS routine),
so it is held to jit's 1e-12 (float64) and 1e-6 (float32). Every program of the op table, an MLP's gradient and
MAML-like second-order programs are checked so; then which shapes get a form and which do not, and that an outer
transform's values go through the primitives. The pass runs in both modes as a function; ``jit`` uses it only
when accelerations are on.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff._accel.specialise import Specialised, specialise_shapes
from autodiff._hooks import enabled
from autodiff._jit.passes import PASSES
from autodiff._jit.passes.codegen import callsite
from autodiff._jit.replay import replay
from autodiff.numpy._broadcast import _sum_to_shape, sum_to_shape
from autodiff.numpy._linalg import matmul_nt, matmul_tn
from tests.accel.test_jit_codegen import _lowered, _same_bits, op_table_programs
from tests.op_table import OPS


def _specialised(program):
    return [eq for eq in program.equations if type(eq.prim) is Specialised]


def _close(got, want):
    """Leaves of one type, shape and dtype, within 1e-12 (float64) or 1e-6 (float32) relative."""
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert type(a) is type(b) and np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
        rtol = 1e-6 if np.result_type(b) in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * float(np.max(np.abs(b), initial=0.0)))


def _agrees(program, inputs):
    """The specialised program's leaves against the plain program's, by the interpreter and the call-site form."""
    want = replay(program, inputs)
    specialised = specialise_shapes(program)
    _close(replay(specialised, inputs), want)
    _close(callsite(specialised).run(inputs), want)
    return specialised


@pytest.mark.parametrize("op", OPS, ids=repr)
def test_every_op_table_program_specialised_agrees_with_the_plain_one(op):
    with np.errstate(all="ignore"):
        for program, inputs in op_table_programs(op):
            _agrees(program, inputs)


@pytest.mark.parametrize("g_shape, shape, axes", [
    ((10, 40), (40,), (0,)),  # a bias's gradient
    ((10, 1), (1,), (0,)),
    ((10, 40), (1, 40), (0,)),  # kept as 1: keepdims
    ((3, 4, 5), (5,), (0, 1)),
    ((3, 4, 5), (3, 1, 5), (1,)),
    ((3, 4, 5), (1, 1, 1), (0, 1, 2)),
    ((6,), (), (0,)),
])
def test_a_sum_to_shape_one_reduction_can_make_is_specialised_and_bitwise(g_shape, shape, axes):
    g = np.random.default_rng(1).standard_normal(g_shape)
    program = _lowered(lambda g: sum_to_shape(g * 1.5, shape), [g])
    specialised = specialise_shapes(program)
    [eq] = _specialised(specialised)
    assert eq.prim.__name__ == f"sum_to_shape[axes {','.join(map(str, axes))}]"
    got = callsite(specialised).run([g])
    _same_bits(got, [_sum_to_shape(g * 1.5, shape)])
    _same_bits(got, replay(program, [g]))


@pytest.mark.parametrize("g_shape, shape", [
    ((4, 1), (4, 1)),  # nothing summed: a reshape
    ((4, 3), (4, 3)),
    ((2, 4, 5), (1, 5)),  # a leading axis summed away and an inner one kept: two changes
])
def test_a_sum_to_shape_one_reduction_cannot_make_stays_as_it_is(g_shape, shape):
    g = np.ones(g_shape)
    program = _lowered(lambda g: sum_to_shape(g * 1.5, shape), [g])
    assert _specialised(specialise_shapes(program)) == []


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("prim, a_shape, b_shape, reference", [
    (anp.matmul, (10, 40), (40, 30), lambda a, b: a @ b),
    (matmul_nt, (10, 40), (30, 40), lambda a, b: a @ b.T),
    (matmul_tn, (40, 10), (40, 30), lambda a, b: a.T @ b),
    (anp.matmul, (10, 40), (40, 1), lambda a, b: a @ b),  # a dimension of 1: numpy may pick gemv
    (matmul_nt, (1, 40), (30, 40), lambda a, b: a @ b.T),
    (matmul_nt, (10, 40), (40, 40), lambda a, b: a @ b.T),  # square: a missing transpose still runs
    (matmul_tn, (40, 40), (40, 10), lambda a, b: a.T @ b),
])
def test_a_product_of_two_float_matrices_is_a_dot(dtype, prim, a_shape, b_shape, reference):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    program = _lowered(lambda a, b: prim(a, b), [a, b])
    specialised = _agrees(program, [a, b])
    [eq] = _specialised(specialised)
    assert eq.prim.__name__.endswith("[dot]")
    _close(callsite(specialised).run([a, b]), [reference(a, b)])


def test_a_constant_matrix_operand_is_read_by_its_own_shape():
    rng = np.random.default_rng(3)
    w, x = rng.standard_normal((5, 4)), rng.standard_normal((3, 4))
    program = _lowered(lambda x: matmul_nt(x, w) + 1.0, [x])  # w is captured: a constant of the program
    specialised = _agrees(program, [x])
    assert len(_specialised(specialised)) == 1


@pytest.mark.parametrize("a, b", [
    (np.ones((2, 3, 4)), np.ones((2, 4, 5))),  # a stack of matrices: numpy's matmul loop, not dot's
    (np.ones(4), np.ones((4, 5))),  # a vector
    (np.ones((3, 4), np.int64), np.ones((4, 5), np.int64)),  # integers: no BLAS
    (np.ones((3, 4), np.float32), np.ones((4, 5))),  # two dtypes
    (np.ones((3, 4), np.complex128), np.ones((4, 5), np.complex128)),
])
def test_other_products_stay_as_they_are(a, b):
    program = _lowered(lambda a, b: anp.matmul(a, b), [a, b])
    assert _specialised(specialise_shapes(program)) == []


def _mlp_loss(w1, b1, w2, x):
    return anp.sum((anp.tanh(x @ w1 + b1) @ w2 - 1.0) ** 2)


def _mlp_inputs(dtype=np.float64):
    rng = np.random.default_rng(4)
    return [rng.standard_normal(s).astype(dtype) for s in ((4, 8), (8,), (8, 3))], rng.standard_normal((5, 4))


def test_an_mlp_gradient_and_hvp_specialised_agree_with_the_plain_programs():
    (w1, b1, w2), x = _mlp_inputs()
    g = autodiff.grad(lambda w1, b1, w2: _mlp_loss(w1, b1, w2, x), (0, 1, 2))
    specialised = _agrees(_lowered(g, [w1, b1, w2]), [w1, b1, w2])
    names = {eq.prim.__name__ for eq in _specialised(specialised)}
    assert {"sum_to_shape[axes 0]", "matmul_nt[dot]", "matmul_tn[dot]"} <= names

    def hvp(w1):
        return autodiff.jvp(autodiff.grad(lambda w: _mlp_loss(w, b1, w2, x)), (w1,), (np.ones_like(w1),))[1]

    _agrees(_lowered(hvp, [w1]), [w1])


def test_an_outer_transform_goes_through_the_primitives_to_second_order():
    """``grad(jit(f))`` and ``grad(grad(jit(...)))``: the outer levels see each primitive of the specialised
    program (``Specialised.__call__``), so their gradients are eager's."""
    (w1, b1, w2), x = _mlp_inputs()
    inner = autodiff.jit(lambda w1: autodiff.grad(lambda w: _mlp_loss(w, b1, w2, x))(w1))
    assert not enabled("jit_specialise") or _specialised(inner.lower(w1))
    v = np.random.default_rng(5).standard_normal(w1.shape)

    def directional(jitted_or_not):
        return lambda w: anp.sum(jitted_or_not(w) * v)

    eager = autodiff.grad(lambda w1: _mlp_loss(w1, b1, w2, x))
    _close([autodiff.grad(directional(inner))(w1)], [autodiff.grad(directional(eager))(w1)])
    second = autodiff.grad(lambda w: anp.sum(autodiff.grad(directional(inner))(w) ** 2))
    _close([second(w1)], [autodiff.grad(lambda w: anp.sum(autodiff.grad(directional(eager))(w) ** 2))(w1)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jit_with_every_pass_agrees_with_jit_without_this_one(dtype):
    (w1, b1, w2), x = _mlp_inputs(dtype)
    x = x.astype(dtype)
    g = autodiff.grad(lambda w1, b1, w2: _mlp_loss(w1, b1, w2, x), (0, 1, 2))
    every = autodiff.jit(g)
    without = autodiff.jit(g, passes=tuple(p for p in PASSES if p != "specialise"))
    _close(list(every(w1, b1, w2)), list(without(w1, b1, w2)))
    assert bool(_specialised(every.lower(w1, b1, w2))) == enabled("jit_specialise")
    assert _specialised(without.lower(w1, b1, w2)) == []
