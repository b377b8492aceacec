"""jit's fusion pass (``autodiff._accel.fusion``) against the reference interpreter, its kernels compiled.

Every program of the op table (value, gradient, gradient of gradient in float64; value in float32; each op's
simplest case whose inputs have an axis) is fused and run on a second draw: within 1e-12 (float64) or 1e-6
(float32) of the unfused replay, NaN and Inf where the replay has them.  The programs of the ops that have a
formula are run on their kernels, compiled now; the others run their fused equations' first tier, which checks
how the runs were found and split.  Each formula runs in a kernel of its own in both dtypes.
Then what must hold around it: the tiers (nothing compiles on the first call), the outer transforms, the
data-dependent-shape fallback, numba switched off or failing, and the 100-operation chain of bench/overhead.py
as one kernel.  Under ``AUTODIFF_REFERENCE=1`` fusion is off: the
tests that need a kernel are skipped and one checks the program is left as traced.
"""

import cProfile
import pstats
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, find, settings
from hypothesis.errors import NoSuchExample

import autodiff
import autodiff.numpy as anp
from autodiff import JitFallbackWarning
from autodiff._accel import fused as fused_module
from autodiff._accel import fusion, rows
from autodiff._accel.formulas import FORMULAS, arity
from autodiff._accel.fused import Fused
from autodiff._accel.fusion import ITEM, VECTOR_MATH_ABOVE, fuse
from autodiff._hooks import enabled
from autodiff._jit.passes.codegen import callsite
from autodiff._jit.replay import ShapeChanged, replay
from bench.overhead import chain
from tests.accel.test_jit_codegen import _lowered, _op_programs, _program_inputs
from tests.jit.test_op_table import _first_case
from tests.op_table import OPS

FUSING = enabled("jit_fusion") and enabled("kernels")
needs_kernels = pytest.mark.skipif(not FUSING, reason="fusion is off (AUTODIFF_REFERENCE=1, or numba is off)")


@pytest.fixture(autouse=True)
def _short_runs_fuse(monkeypatch):
    """These tests check how runs are found and what kernels compute, on small arrays and short runs: every run of
    MIN_RUN fuses here.  The launch-cost rule (MIN_SMALL_RUN) has a test of its own, which restores it."""
    monkeypatch.setattr(fusion, "MIN_SMALL_RUN", fusion.MIN_RUN)


def _close(got, want, dtype):
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert type(a) is type(b) and np.result_type(a) == np.result_type(b) and np.shape(a) == np.shape(b)
        scale = np.max(np.abs(b[np.isfinite(b)]), initial=1.0) if np.ndim(b) else max(abs(float(np.real(b))), 1)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)  # NaN where NaN, Inf where Inf


def _fusions(program):
    return [eq.prim for eq in program.equations if type(eq.prim) is Fused]


def _compiled(program):
    """``program`` fused, each kernel compiled now (not after COMPILE_AFTER calls)."""
    fused = fuse(program)
    for f in _fusions(fused):
        assert f.compile() is not False, f.source
    return fused


# The ops whose own primitive has a formula run their programs' kernels; compiling every op's (about 600
# kernels) took minutes on a fresh checkout, as CI is.  Each formula's line of kernel code is tested on its own,
# in both dtypes (test_each_formula_runs_in_a_kernel_as_its_primitive_does).
KERNEL_OPS = {prim.__name__ for prim in FORMULAS}


def _fused_programs(op):
    """``(program, fused, inputs, dtype)`` for each op-table program of ``op``, its kernels compiled for the
    ops of :data:`KERNEL_OPS` and left in their first tier (the run's own primitives) for the others."""
    for _, fun, first, second in _op_programs(op, _case_with_axes(op)):
        program = _lowered(fun, first)
        if program is not None:
            fused = _compiled(program) if op.name in KERNEL_OPS else fuse(program)
            yield program, fused, _program_inputs(second), second[0].dtype


@needs_kernels
@pytest.mark.parametrize("op", OPS, ids=repr)
def test_op_table_programs_fused_agree_with_the_interpreter(op):
    """Every op's programs: the runs found and taken apart right (the fused equations' values, and the items
    that split them, equal the unfused replay); for the ops of KERNEL_OPS, with their kernels."""
    for program, fused, inputs, dtype in _fused_programs(op):
        with np.errstate(all="ignore"):
            want = replay(program, inputs)
            _close(replay(fused, inputs), want, dtype)
            _close(callsite(fused).run(inputs), want, dtype)
        if op.name in KERNEL_OPS:
            assert not any(f.refused or f.kernel is None for f in _fusions(fused))  # each ran its kernel


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("prim", list(FORMULAS), ids=lambda p: p.__name__)
def test_each_formula_runs_in_a_kernel_as_its_primitive_does(prim, dtype):
    """Each formula's line of kernel code, in both dtypes: ``prim`` between two scalings, one run of three
    equations, on values in (0.2, 0.9) (inside every formula's domain), against the unfused replay."""
    n = arity(prim)

    def f(*xs):
        return prim(*[x * 1.5 for x in xs]) * 0.5

    draws = np.random.default_rng(7).uniform(0.2, 0.9, (2, n, 16)).astype(dtype)
    program = _lowered(f, list(draws[0]))
    fused = _compiled(program)
    assert [type(e.prim) for e in fused.equations] == [Fused]
    want = replay(program, list(draws[1]))
    _close(replay(fused, list(draws[1])), want, dtype)
    assert want[0].dtype == dtype and fused.equations[0].prim.refused == 0


def _case_with_axes(op):
    """The op's simplest case whose inputs all have an axis (fusion leaves 0-d values alone), else its first."""
    try:
        return find(op.cases, lambda case: all(len(shape) >= 1 for shape in case[0]),
                    settings=settings(database=None, derandomize=True, suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return _first_case(op)


@needs_kernels
def test_the_chain_is_one_kernel_and_its_gradient_agrees():
    g = autodiff.grad(lambda x: chain(x, anp))
    program = _lowered(g, [np.zeros(10)])
    fused = _compiled(program)
    assert len(program.equations) == 175 and [type(e.prim) for e in fused.equations] == [Fused]
    for x in (np.linspace(-1.0, 1.0, 10), np.random.default_rng(0).standard_normal(10) * 3):
        _close(replay(fused, [x]), [g(x)], np.float64)
        _close(callsite(fused).run([x]), [g(x)], np.float64)
    assert fused.equations[0].prim.refused == 0
    jg = autodiff.jit(g)
    for seed in range(fused_module.COMPILE_AFTER + 2):  # the trace, the replays, then the kernel
        x = np.random.default_rng(seed).standard_normal(10)
        _close([jg(x)], [g(x)], np.float64)
    assert all(k.kernel for k in _fusions(jg.lower(x)))


def _profiled_calls(run, inputs):
    """``{function name: calls}`` that one ``run(inputs)`` makes, as cProfile counts them."""
    profile = cProfile.Profile()
    profile.runcall(run, inputs)
    counts = {}
    for (_, _, name), (_, calls, *_) in pstats.Stats(profile).stats.items():
        counts[name] = counts.get(name, 0) + calls
    return counts


@needs_kernels
def test_one_run_of_the_fused_chain_calls_one_kernel_and_no_primitive():
    program = _lowered(autodiff.grad(lambda x: chain(x, anp)), [np.zeros(10)])
    x = np.linspace(-1.0, 1.0, 10)
    before = _profiled_calls(callsite(program).run, [x])
    after = _profiled_calls(callsite(_compiled(program)).run, [x])
    # unfused: sin_backward's and tanh_backward's functions (Python lambdas) 25 times each, tanh's 25 times
    assert before.get("<lambda>") == 50 and before.get("_tanh") == 25
    assert after.get("kernel") == 1 and "<lambda>" not in after and "_tanh" not in after


@needs_kernels
def test_nan_and_inf_propagate_as_in_numpy():
    def f(x):
        y = anp.sqrt(x) * anp.log(x) / x + anp.exp(x) * 0.5 - x ** 2.5
        return y, anp.tanh(y) * anp.cos(x * np.inf), -y / (x - x)

    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1e-310, 2.0, 800.0])
    program = _lowered(f, [x])
    fused = _compiled(program)
    with np.errstate(all="ignore"):
        want, got = replay(program, [x]), replay(fused, [x])
    _close(got, want, np.float64)
    assert np.isnan(got[0][0]) and np.isinf(got[2]).any()


@needs_kernels
def test_float32_stays_float32_with_python_numbers_cast_as_numpy_casts_them():
    f = lambda x: anp.tanh(anp.sin(x) * 0.1 + 1 / 3) * 2.5 - 7  # noqa: E731
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    fused = _compiled(_lowered(f, [x]))
    assert len(_fusions(fused)) == 1
    got = replay(fused, [x])[0]
    assert got.dtype == np.float32
    _close([got], [f(x)], np.float32)


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_transcendental_over_many_elements_is_left_to_numpy(dtype):
    """Over more than VECTOR_MATH_ABOVE elements, tanh (numpy's vectorised loop beats the kernel's libm call)
    splits the run: the arithmetic on either side still fuses.  At the threshold, it fuses with the rest."""
    def f(x):
        return anp.tanh(x * 0.5 + 0.25) * 3.0 - 1.0

    limit = VECTOR_MATH_ABOVE[np.dtype(dtype)]
    for size, names in ((limit, ["fused[5]"]), (limit + 1, ["fused[2]", "tanh", "fused[2]"])):
        x = np.random.default_rng(size).standard_normal(size).astype(dtype)
        program = _lowered(f, [x])
        fused = _compiled(program)
        assert [e.prim.__name__ for e in fused.equations] == names
        _close(replay(fused, [x]), replay(program, [x]), dtype)


@needs_kernels
def test_a_short_run_over_few_elements_is_left_to_numpy(monkeypatch):
    """Over at most SMALL elements a run fuses from MIN_SMALL_RUN equations (a kernel's launch costs more than a
    few numpy calls); over more, from MIN_RUN."""
    monkeypatch.setattr(fusion, "MIN_SMALL_RUN", 4)

    def f(x, n):
        for i in range(n):
            x = x * 1.5 if i % 2 else x + 0.5
        return x

    for size, n, fused in ((fusion.SMALL, 3, False), (fusion.SMALL, 4, True), (fusion.SMALL + 1, 2, True)):
        x = np.random.default_rng(size).standard_normal(size)
        program = _lowered(lambda x, n=n: f(x, n), [x])
        assert bool(_fusions(fuse(program))) == fused, (size, n)
        _close(replay(fuse(program), [x]), replay(program, [x]), np.float64)


@needs_kernels
def test_several_values_leave_a_run_through_items_and_layouts_do_not_matter():
    def f(x):
        a = anp.exp(x) * 2.0
        b = anp.sin(a) + x
        return anp.sum(a, axis=0), anp.matmul(b, np.ones((3, 2))), anp.cos(b) * a

    x = np.random.default_rng(2).standard_normal((4, 3))
    program = _lowered(f, [x])
    fused = _compiled(program)
    assert [e.prim for e in fused.equations].count(ITEM) == 2
    for arg in (x, np.asfortranarray(x), np.random.default_rng(3).standard_normal((3, 4)).T):
        _close(replay(fused, [arg]), replay(program, [arg]), np.float64)


@needs_kernels
def test_a_kernel_refusing_an_operand_gives_way_to_the_replay():
    fused = _compiled(_lowered(lambda x: anp.sin(x) * 2.0 + 1.0, [np.ones(3)]))
    kernel_op = _fusions(fused)[0]
    x32 = np.array([1.0, 2.0, 3.0], np.float32)  # compiled for float64: the kernel raises, the replay runs
    np.testing.assert_array_equal(kernel_op.fun(x32), kernel_op(x32))
    with pytest.raises(ShapeChanged):  # another shape: never read past its end, the replay says what changed
        kernel_op.fun(np.ones(4))
    assert kernel_op.refused == 2


@needs_kernels
def test_one_kernel_serves_a_run_of_one_code_whatever_its_shape_with_as_many_axes():
    def f(x):
        return anp.sin(x) * 2.0 + 1.0

    kernels = {}
    for shape in ((3, 4), (5, 6), (12,), (2, 3, 2)):
        x = np.random.default_rng(len(shape)).standard_normal(shape)
        [op] = _fusions(_compiled(_lowered(f, [x])))
        np.testing.assert_allclose(op.fun(x), np.sin(x) * 2.0 + 1.0, rtol=1e-12)
        assert op.refused == 0
        kernels[shape] = op.kernel
    assert kernels[3, 4] is kernels[5, 6]
    assert len({id(kernels[s]) for s in ((3, 4), (12,), (2, 3, 2))}) == 3


@needs_kernels
def test_an_operand_of_another_layout_runs_the_kernel_on_its_c_ordered_copy():
    """A transpose's view, or a slice with a step, of the traced shape: the kernel runs on a C-ordered copy, as the
    flat loop must read it (its values are those of the array, not of its memory's order)."""
    x = np.random.default_rng(3).standard_normal((4, 6))
    [op] = _fusions(_compiled(_lowered(lambda x, y: anp.sin(x) * y + 1.0, [x, x.copy()])))
    for view in (np.random.default_rng(4).standard_normal((6, 4)).T, np.ones((8, 6))[::2]):
        kept = view.copy()
        got = op.fun(view, x)
        np.testing.assert_allclose(got, np.sin(kept) * x + 1.0, rtol=1e-12)
        np.testing.assert_array_equal(view, kept)  # read, not written
    assert op.refused == 0


@needs_kernels
def test_the_kernel_compiles_only_after_the_program_ran_compile_after_times(monkeypatch):
    monkeypatch.setattr(fused_module, "COMPILE_AFTER", 3)
    f = lambda x: anp.tanh(anp.cos(x) * 0.3 - 0.2) + x  # noqa: E731
    jf = autodiff.jit(f)
    xs = [np.random.default_rng(seed).standard_normal(6) for seed in range(5)]
    np.testing.assert_allclose(jf(xs[0]), f(xs[0]), rtol=1e-12)  # the trace: no program run yet
    kernel_op = _fusions(jf.lower(xs[0]))[0]
    for k, x in enumerate(xs[1:], start=1):
        np.testing.assert_allclose(jf(x), f(x), rtol=1e-12)
        assert (kernel_op.kernel is None) == (k < 3), k
    assert kernel_op.calls == 3


@needs_kernels
def test_outer_transforms_and_second_order_through_compiled_kernels(monkeypatch):
    monkeypatch.setattr(fused_module, "COMPILE_AFTER", 1)

    def f(x):
        return anp.sum(anp.tanh(anp.sin(x) * 0.9 + 0.1) * x)

    jf, x, xs = autodiff.jit(f), np.linspace(-1.0, 1.0, 5), np.random.default_rng(4).standard_normal((3, 5))
    jf(x), jf(x)  # compiled
    for _ in range(2):
        np.testing.assert_allclose(autodiff.grad(jf)(x), autodiff.grad(f)(x), rtol=1e-12)
        np.testing.assert_allclose(autodiff.vmap(jf)(xs), autodiff.vmap(f)(xs), rtol=1e-12)
    assert autodiff.gradcheck(jf, x, order=2)
    jgg = autodiff.jit(autodiff.grad(lambda s: autodiff.grad(lambda t: f(x * t))(s)))
    for s in (np.array(0.5), np.array(1.5), np.array(-2.0)):
        np.testing.assert_allclose(jgg(s), autodiff.grad(lambda s: autodiff.grad(lambda t: f(x * t))(s))(s),
                                   rtol=1e-12)
    jg = autodiff.jit(autodiff.grad(f))
    for seed in range(3):
        y = np.random.default_rng(seed).standard_normal(5)
        np.testing.assert_allclose(jg(y), autodiff.grad(f)(y), rtol=1e-12)
    assert _fusions(jg.lower(x)) and all(k.kernel for k in _fusions(jg.lower(x)))


@needs_kernels
def test_a_shape_that_depends_on_the_data_still_runs_the_function_itself(monkeypatch):
    monkeypatch.setattr(fused_module, "COMPILE_AFTER", 1)

    def f(x):
        kept = x[x > 0]
        return anp.sum(anp.sin(kept) * 2.0 + 1.0) / kept.shape[0]

    jf = autodiff.jit(f)
    two, one = np.array([1.0, 2.0, -1.0]), np.array([1.0, -2.0, -1.0])
    assert jf(two) == f(two) and np.isclose(jf(two), f(two), rtol=1e-12)
    with pytest.warns(JitFallbackWarning, match="depends on the data"):
        assert jf(one) == f(one)
    assert jf.cache_info().eager_calls == 1


def test_fusion_is_off_when_numba_is(monkeypatch):
    program = _lowered(lambda x: anp.sin(x) * 2.0 + 1.0, [np.ones(3)])
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    assert fuse(program) is program
    program = autodiff.jit(lambda x: anp.sin(x) * 2.0 + 1.0, passes=("dce", "fuse")).lower(np.ones(3))
    assert [e.prim.__name__ for e in program.equations] == ["sin", "multiply", "add"]


@needs_kernels
def test_numba_switched_off_after_fusing_leaves_the_replay_silently(monkeypatch):
    fused = fuse(_lowered(lambda x: anp.cos(x) * 3.0 - 1.0, [np.ones(4)]))
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    monkeypatch.setattr(fused_module, "_kernels", {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _fusions(fused)[0].compile() is False
        np.testing.assert_array_equal(replay(fused, [np.arange(4.0)])[0], np.cos(np.arange(4.0)) * 3.0 - 1.0)


@needs_kernels
def test_a_kernel_that_cannot_compile_warns_once_and_the_replay_runs(monkeypatch):
    def broken(source):
        raise OSError("no room")

    monkeypatch.setattr(fused_module, "_define", broken)
    monkeypatch.setattr(fused_module, "_kernels", {})
    monkeypatch.setattr(fused_module, "_warned", [])
    programs = [fuse(_lowered(f, [np.ones(4)])) for f in (lambda x: anp.cos(x) * 3.0, lambda x: anp.exp(x) - 2.0)]
    with pytest.warns(RuntimeWarning, match="could not compile a fused kernel") as caught:
        for p in programs:
            assert _fusions(p)[0].compile() is False
    assert len(caught) == 1
    np.testing.assert_array_equal(replay(programs[1], [np.arange(4.0)])[0], np.exp(np.arange(4.0)) - 2.0)


@needs_kernels
def test_a_read_only_cache_folder_compiles_in_memory(monkeypatch):
    monkeypatch.setattr(fused_module, "_cache_folder", lambda: None)
    monkeypatch.setattr(fused_module, "_kernels", {})
    fused = fuse(_lowered(lambda x: anp.sin(x) * 5.0 - x, [np.ones(4)]))
    function, cached = fused_module._define(_fusions(fused)[0].source)
    assert cached is False and function.__name__ == "kernel"
    assert _fusions(fused)[0].compile()
    x = np.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(replay(fused, [x])[0], np.sin(x) * 5.0 - x, rtol=1e-12)


@pytest.mark.skipif(FUSING, reason="checks the reference mode, where fusion and the generated function are off")
def test_under_the_reference_jit_runs_the_plain_program():
    jf = autodiff.jit(autodiff.grad(lambda x: chain(x, anp)))
    program = jf.lower(np.zeros(10))
    assert len(program.equations) == 175 and type(program).__name__ == "Program"


@needs_kernels
def test_random_programs_run_on_their_kernels_as_eager_code_runs(monkeypatch):
    """The differential fuzzer's programs under jit (tests/jit/test_fuzz_jit.py), each fused run compiled at its
    first replay and each reduction along short rows on its loop (autodiff/_accel/rows.py) from its first call:
    kernels cut from programs no one wrote (a run's values read after it, several outputs, planned into dying
    operands) against eager code, within jit's promise."""
    from tests.jit.test_fuzz_jit import fuzz_against_eager

    launched, launch = [], Fused._launch
    monkeypatch.setattr(fused_module, "COMPILE_AFTER", 0)
    monkeypatch.setattr(Fused, "_launch", lambda self, *args: launched.append(self) or launch(self, *args))
    rowwise, by_rows = [], rows._rowwise
    monkeypatch.setattr(rows, "COMPILE_AFTER", 0)
    monkeypatch.setattr(rows, "_rowwise", lambda *args: rowwise.append(args[0]) or by_rows(*args))
    fuzz_against_eager(np.float64, 40)
    assert len(launched) >= 100  # the programs do run kernels (a run of 2 fuses here: the autouse fixture)
    assert len(rowwise) >= 10, len(rowwise)  # and row loops (sum, softmax and log_softmax along the last axis)
