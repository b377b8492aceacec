"""The call-site form (``autodiff._jit.passes.codegen``) against the reference interpreter it stands in for.

Every program of the op table (each op's value, gradient and gradient of gradient, traced on one draw) runs on
a second draw by both, and must give bitwise the same leaves: the generated function calls the same functions on
the same values in the same order.  Then the semantics it must keep: values dropped after their last use, a shape
that depends on the data stops it with ``ShapeChanged`` (and jit runs the function itself), outer transforms'
values go through the primitives, NaN and Inf pass as in the interpreter.  The module is tested in both modes;
``jit`` uses it only when accelerations are on.
"""

import warnings
import weakref

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import JitFallbackWarning
from autodiff._jit.passes.codegen import CallSite, callsite, follows_operands
from autodiff._jit.program import Program
from autodiff._jit.replay import ShapeChanged, replay
from autodiff.extend import primitive
from tests.jit.test_op_table import _first_case, _inputs, _loss
from tests.modes import REFERENCE
from tests.op_table import OPS


def _same_bits(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert type(a) is type(b) and np.result_type(a) == np.result_type(b)
        np.testing.assert_array_equal(a, b, strict=True)  # NaN equals NaN here; shapes and dtypes must match


def _op_programs(op, case=None):
    """``(name, fun, first inputs, second inputs)`` for the op's value, gradient and gradient of gradient (of its
    first case, unless given one)."""
    shapes, kwargs = case or _first_case(op)
    first, second = _inputs(op, shapes, np.float64, 0), _inputs(op, shapes, np.float64, 1)
    nums = tuple(range(len(first)))
    g = autodiff.grad(_loss(op, kwargs), nums)
    yield "value", lambda *xs: op.fn(*xs, **kwargs), first, second
    yield "grad", g, first, second
    yield "grad grad", autodiff.grad(lambda *xs: anp.sum(g(*xs)[0] ** 2), nums), first, second
    first32, second32 = _inputs(op, shapes, np.float32, 0), _inputs(op, shapes, np.float32, 1)
    yield "value float32", lambda *xs: op.fn(*xs, **kwargs), first32, second32


def _program_inputs(args):
    """The program's inputs for positional ``args``: each distinct array (a number is a static leaf)."""
    return list({id(a): a for a in args if type(a) is np.ndarray}.values())


def _lowered(fun, args, passes=("dce",)):
    """The program ``jit(fun)`` traces for ``args`` (dead code eliminated, nothing else, unless ``passes`` says),
    or ``None`` when that signature runs without jit (a rule read data)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JitFallbackWarning)
        try:
            return autodiff.jit(fun, passes=passes).lower(*args)
        except ValueError as e:
            if "has no program" in str(e):
                return None
            raise


def op_table_programs(op, passes=("dce",)):
    """``(program, the second draw's inputs)`` for each program of :func:`_op_programs` that jit keeps (traced
    on the first draw with ``passes``).  When there is none (a rule of the op reads data), it checks what holds
    instead, that jit runs the function itself, and gives none."""
    found = [(program, _program_inputs(second)) for _, fun, first, second in _op_programs(op)
             if (program := _lowered(fun, first, passes)) is not None]
    if not found:
        _runs_the_function_itself(op)
    return found


def _runs_the_function_itself(op):
    """A signature without a program runs the function itself: one warning, the eager value bit for bit."""
    _, fun, first, second = next(_op_programs(op))
    jitted = autodiff.jit(fun)
    with pytest.warns(JitFallbackWarning):
        jitted(*first)
    with np.errstate(all="ignore"):
        _same_bits([np.asarray(jitted(*second))], [np.asarray(fun(*second))])
    assert jitted.cache_info().fallbacks and jitted.cache_info().eager_calls == 1


@pytest.mark.parametrize("op", OPS, ids=repr)
def test_every_op_table_program_runs_bitwise_as_the_interpreter(op):
    for program, inputs in op_table_programs(op):
        generated = callsite(program)
        with np.errstate(all="ignore"):
            want = replay(program, inputs)
            _same_bits(generated.run(inputs), want)
            _same_bits(generated.run(inputs), want)  # its function, built on the first run


def test_its_source_is_one_line_per_equation_naming_each_primitive():
    program = autodiff.jit(lambda x, y: anp.sum(anp.exp(x) * y, axis=0), passes=()).lower(np.ones((2, 3)), 2.0)
    source = callsite(program).source
    assert "v1 = exp(v0)" in source and "v2 = multiply(v1, 2.0)" in source and "v3 = sum(v2, axis=0)" in source
    assert source.count("raise changed(") == 1 and "raise changed(2, v3)" in source  # sum's; ufuncs' need none
    assert source.splitlines()[-1] == "    return [v3]"


def test_only_a_line_whose_shape_may_not_follow_from_its_operands_is_checked():
    """A ufunc's value has its operands' broadcast shape, and so do the acceleration passes' equations: no check;
    any other primitive (a mask's count, a reduction) is checked, so a changed shape still stops the run where it
    first appears."""
    program = autodiff.jit(lambda x, w: anp.sum(anp.tanh(x @ w + 1.0)[x[:, 0] > 0], axis=0), passes=()).lower(
        np.ones((4, 3)), np.ones((3, 5)))
    source = callsite(program).source
    checked = [f"raise changed({k}, " in source for k in range(len(program.equations))]
    assert checked == [program.shapes[eq.out] is not None and not follows_operands(eq.prim)
                       for eq in program.equations]
    assert {"getitem", "sum"} <= {eq.prim.__name__ for eq, c in zip(program.equations, checked) if c}
    assert {"add", "matmul", "greater"} <= {eq.prim.__name__ for eq, c in zip(program.equations, checked) if not c}
    every = autodiff.jit(lambda x, w: anp.sum(anp.tanh(x @ w + 1.0)[x[:, 0] > 0], axis=0))
    x, w = np.ones((4, 3)), np.ones((3, 5))
    every(x, w)
    for eq in every.lower(x, w).equations:
        if type(eq.prim).__name__ in ("Fused", "FusedInto", "Into", "Specialised", "_Item"):
            assert follows_operands(eq.prim), eq
    with pytest.raises(ShapeChanged):  # the mask's count changed: stopped at the getitem line
        callsite(program).run([-np.ones((4, 3)), w])


def test_constants_of_every_kind_pass_as_the_interpreter_passes_them():
    big, inf, f32 = np.arange(12.0).reshape(3, 4), float("inf"), np.float32(0.5)

    def f(x):
        y = anp.where(x > 0, x * inf, x * -0.0)  # non-finite and signed-zero Python floats
        return anp.sum(y * f32 + big, axis=1, keepdims=True), anp.reshape(x, (4, 3)) - np.float64(1.5), 3

    program = autodiff.jit(f, passes=()).lower(np.ones((3, 4)))
    x = np.random.default_rng(0).standard_normal((3, 4))
    with np.errstate(all="ignore"):
        _same_bits(callsite(program).run([x]), replay(program, [x]))


def test_nan_and_inf_pass_through_as_in_the_interpreter():
    program = autodiff.jit(autodiff.grad(lambda x: anp.sum(anp.log(x) * anp.sqrt(x) / x)), passes=()).lower(
        np.ones(5))
    x = np.array([np.nan, np.inf, -1.0, 0.0, 2.0])
    with np.errstate(all="ignore"):
        got, want = callsite(program).run([x]), replay(program, [x])
    _same_bits(got, want)
    assert np.isnan(got[0][:3]).all() and np.isfinite(got[0][4])


def test_each_value_is_dropped_after_its_last_use():
    made, seen_alive = [], []

    def keep(x):
        y = np.exp(x)
        made.append(weakref.ref(y))
        return y

    def look(x):
        seen_alive.append(made[-1]() is not None)  # is keep's value still held, after its last reader ran?
        return np.sin(x)

    f = (lambda p, q: lambda x: q(anp.cos(p(x))))(primitive(keep, "keep"), primitive(look, "look"))
    program = autodiff.jit(f, passes=()).lower(np.ones(3))
    for run in (lambda xs: replay(program, xs), callsite(program).run):
        np.testing.assert_array_equal(run([np.zeros(3)])[0], np.sin(np.cos(np.ones(3))))
        assert seen_alive[-1] is False


def test_a_shape_that_depends_on_the_data_raises_shape_changed_as_the_interpreter_does():
    program = autodiff.jit(lambda x: anp.sum(x[x > 0]), passes=()).lower(np.array([1.0, 2.0, -1.0]))
    one = [np.array([1.0, -2.0, -1.0])]
    with pytest.raises(ShapeChanged) as interpreted:
        replay(program, one)
    with pytest.raises(ShapeChanged) as generated:
        callsite(program).run(one)
    assert str(generated.value) == str(interpreted.value)
    assert callsite(program).run([np.array([3.0, -1.0, 4.0])]) == [7.0]  # the same count: runs


def test_under_jit_a_changed_shape_still_runs_the_function_itself():
    def mean_of_positives(x):
        kept = x[x > 0]
        return anp.sum(kept) / kept.shape[0]

    jf = autodiff.jit(mean_of_positives)
    two, one = np.array([1.0, 2.0, -1.0]), np.array([1.0, -2.0, -1.0])
    assert jf(two) == 1.5 and jf(two) == 1.5  # traced, then run by the generated function
    with pytest.warns(JitFallbackWarning, match="depends on the data"):
        assert jf(one) == 1.0
    assert jf.cache_info().eager_calls == 1


def _f(x):
    return anp.sum(anp.tanh(anp.sin(x) * 0.9 + 0.1) * x)


def test_outer_transforms_values_go_through_the_primitives():
    jf = autodiff.jit(_f)
    x, xs = np.linspace(-1.0, 1.0, 4), np.random.default_rng(1).standard_normal((3, 4))
    jf(x), jf(x)  # a plain signature, run by its generated function
    for _ in range(2):  # traced under grad and vmap, then run again: the traced inputs take the interpreter
        np.testing.assert_allclose(autodiff.grad(jf)(x), autodiff.grad(_f)(x), rtol=1e-12)
        np.testing.assert_allclose(autodiff.vmap(jf)(xs), autodiff.vmap(_f)(xs), rtol=1e-12)
    assert autodiff.gradcheck(jf, x, order=2)
    assert jf.cache_info().traces == 1 and jf.cache_info().hits >= 1


def test_jit_of_grad_of_grad_is_right():
    g = autodiff.grad(lambda s: autodiff.grad(lambda t: _f(np.linspace(-1.0, 1.0, 4) * t))(s))
    jg = autodiff.jit(g)
    for s in (np.array(0.5), np.array(1.5), np.array(-2.0)):
        np.testing.assert_allclose(jg(s), g(s), rtol=1e-12)
    assert jg.cache_info().traces == 1


def test_jit_runs_the_generated_function_unless_accelerations_are_off():
    program = autodiff.jit(_f).lower(np.ones(4))
    assert (type(program) is CallSite) is not REFERENCE
    assert type(autodiff.jit(_f, passes=("dce",)).lower(np.ones(4))) is Program
    jf = autodiff.jit(_f, passes=("callsite", "dce"))  # jit runs the passes in its own order: callsite last
    assert (type(jf.lower(np.ones(4))) is CallSite) is not REFERENCE
