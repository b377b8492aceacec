"""Constant folding (``autodiff._jit.passes.fold``) against the plain replay of the same program.

A traced program holds no equation on constants only (the trace computes such a call when it is made), so
these tests make some: :func:`_bound` reads some of a program's inputs as constants instead, as a rewrite that
learned their values would.  Every op-table program (value, gradient, gradient of gradient), bound whole or in
part, folds and must replay bitwise as the bound program does.  Then what must not fold: random draws, a call
that raises, a value too large to hold between calls; and the transforms that replay a folded program.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.extend import effectful, primitive
from bench import mlp
from tests.accel.test_jit_codegen import _same_bits, op_table_programs
from tests.internals import MAX_BYTES, Var, fold, replay
from tests.op_table import OPS


def _bound(program, values):
    """``program`` reading input ``k`` as the constant ``values[k]`` (a dict) wherever it read ``%k``."""

    def constant(a):
        return values.get(a.ref, a) if type(a) is Var else a

    equations = [e._replace(operands=tuple(map(constant, e.operands))) for e in program.equations]
    return program.replace(equations, outputs=[constant(o) for o in program.outputs])


def _names(program):
    return [e.prim.__name__ for e in program.equations]


@pytest.mark.parametrize("op", OPS, ids=repr)
def test_every_op_table_program_bound_folds_and_replays_bitwise(op):
    for program, inputs in op_table_programs(op, passes=()):
        with np.errstate(all="ignore"):
            whole = fold(_bound(program, dict(enumerate(inputs))))
            assert whole.equations == [] and Var not in map(type, whole.outputs)
            _same_bits(replay(whole, inputs), replay(program, inputs))
            part = _bound(program, dict(list(enumerate(inputs))[:1]))  # the first only
            _same_bits(replay(fold(part), inputs), replay(part, inputs))


def test_a_traced_program_has_nothing_to_fold():
    params, x, onehot, v = mlp.hvp_inputs([64, 64, 10], 128)
    program = autodiff.jit(lambda p: mlp.ours_hvp(p, x, onehot, v), passes=()).lower(params)
    assert all(Var in map(type, e.operands) for e in program.equations)  # each reads a value
    assert fold(program) is program


def test_a_chain_on_constants_folds_whole_and_its_arrays_are_captured():
    program = autodiff.jit(lambda x, y: anp.sin(anp.exp(y)) * x + anp.cos(x), passes=()).lower(np.ones(2), np.ones(2))
    y = np.array([0.5, -1.0])
    bound = _bound(program, {1: y})
    folded = fold(bound)
    assert _names(bound) == ["exp", "sin", "multiply", "cos", "add"] and _names(folded) == ["multiply", "cos", "add"]
    constant = folded.equations[0].operands[0]
    np.testing.assert_array_equal(constant, np.sin(np.exp(y)))
    assert any(a is constant for a in folded.captured)  # jit holds it read-only while the program is cached
    x = np.array([2.0, 3.0])
    _same_bits(replay(folded, [x, y]), replay(bound, [x, y]))


def test_a_folded_output_is_a_constant_leaf():
    program = autodiff.jit(lambda x, y: (x * 2.0, anp.exp(y)), passes=()).lower(np.ones(2), np.ones(2))
    y = np.array([0.0, 1.0])
    folded = fold(_bound(program, {1: y}))
    assert _names(folded) == ["multiply"] and type(folded.outputs[1]) is np.ndarray
    np.testing.assert_array_equal(replay(folded, [np.ones(2), y])[1], np.exp(y))


def test_random_draws_are_never_folded():
    noisy = primitive(lambda x, rng: x + rng.standard_normal(np.shape(x)), name="noisy")  # a generator operand
    jitter = effectful(primitive(lambda x: x + np.random.standard_normal(np.shape(x)), name="jitter"))
    rng = np.random.default_rng(0)
    program = autodiff.jit(lambda x, y: (noisy(anp.exp(y), rng) * x, jitter(anp.exp(y)) * x),
                           passes=()).lower(np.ones(2), np.ones(2))
    folded = fold(_bound(program, {1: np.zeros(2)}))
    assert _names(folded) == ["noisy", "multiply", "jitter", "multiply"]  # the exps folded, the draws not
    first, second = replay(folded, [np.ones(2), None]), replay(folded, [np.ones(2), None])
    assert np.all(first[0] != second[0]) and np.all(first[1] != second[1])  # a new draw on every run


def test_a_call_that_raises_stays_to_raise_on_every_run():
    def positive(x):
        if np.any(x <= 0):
            raise ValueError("positive: got a value <= 0")
        return x

    program = autodiff.jit(lambda x, y: primitive(positive)(y) * x, passes=()).lower(np.ones(2), np.ones(2))
    folded = fold(_bound(program, {1: np.array([1.0, -1.0])}))
    assert _names(folded) == ["positive", "multiply"]
    with pytest.raises(ValueError, match="positive: got a value <= 0"):
        replay(folded, [np.ones(2), None])


def test_a_value_larger_than_max_bytes_is_computed_on_every_run():
    n = MAX_BYTES // 8 + 1  # float64 elements: one more than fits
    program = autodiff.jit(lambda x, y: x * anp.exp(y)[:2] + anp.sum(anp.exp(y[:2])), passes=()).lower(
        np.ones(2), np.zeros(n))
    folded = fold(_bound(program, {1: np.zeros(n)}))
    assert _names(folded) == ["exp", "getitem", "multiply", "add"]  # exp(y) too large; its slice reads a value
    x = np.array([1.0, 2.0])
    _same_bits(replay(folded, [x, None]), [x * 1.0 + 2.0])


def test_grad_and_vmap_replay_a_folded_program_as_the_bound_one():
    program = autodiff.jit(lambda x, y: anp.tanh(x * anp.exp(y)) * anp.sum(y ** 2), passes=()).lower(
        np.ones(3), np.ones(3))
    y = np.array([0.1, -0.2, 0.3])
    bound = _bound(program, {1: y})
    folded = fold(bound)
    assert len(folded.equations) < len(bound.equations)
    with_folded = lambda x: replay(folded, [x, None])[0]  # noqa: E731
    with_bound = lambda x: replay(bound, [x, None])[0]  # noqa: E731
    x, xs = np.array([0.3, -1.0, 2.0]), np.random.default_rng(0).standard_normal((4, 3))
    loss = lambda g: lambda x: anp.sum(g(x) ** 2)  # noqa: E731
    np.testing.assert_array_equal(autodiff.grad(loss(with_folded))(x), autodiff.grad(loss(with_bound))(x))
    assert autodiff.gradcheck(with_folded, x, order=2)
    np.testing.assert_array_equal(autodiff.vmap(with_folded)(xs), autodiff.vmap(with_bound)(xs))
