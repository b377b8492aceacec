"""Buffer planning of fused equations (``autodiff._accel.planning.FusedInto``) against the unplanned program.

A fused kernel reads element ``i`` of every operand before it writes element ``i`` of any output, so writing an
output into an operand that dies there gives bitwise the values of the same program without the plan pass.  That
is checked in every tier a fused equation runs in (the body's replay before the kernel compiles, the kernel, a
call the kernel refuses, numba switched off), by the interpreter and by the call-site form, in float32 and
float64, with one output and with several (taken apart by ``item``), and with an output written into an operand
that a later line of the kernel reads.  The callers' inputs are left as they were.  Then what must never be
written (an input, an output, a value a reshape views), and outer transforms, which go through the primitives.
Fused kernels exist only when numba runs: under ``AUTODIFF_REFERENCE=1`` these tests are skipped.
"""

import re

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff._accel import fused as fused_module
from autodiff._accel import fusion
from autodiff._accel.fused import Fused
from autodiff._accel.fusion import ITEM, fuse
from autodiff._accel.planning import FusedInto, plan_buffers
from autodiff._hooks import enabled
from autodiff._jit.passes import PASSES
from autodiff._jit.passes.codegen import callsite
from autodiff._jit.replay import replay
from tests.accel.test_jit_codegen import _lowered, _same_bits

FUSING = enabled("jit_fusion") and enabled("kernels")
needs_kernels = pytest.mark.skipif(not FUSING, reason="fusion is off (AUTODIFF_REFERENCE=1, or numba is off)")
pytestmark = needs_kernels

UNPLANNED = tuple(name for name in PASSES if name != "plan")


@pytest.fixture(autouse=True)
def _short_runs_fuse(monkeypatch):
    """Every run of MIN_RUN fuses here, on small arrays too (as in test_jit_fusion.py)."""
    monkeypatch.setattr(fusion, "MIN_SMALL_RUN", fusion.MIN_RUN)


def _weights(dtype, *shapes):
    rng = np.random.default_rng(sum(map(sum, shapes)))
    return [rng.standard_normal(shape).astype(dtype) for shape in shapes]


def _into(program):
    return [eq for eq in program.equations if type(eq.prim) is FusedInto]


def _kernels(program):
    """The program's kernels: its fused equations', and the in-place ones of its planned fused equations."""
    return [eq.prim if type(eq.prim) is Fused else eq.prim.in_place for eq in program.equations
            if type(eq.prim) in (Fused, FusedInto)]


def _agrees(program, planned, inputs):
    """Both programs' leaves, by the interpreter and the call-site form, bitwise; the inputs left as they were."""
    before = [np.array(a, copy=True) for a in inputs]
    with np.errstate(all="ignore"):
        want = replay(program, inputs)
        _same_bits(replay(planned, inputs), want)
        _same_bits(callsite(planned).run(inputs), want)
    _same_bits(inputs, before)
    return want


def _every_tier(f, inputs, monkeypatch):
    """``(fused program, planned program)`` for ``f``, after checking them bitwise alike in every tier (the
    inputs cast to the other dtype make every kernel refuse its operands)."""
    program = fuse(_lowered(f, inputs))
    planned = plan_buffers(program)
    assert _into(planned), planned
    monkeypatch.setattr(fused_module, "COMPILE_AFTER", 10**9)
    _agrees(program, planned, inputs)  # the body's replay
    kernels = _kernels(program) + _kernels(planned)
    assert all(k.kernel is None for k in kernels)
    for k in kernels:
        assert k.compile(), k.source
    _agrees(program, planned, inputs)  # the kernels: fresh outputs, and written in place
    assert not any(k.refused for k in kernels)
    other = [a.astype(np.float32 if a.dtype == np.float64 else np.float64) for a in inputs]
    _agrees(program, planned, other)  # the kernel refuses another dtype: the replay
    assert all(k.refused for k in kernels)
    with monkeypatch.context() as m:  # numba off (fuse() would leave the program unfused): the replay runs
        m.setenv("NUMBA_DISABLE_JIT", "1")
        m.setattr(fused_module, "_kernels", {})
        off = fusion.fuse_runs(_lowered(f, inputs))
        assert all(k.compile() is False for k in _kernels(off))
        _agrees(off, plan_buffers(off), inputs)
    return program, planned


def _one_output(x, w):
    return anp.tanh(anp.sin(x @ w) * 0.9 + 0.1) * 2.0  # x @ w: fresh, read for the last time in the run


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_one_output_written_into_a_dying_operand_in_every_tier(dtype, monkeypatch):
    program, planned = _every_tier(_one_output, _weights(dtype, (3, 4), (4, 5)), monkeypatch)
    [eq] = _into(planned)
    assert re.fullmatch(r"fused\[\d+\]\[into 0\]", eq.prim.__name__)
    assert f"{eq.prim.__name__}(%" in str(planned)  # the listing says so


def _two_outputs(x, w1, w2):
    a, b = x @ w1, x @ w2  # fresh arrays, read for the last time in the run
    u = a * 2.0 + b
    v = anp.sin(u) * b
    return anp.sum(u @ w2.T, axis=0), v  # u read after the run: an item; v an output: an item


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_several_outputs_each_written_into_its_own_operand(dtype, monkeypatch):
    x, w1, w2 = inputs = _weights(dtype, (3, 4), (4, 5), (4, 5))
    program, planned = _every_tier(_two_outputs, inputs, monkeypatch)
    [eq] = _into(planned)
    assert eq.prim.positions == (0, 1) and eq.prim.__name__.endswith("[into 0, 1]")
    assert [e.prim for e in planned.equations].count(ITEM) == 2
    a, b = x @ w1, x @ w2
    want = eq.prim.fused.fun(a, b)  # the kernel (compiled above), into fresh arrays
    outs = eq.prim.fun(a, b)  # the in-place kernel writing u into a, v into b
    assert outs[0] is a and outs[1] is b
    _same_bits(list(outs), list(want))


def _read_after_written(x, w):
    a = x @ w  # dies in the run, at its fourth line: after the line of y, the output written into it
    y = anp.cos(x) * 2.0 + 1.0
    return y, y * a - 0.5


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_output_written_into_an_operand_that_a_later_line_reads(dtype, monkeypatch):
    program, planned = _every_tier(_read_after_written, _weights(dtype, (3, 4), (4, 4)), monkeypatch)
    [eq] = _into(planned)
    body = eq.prim.fused.body
    written = eq.prim.positions[0]  # output 0 (y) goes into an operand...
    reads = [k for k, e in enumerate(body.equations) if any(getattr(a, "ref", None) == written for a in e.operands)]
    makes = [k for k, e in enumerate(body.equations) if e.out == body.outputs[0].ref]
    assert reads and makes and max(reads) > makes[0]  # ...that a line after y's reads


def test_every_kernel_reads_all_its_inputs_before_it_writes_an_output():
    """The order that makes writing into an operand safe, in each kernel above, fresh outputs or in place; an
    output written in place goes through its operand's own flat view and is returned as that operand, never a
    second array over the same memory."""
    x, w1, w2 = _weights(np.float64, (3, 4), (4, 4), (4, 4))
    for f, inputs in ((_one_output, [x, w1]), (_two_outputs, [x, w1, w2]), (_read_after_written, [x, w1])):
        program = fuse(_lowered(f, inputs))
        for k in _kernels(program) + _kernels(plan_buffers(program)):
            _reads_before_it_writes(k)


def _reads_before_it_writes(k):
    lines = k.source.splitlines()
    reads = [n for n, line in enumerate(lines) if re.search(r"= x\d+\[i\]$", line)]
    writes = [n for n, line in enumerate(lines) if re.search(r"\b[xy]\d+\[i\] =", line)]
    assert len(reads) == k.body.n_inputs and max(reads) < min(writes), k.source
    assert len(writes) == len(k.body.outputs), k.source
    _outputs_go_through_their_arrays(k)


def _outputs_go_through_their_arrays(k):
    params = re.search(r"def kernel\((.*)\)", k.source).group(1).split(", ")
    assert params == [f"a{i}" for i in range(k.body.n_inputs)], k.source
    returned = re.search(r"return (.*)", k.source).group(1).split(", ")
    for j, p in enumerate(k.into):
        view, array = (f"y{j}", f"o{j}") if p is None else (f"x{p}", f"a{p}")
        assert f"{view}[i] = " in k.source and returned[j] == array, k.source


def test_an_input_an_output_and_a_viewed_value_are_never_written():
    x, w1, w2, w3 = inputs = _weights(np.float64, (3, 4), (4, 4), (4, 4), (4, 4))

    def f(x, w1, w2, w3):
        a = x @ w1  # fresh, but a reshape views it
        view = anp.reshape(a, (4, 3))
        b = x @ w2  # fresh, but an output
        c = x @ w3  # fresh, but read again after the run
        return view, b, anp.sin(a * 2.0 + b) * c - x, c @ w3  # x: an input

    program = fuse(_lowered(f, inputs))
    [run] = _kernels(program)
    assert run.body.n_inputs == 4  # a, b, c and x
    planned = plan_buffers(program)
    assert "into" not in str(planned), planned
    assert run.compile()
    want = _agrees(program, planned, inputs)
    for got, value in zip(want, f(*inputs)):
        np.testing.assert_allclose(got, value, rtol=1e-12)


def test_an_operand_the_kernel_cannot_write_gets_a_fresh_output():
    """Not C-ordered (its flat view would be a copy) or read-only: the kernel writes a fresh array instead."""
    x, w = _weights(np.float64, (3, 4), (4, 5))
    [eq] = _into(plan_buffers(fuse(_lowered(_one_output, [x, w]))))
    assert eq.prim.fused.compile() and eq.prim.in_place.compile()
    readonly = x @ w
    readonly.flags.writeable = False
    for a in (np.asfortranarray(x @ w), readonly):
        kept = a.copy()
        out = eq.prim.fun(a)
        assert out is not a and out.flags.c_contiguous
        _same_bits([a, out], [kept, eq.prim.fused.fun(kept)])  # the kernel into a fresh array


def test_jit_writes_fused_outputs_in_place_across_its_calls(monkeypatch):
    """``jit(f)`` with every pass against ``jit(f)`` without ``plan``: the trace, the replays, then the kernels."""
    monkeypatch.setattr(fused_module, "COMPILE_AFTER", 3)
    w1, w2 = _weights(np.float32, (4, 5), (4, 5))
    f = lambda x: _two_outputs(x, w1, w2)  # noqa: E731 (weights captured: constants of the program)
    planned, unplanned = autodiff.jit(f), autodiff.jit(f, passes=UNPLANNED)
    for seed in range(6):
        x = np.random.default_rng(seed).standard_normal((3, 4)).astype(np.float32)
        kept = x.copy()
        _same_bits(list(planned(x)), list(unplanned(x)))
        _same_bits([x], [kept])
    assert enabled("jit_planning") == bool(_into(planned.lower(x)))
    assert all(k.kernel for k in _kernels(unplanned.lower(x)))
    assert all(eq.prim.in_place.kernel for eq in _into(planned.lower(x)))


def test_traced_operands_go_through_the_primitives():
    """A traced replay of the planned program (an outer transform's) calls the body's primitives: the gradient is
    the unplanned program's, and the operands' values are untouched."""
    x, w = _weights(np.float64, (3, 4), (4, 4))
    program = fuse(_lowered(lambda x: _read_after_written(x, w), [x]))
    planned = plan_buffers(program)
    for k in _kernels(program):
        k.compile()

    def through(p):
        return autodiff.grad(lambda x: sum(anp.sum(leaf ** 2) for leaf in replay(p, [x])))(x)

    np.testing.assert_array_equal(through(planned), through(program))
    jf = autodiff.jit(lambda x: _read_after_written(x, w)[1])
    for _ in range(fused_module.COMPILE_AFTER + 1):
        np.testing.assert_allclose(autodiff.grad(lambda x: anp.sum(jf(x)))(x),
                                   autodiff.grad(lambda x: anp.sum(_read_after_written(x, w)[1]))(x), rtol=1e-12)


def test_a_fused_equation_over_few_elements_writes_in_place_too():
    def f(x):
        return anp.tanh(anp.sin(x @ x) * 0.9 + 0.1) * 2.0

    for n in (2, 64, 65):  # 4 elements, 4096 (SMALL), 4225
        x = _weights(np.float64, (n, n))[0]
        program = fuse(_lowered(f, [x]))
        planned = plan_buffers(program)
        assert _into(planned), planned
        _agrees(program, planned, [x])
