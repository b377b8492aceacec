"""Common-subexpression elimination (``autodiff._jit.passes.cse``) against the plain replay of the same program.

Every op-table program (value, gradient, gradient of gradient) and programs written to repeat themselves run
merged and unmerged on new inputs and must give bitwise the same leaves: a merged equation is the same function
on the same values.  Then what must not merge: different constants (``0.0`` and ``-0.0``, ``1`` and ``1.0``,
distinct arrays), different keyword arguments, random draws, two output leaves; and the transforms around a
jitted function.  The pass is on in both modes, so these tests run the same in both.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.extend import effectful, primitive
from bench import mlp
from tests.accel.test_jit_codegen import _same_bits, op_table_programs
from tests.internals import PASSES, cse, replay
from tests.op_table import OPS


def _names(program):
    return [e.prim.__name__ for e in program.equations]


def _twice(x):
    """Each subexpression computed twice, as a function written without care does."""
    a = anp.exp(anp.sin(x)) * 2.0
    b = anp.exp(anp.sin(x)) * 2.0
    return anp.sum(a * b + anp.sin(x), axis=0)


@pytest.mark.parametrize("op", OPS, ids=repr)
def test_every_op_table_program_runs_bitwise_as_the_unmerged_one(op):
    for program, inputs in op_table_programs(op, passes=()):
        merged = cse(program)
        assert len(merged.equations) <= len(program.equations)
        with np.errstate(all="ignore"):
            _same_bits(replay(merged, inputs), replay(program, inputs))


def test_repeated_equations_merge_and_the_values_stay_bitwise():
    x = np.random.default_rng(0).standard_normal((3, 4))
    program = autodiff.jit(_twice, passes=()).lower(x)
    merged = cse(program)
    assert _names(program) == ["sin", "exp", "multiply", "sin", "exp", "multiply", "multiply", "sin", "add", "sum"]
    assert _names(merged) == ["sin", "exp", "multiply", "multiply", "add", "sum"]
    later = np.random.default_rng(1).standard_normal((3, 4))
    _same_bits(replay(merged, [later]), replay(program, [later]))
    jf = autodiff.jit(_twice)
    jf(x)
    np.testing.assert_array_equal(jf(later), _twice(later))  # on by default: bitwise the function itself


def test_equal_numbers_merge_by_their_bits_and_type_only():
    two, also_two = float("2.0"), float("2.0")  # equal floats, two objects
    assert two is not also_two

    def f(x):
        ones = x * 1 + x * 1.0 + x * True + x * np.float32(1.0) + x * np.float64(1.0)
        return x * two - x * also_two, 1.0 / (x * 0.0), 1.0 / (x * -0.0), ones

    x = np.array([1.0, 2.0])
    program = autodiff.jit(f, passes=()).lower(x)
    merged = cse(program)
    assert _names(program).count("multiply") == 9 and _names(merged).count("multiply") == 8
    with np.errstate(divide="ignore"):
        got = replay(merged, [x])
        _same_bits(got, list(f(x)))
    assert np.all(got[1] == np.inf) and np.all(got[2] == -np.inf)  # 0.0 and -0.0 kept apart


def test_the_same_array_merges_and_equal_distinct_arrays_do_not():
    w, same_values = np.arange(3.0), np.arange(3.0)
    program = cse(autodiff.jit(lambda x: (x * w + x * w) * (x * same_values), passes=()).lower(np.ones(3)))
    assert _names(program) == ["multiply", "add", "multiply", "multiply"]


def test_shapes_merge_by_value_and_keyword_arguments_must_be_equal():
    def f(x):
        shape, same_shape = tuple([4, 3]), tuple([4, 3])  # equal tuples, two objects
        return (anp.reshape(x, shape) + anp.reshape(x, same_shape), anp.sum(x, axis=0) * 1.0,
                anp.sum(x, axis=1) * 1.0, anp.sum(x, axis=0) * 2.0)

    program = autodiff.jit(f, passes=()).lower(np.ones((3, 4)))
    assert _names(cse(program)) == ["reshape", "add", "sum", "multiply", "sum", "multiply", "multiply"]
    x = np.random.default_rng(2).standard_normal((3, 4))
    _same_bits(replay(cse(program), [x]), replay(program, [x]))


def test_random_draws_are_never_merged():
    noisy = primitive(lambda x, rng: x + rng.standard_normal(np.shape(x)), name="noisy")  # a generator operand
    jitter = effectful(primitive(lambda x: x + np.random.standard_normal(np.shape(x)), name="jitter"))
    rng = np.random.default_rng(0)

    def f(x):
        return noisy(x, rng) - noisy(x, rng), jitter(x) - jitter(x)

    jf = autodiff.jit(f)
    jf(np.zeros(3))  # the trace's own draws
    program = jf.lower(np.zeros(3))
    assert _names(program).count("noisy") == 2 and _names(program).count("jitter") == 2
    drawn = jf(np.zeros(3))  # the program's
    assert np.all(drawn[0] != 0) and np.all(drawn[1] != 0)  # two draws each, not one subtracted from itself


def test_two_output_leaves_stay_two_arrays():
    def f(x):
        y = anp.exp(x)
        return anp.exp(x), anp.exp(x), y * 2.0

    program = cse(autodiff.jit(f, passes=()).lower(np.ones(2)))
    assert _names(program) == ["exp", "exp", "multiply"]  # the first leaf's exp is y's; the second leaf's stays
    jf = autodiff.jit(f)
    jf(np.ones(2))
    a, b, _ = jf(np.ones(2))
    a += 1.0
    np.testing.assert_array_equal(b, np.exp(np.ones(2)))  # changing one leaf in place left the other alone


def test_an_output_leaf_is_renamed_to_its_first_computation():
    program = cse(autodiff.jit(lambda x: (anp.sin(x) * 2.0, anp.sin(x)), passes=()).lower(np.ones(2)))
    assert _names(program) == ["sin", "multiply"]
    assert program.outputs[1].ref == program.equations[0].out


def test_the_small_hvp_gets_shorter():
    params, x, onehot, v = mlp.hvp_inputs([64, 64, 10], 128)
    hvp = lambda p: mlp.ours_hvp(p, x, onehot, v)  # noqa: E731
    plain, merged = autodiff.jit(hvp, passes=("dce",)), autodiff.jit(hvp, passes=("cse", "dce"))
    assert len(merged.lower(params).equations) < len(plain.lower(params).equations)
    moved = {k: p * np.float32(1.5) for k, p in params.items()}
    _same_bits(list(merged(moved).values()), list(plain(moved).values()))  # each replays its program
    assert merged.cache_info().hits == plain.cache_info().hits == 1


def test_grad_and_vmap_of_a_jitted_function_are_unaffected():
    jf = autodiff.jit(_twice)
    x = np.random.default_rng(3).standard_normal((3, 4))
    jf(x)
    assert _names(jf.lower(x)) != _names(autodiff.jit(_twice, passes=()).lower(x))  # merged indeed
    loss = lambda x: anp.sum(jf(x) ** 2)  # noqa: E731
    # The merged values' cotangents add before one pullback, so the last bits may differ from grad(f)'s.
    np.testing.assert_allclose(autodiff.grad(loss)(x), autodiff.grad(lambda x: anp.sum(_twice(x) ** 2))(x),
                               rtol=1e-12)
    assert autodiff.gradcheck(jf, x, order=2)
    xs = np.random.default_rng(4).standard_normal((5, 3, 4))
    np.testing.assert_array_equal(autodiff.vmap(jf)(xs), autodiff.vmap(_twice)(xs))


def test_it_runs_first_and_can_be_left_out():
    assert list(PASSES)[:4] == ["cse", "fold", "simplify", "dce"]
    x = np.ones((3, 4))
    assert len(autodiff.jit(_twice, passes=("dce",)).lower(x).equations) == 10
    assert len(autodiff.jit(_twice, passes=("cse", "dce")).lower(x).equations) == 6
