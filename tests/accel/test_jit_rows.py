"""Reductions along a short last axis (``autodiff._accel.rows``) and the jit forms of ``sum``, ``softmax`` and
``log_softmax`` built on them (``autodiff._accel.specialise``), against numpy and the unspecialised program.

A row's maximum is numpy's, bit for bit, NaN included; a row's sum is summed in another order, so it and what uses
it are held to jit's 1e-12 (float64) and 1e-6 (float32) relative to the result's scale, with NaN and infinity where
numpy has them.  Then which equations get a form and which stay, the tiers (the reference before the kernel
compiles, numpy's reduction with numba off), and derivatives to second order through programs that use the forms.
Under ``AUTODIFF_REFERENCE=1`` the kernels are off: the same checks hold of numpy's reductions.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff._accel import rows
from autodiff._accel.numba_jit import use_numba
from autodiff._accel.specialise import Specialised, specialise_shapes
from autodiff._hooks import enabled
from autodiff._jit.passes.codegen import callsite
from autodiff._jit.replay import replay
from autodiff.nn import functional as F
from tests.accel.test_jit_codegen import _lowered, _same_bits

DTYPES = [np.float32, np.float64]
SHAPES = [(128, 10), (3, 4, 5), (7, 1), (2, rows.ROW_LIMIT), (5,)]


@pytest.fixture
def compiled_at_once(monkeypatch):
    """A form runs its kernel from its first call (else its first COMPILE_AFTER calls run the reference)."""
    monkeypatch.setattr(rows, "COMPILE_AFTER", 0)


def _draw(shape, dtype, seed=0, special=True):
    """Normal values, with (when ``special``) NaN first, inside and last in a row, and infinities in others."""
    x = np.random.default_rng(seed).standard_normal(shape) * 3.0
    flat = x.reshape(-1, shape[-1])
    if special and len(flat) >= 6:
        flat[0, 0] = flat[1, shape[-1] // 2] = flat[4, -1] = np.nan
        flat[2, -1] = np.inf
        flat[3, :] = -np.inf
        flat[5, 0] = -np.inf
    return x.astype(dtype)


def _near(got, want):
    """Within jit's promise of the result's scale, NaN and infinities where ``want`` has them, same dtype."""
    assert got.shape == want.shape and got.dtype == want.dtype
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_array_equal(got[~finite], want[~finite])  # the same infinities; NaN equals NaN here
    rtol = 1e-6 if want.dtype == np.float32 else 1e-12
    scale = float(np.max(np.abs(want[finite]), initial=0.0))
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_rows_sums_and_maxima_are_numpys(shape, dtype):
    x = _draw(shape, dtype)
    with np.errstate(invalid="ignore"):
        _near(rows.row_sums(x), np.sum(x, axis=-1))
    np.testing.assert_array_equal(rows.row_maxes(x), np.max(x, axis=-1), strict=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_of_strided_arrays_are_read_where_they_lie(dtype):
    x = _draw((12, 20), dtype, special=False)
    for view in (x.T, x[::2, 1::3], x[:, ::-1]):
        _near(rows.row_sums(view), np.sum(view, axis=-1))
        np.testing.assert_array_equal(rows.row_maxes(view), np.max(view, axis=-1), strict=True)
        _near(rows.log_softmax_rows(view), F._log_softmax(view, axis=-1))
        _near(rows.softmax_rows(view), F._softmax(view, axis=-1))


@pytest.mark.skipif(not use_numba(), reason="the kernels are off (AUTODIFF_REFERENCE=1): numpy's sum runs")
def test_a_long_float32_row_is_summed_more_closely_than_numpy_needs():
    """float32 rows are summed in float64 and rounded once: the exact sum, rounded."""
    x = np.random.default_rng(1).uniform(0.0, 1.0, (4, rows.ROW_LIMIT)).astype(np.float32)
    exact = np.sum(x.astype(np.float64), axis=1)
    assert np.array_equal(rows.row_sums(x), exact.astype(np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fast, reference", [(rows.log_softmax_rows, F._log_softmax),
                                             (rows.softmax_rows, F._softmax)], ids=["log_softmax", "softmax"])
def test_softmax_and_log_softmax_along_rows_are_the_reference(fast, reference, shape, dtype):
    x = _draw(shape, dtype)
    with np.errstate(invalid="ignore"):
        _near(fast(x), reference(x, axis=-1))
    big = _draw(shape, dtype, seed=2, special=False) + np.asarray(80.0 if dtype == np.float32 else 700.0, dtype)
    _near(fast(big), reference(big, axis=-1))  # exp of the unshifted values would overflow


def _program(f, x):
    return _lowered(f, [x])


def _forms(program):
    return {eq.prim.__name__ for eq in specialise_shapes(program).equations if type(eq.prim) is Specialised}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f, x_shape, name", [
    (lambda x: anp.sum(x * 2.0, axis=1, keepdims=True), (128, 10), "sum[rows]"),
    (lambda x: anp.sum(x * 2.0, axis=-1), (3, 4, 5), "sum[rows]"),
    (lambda x: anp.sum(x * 2.0, axis=(2,)), (3, 4, 5), "sum[rows]"),
    (lambda x: F.log_softmax(x * 2.0, axis=1), (128, 10), "log_softmax[rows]"),
    (lambda x: F.log_softmax(x * 2.0), (5,), "log_softmax[rows]"),
    (lambda x: F.softmax(x * 2.0, axis=-1), (3, 4, 5), "softmax[rows]"),
])
def test_a_reduction_along_short_rows_is_specialised_and_agrees(f, x_shape, name, dtype, compiled_at_once):
    x = _draw(x_shape, dtype, special=False)
    program = _program(f, x)
    assert name in _forms(program)
    specialised = specialise_shapes(program)
    want = replay(program, [x])
    for _ in range(2):
        [got] = callsite(specialised).run([x])
        _near(got, want[0])
    [direct] = [f(x)]  # the eager function itself
    _near(got, np.asarray(direct))


@pytest.mark.parametrize("f, x", [
    (lambda x: anp.sum(x * 2.0, axis=0), np.ones((4, 5))),  # not the last axis
    (lambda x: anp.sum(x * 2.0, axis=(0, 1)), np.ones((4, 5))),  # more than one axis
    (lambda x: anp.sum(x * 2.0, axis=1), np.ones((2, rows.ROW_LIMIT + 1))),  # rows too long to gain
    (lambda x: anp.sum(x * 2.0, axis=-1), np.ones(5)),  # a whole vector: numpy answers a scalar
    (lambda x: anp.sum(x * 2, axis=1), np.ones((4, 5), np.int64)),  # integers
    (lambda x: anp.sum(x * 2.0, axis=1, dtype=np.float64), np.ones((4, 5), np.float32)),  # a dtype asked for
    (lambda x: anp.sum(x * 2.0, axis=1), np.ones((4, 0))),  # empty rows
    (lambda x: F.log_softmax(x * 2.0, axis=0), np.ones((4, 5))),
    (lambda x: F.softmax(x * 2.0, axis=1), np.ones((3, 5), np.complex128)),
])
def test_other_reductions_stay_as_they_are(f, x):
    assert not any(name.endswith("[rows]") for name in _forms(_program(f, x)))


def test_a_form_runs_the_reference_until_its_kernel_compiles():
    x = _draw((128, 10), np.float32, special=False)
    program = specialise_shapes(_program(lambda x: F.log_softmax(x * 2.0, axis=1), x))
    [eq] = [eq for eq in program.equations if type(eq.prim) is Specialised]
    tiered = eq.prim.fun
    want = replay(_program(lambda x: F.log_softmax(x * 2.0, axis=1), x), [x])
    for _ in range(rows.COMPILE_AFTER):
        _same_bits(callsite(program).run([x]), want)  # the reference itself: bitwise
    assert tiered.calls == rows.COMPILE_AFTER
    _near(callsite(program).run([x])[0], want[0])
    assert tiered.calls == rows.COMPILE_AFTER


def test_with_numba_off_the_rows_are_numpys_reductions(monkeypatch):
    for kernel in (rows._SUMS, rows._MAXES):
        monkeypatch.setattr(kernel, "compiled", lambda dtype: None)
    x = _draw((6, 7), np.float64)
    with np.errstate(invalid="ignore"):
        _same_bits([rows.row_sums(x), rows.row_maxes(x)], [np.sum(x, axis=-1), np.max(x, axis=-1)])


def _classifier(params, x, onehot):
    h = anp.tanh(x @ params["w0"] + params["b0"])
    logits = h @ params["w1"] + params["b1"]
    return -anp.sum(anp.sum(onehot * F.log_softmax(logits, axis=1), axis=1, keepdims=True)) + anp.sum(
        F.softmax(logits, axis=-1) ** 2)


def _classifier_inputs(dtype):
    rng = np.random.default_rng(6)
    params = {k: rng.standard_normal(s).astype(dtype) * 0.5
              for k, s in (("w0", (6, 8)), ("b0", (8,)), ("w1", (8, 4)), ("b1", (4,)))}
    x = rng.standard_normal((16, 6)).astype(dtype)
    onehot = np.eye(4, dtype=dtype)[rng.integers(0, 4, 16)]
    v = {k: rng.standard_normal(p.shape).astype(dtype) for k, p in params.items()}
    return params, x, onehot, v


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_order_programs_using_the_forms_agree_with_eager(dtype, compiled_at_once):
    """jit of an HVP and of a gradient penalty's gradient, and grad of a jitted gradient, whose programs sum rows
    and take softmax and log_softmax along them: eager's values within jit's promise, call after call."""
    params, x, onehot, v = _classifier_inputs(dtype)

    def loss(p):
        return _classifier(p, x, onehot)

    def hvp(p):
        return autodiff.hvp(loss, (p,), (v,))[0]

    def penalty(p):
        g = autodiff.grad(loss)(p)
        return loss(p) + sum(anp.sum(t * t) for t in g.values())

    jitted_grad = autodiff.jit(autodiff.grad(loss))

    def outer(p):
        return sum(anp.sum(t * v[k]) for k, t in jitted_grad(p).items())

    cases = [(autodiff.jit(hvp), hvp), (autodiff.jit(autodiff.grad(penalty)), autodiff.grad(penalty)),
             (autodiff.grad(outer), autodiff.grad(lambda p: sum(anp.sum(t * v[k])
                                                                for k, t in autodiff.grad(loss)(p).items())))]
    for jitted, eager in cases:
        want = eager(params)
        for _ in range(3):
            got = jitted(params)
            for k in params:
                _near(np.asarray(got[k]), np.asarray(want[k]))
    if enabled("jit_specialise"):
        program = autodiff.jit(hvp).lower(params)
        names = {eq.prim.__name__ for eq in program.equations}
        assert {"log_softmax[rows]", "softmax[rows]", "sum[rows]"} <= names, names
