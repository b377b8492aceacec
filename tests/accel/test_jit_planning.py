"""jit's buffer planning (``autodiff._accel.planning``) against the unplanned program.

Writing a ufunc's value into an operand that dies there runs numpy's same loop, so every program of the op table
(value, gradient, gradient of gradient; float32 value) must give bitwise the unplanned leaves, by the interpreter
and by the call-site form.  Then what must never be written: the caller's inputs, the captured constants, an
output, a value still read later, and a value some reader may hold a view of.  Outer transforms' values go
through the primitives.  The pass runs in both modes as a function; ``jit`` uses it only when accelerations are on.
"""

import re

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff._accel.planning import Into, plan_buffers
from autodiff._hooks import enabled
from autodiff._jit.passes.codegen import callsite
from autodiff._jit.replay import replay
from tests.accel.test_jit_codegen import _lowered, _same_bits, op_table_programs
from tests.op_table import OPS


def _into(program):
    return [eq for eq in program.equations if type(eq.prim) is Into]


def _planned_agrees(program, inputs):
    """The planned program's leaves are bitwise the unplanned ones', and the inputs are left as they were."""
    before = [np.array(a, copy=True) for a in inputs]
    want = replay(program, inputs)
    planned = plan_buffers(program)
    _same_bits(replay(planned, inputs), want)
    _same_bits(callsite(planned).run(inputs), want)
    _same_bits(inputs, before)
    return planned


@pytest.mark.parametrize("op", OPS, ids=repr)
def test_every_op_table_program_planned_runs_bitwise_as_unplanned(op):
    with np.errstate(all="ignore"):
        for program, inputs in op_table_programs(op):
            _planned_agrees(program, inputs)


def test_the_gradient_of_an_mlp_writes_in_place_and_is_bitwise_the_same():
    rng = np.random.default_rng(0)
    w1, w2, x = rng.standard_normal((4, 8)), rng.standard_normal((8, 3)), rng.standard_normal((5, 4))

    def loss(w1, w2):
        h = anp.tanh(x @ w1 + 0.5)
        return anp.sum((h @ w2 - 1.0) ** 2) + anp.sum(anp.exp(h) * h)

    g = autodiff.grad(loss, (0, 1))
    program = _lowered(g, [w1, w2])
    planned = _planned_agrees(program, [w1, w2])
    assert len(_into(planned)) >= 3
    for eq in _into(planned):  # each writes into a value the program made
        assert eq.operands[eq.prim.writes_into].ref >= program.n_inputs
    source = callsite(planned).source  # the call-site form calls each planned ufunc itself, with out=
    for eq in _into(planned):
        written = eq.operands[eq.prim.writes_into].ref
        assert re.search(rf"v{eq.out} = {eq.prim.prim.__name__}\(.*, out=v{written}\)", source), source


def test_inputs_constants_and_outputs_are_never_written():
    c = np.linspace(1.0, 2.0, 3)

    def f(x):
        y = x + c  # x: an input, c: a constant
        z = y * 2.0  # y dies here: written into
        return z, z + 1.0  # z is an output: never written

    program = _lowered(f, [np.ones(3)])
    planned = _planned_agrees(program, [np.ones(3)])
    assert [eq.prim.__name__ for eq in planned.equations] == ["add", "multiply[into 0]", "add"]
    np.testing.assert_array_equal(c, np.linspace(1.0, 2.0, 3))


def test_a_value_read_later_or_viewed_by_a_reader_is_not_written():
    def f(x):
        y = anp.sin(x) * 3.0  # y: a fresh array
        view = anp.reshape(y, (2, 3))  # a view of y, alive after y's last read
        w = y + 1.0  # y's last read: it must not be written, the view would change
        u = anp.exp(x)
        v = u * 2.0  # u is read again below: not written here
        return view, w, v + u

    x = np.arange(6.0)
    program = _lowered(f, [x])
    planned = _planned_agrees(program, [x])
    written = {eq.operands[eq.prim.writes_into].ref for eq in _into(planned)}
    made = {eq.prim.__name__: eq.out for eq in program.equations}
    assert made["reshape"] not in written
    assert not written & {eq.operands[0].ref for eq in program.equations if eq.prim.__name__ == "reshape"}
    assert made["exp"] not in written


def test_zero_dimensional_values_are_left_alone():
    program = _lowered(lambda x: anp.sum(x) * 2.0 + 1.0, [np.ones(3)])
    assert _into(plan_buffers(program)) == []  # a 0-d ufunc result is a numpy scalar, not a buffer


def test_outer_transforms_and_second_order_through_planned_programs():
    def f(x):
        return anp.sum(anp.tanh(x * 2.0 + 1.0) * x)

    x = np.random.default_rng(1).standard_normal(5)
    jf = autodiff.jit(f, passes=("dce", "plan"))
    assert not enabled("jit_planning") or _into(jf.lower(x))
    for outer in (autodiff.grad, lambda h: autodiff.grad(lambda y: anp.sum(autodiff.grad(h)(y) ** 2))):
        np.testing.assert_allclose(outer(jf)(x), outer(f)(x), rtol=1e-13)
    np.testing.assert_allclose(autodiff.vmap(jf)(np.stack([x, -x])), [f(x), f(-x)], rtol=1e-13)


def test_jit_plans_only_when_accelerations_are_on():
    program = autodiff.jit(lambda x: anp.sin(x) * 2.0 + x, passes=("plan",)).lower(np.zeros(3))
    assert bool(_into(program)) == enabled("jit_planning")
