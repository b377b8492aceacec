"""Each acceleration of this half of issue 17 against its reference twin, called directly: values, gradients
and second order are the same with and without it.  (Under ``AUTODIFF_REFERENCE=1`` none is installed, and
each test still compares the acceleration, called by hand, with the reference.)

- ``autodiff._accel.record``: the unrolled one-traced-argument case of ``_primitive._record``;
- ``autodiff._accel.reductions``: known reductions over a model, fused and threaded (``total``'s fast path),
  and the kernel forwards of sumsq and abssum;
- ``traversal._accel.collect``: ``total``'s tight-loop collectors and compiled readers;
- ``autodiff._accel.batching``: vmap's batched outer products (per-example weight gradients) in pooled buffers;
- ``autodiff._accel.elementwise``: float64 ``tanh`` on a numba kernel.
"""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import _primitive, grad
from autodiff._accel import batching as accel_batching
from autodiff._accel import elementwise as accel_elementwise
from autodiff._accel import record as accel_record
from autodiff._accel import reductions as accel_reductions
from autodiff._hooks import REFERENCE, hooks, slots
from autodiff.numpy import _batch_ops, _reductions
from tests.gallery import gallery
from traversal import _collect, fmap, total, trainables
from traversal._accel import collect as accel_collect

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {k: m for k, m in gallery().items() if k not in ("one_array_in_two_arguments", "empty")}


def _same_tree(a, b, rtol=1e-12):
    fa, fb = trainables(a), trainables(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        assert x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-12)


def test_every_slot_holds_its_reference_exactly_when_its_acceleration_is_off():
    import layers  # noqa: F401  (each package fills its slots when imported)
    import optimisers  # noqa: F401

    filled = {name: a for a in autodiff.accelerations().values() for name in a.slots}
    assert set(filled) == set(slots()), "a slot no acceleration fills, or a fill of an undeclared slot"
    for name, (reference, what, current) in slots().items():
        assert what, name
        assert (current is reference) == (not filled[name].on), name
        if REFERENCE:
            assert current is reference, name


def test_the_switch_installs_exactly_when_not_reference():
    assert (hooks.record is accel_record.record_fast) != REFERENCE
    assert (hooks.parameters is accel_collect.parameters) != REFERENCE
    assert (hooks.sumsq64 is accel_reductions.sumsq64) != REFERENCE
    assert (accel_reductions.lookup(autodiff.sumsq) is None) == REFERENCE
    assert (hooks.batched_outer is accel_batching.batched_outer_fast) != REFERENCE
    tanh_kernel_pays = not accel_elementwise.numpy_tanh_is_vectorised()  # numpy's own is faster on AVX-512
    assert (hooks.tanh is accel_elementwise.tanh) == (not REFERENCE and tanh_kernel_pays)


# --- the unrolled recording --------------------------------------------------------------------------------


def _chain(x):
    y = anp.sin(x) * 0.5 + x * 2
    return anp.sum(anp.tanh(y) ** 2) + anp.sum(y * x)


@pytest.mark.parametrize("recorder", ["reference", "accelerated"])
def test_recording_with_and_without_the_unrolled_case(monkeypatch, recorder):
    x = np.array([0.3, -1.2, 0.7])
    monkeypatch.setattr(hooks, "record", _primitive._record)
    want = (_chain(x), grad(_chain)(x), grad(lambda x: anp.sum(grad(_chain)(x) ** 2))(x))
    monkeypatch.setattr(hooks, "record", accel_record.record_fast if recorder == "accelerated"
                        else _primitive._record)
    got = (_chain(x), grad(_chain)(x), grad(lambda x: anp.sum(grad(_chain)(x) ** 2))(x))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert autodiff.gradcheck(_chain, x, order=2)


def test_the_unrolled_case_leaves_residual_primitives_to_the_reference():
    from autodiff.extend import defvjp_fwd_bwd, primitive

    calls = []
    twice = primitive(lambda x: 2 * x, "twice_res")
    defvjp_fwd_bwd(twice, lambda x: (calls.append(1) or 2 * x, 2.0), lambda g, two, ans, x: (g * two,))
    assert grad(lambda x: accel_record.record_fast(twice, _tape_of(x), (x,), {}) * 1.0)(3.0) == 2.0
    assert calls == [1]


def _tape_of(x):
    return x.tape


# --- known reductions: fused path vs reference (generic) path ------------------------------------------------

REDUCTIONS = {"sum": anp.sum, "norm": anp.linalg.norm, "sumsq": autodiff.sumsq, "abssum": autodiff.abssum,
              "maxabs": autodiff.maxabs, "scaled": autodiff.scaled(0.5, autodiff.sumsq)}


PAIRS = [(r, m) for r in sorted(REDUCTIONS) for m in sorted(MODELS)
         if (r, m) != ("sum", "complex")]  # a complex sum is no real scalar: grad refuses it either way


def _pair(name, model_name):
    f, model = REDUCTIONS[name], MODELS[model_name]
    if name == "norm" and any(not np.any(p) for p in trainables(model)):
        model = fmap(lambda p: p + 0.25, model)  # away from the zero vector, where a norm is not differentiable
    return f, model


def _three(f, model):
    """``total(f, m)``, its gradient, and the gradient of the squared gradient norm (order 2); each gradient as
    its list of arrays (``trainables``), so a result can cross to another process."""
    value = total(f, model)
    g = grad(lambda m: total(f, m))(model)
    g2 = grad(lambda m: total(autodiff.sumsq, grad(lambda q: total(f, q))(m)))(model)
    return value, trainables(g), trainables(g2)


def _save_fused(path):
    """A fresh default-mode process's work for :func:`fused_elsewhere`: every pair's three results on the fused
    path, which it checks it has (so the comparison cannot be hollow)."""
    assert all(accel_reductions.lookup(f) is not None for f in REDUCTIONS.values()), "no fused path here"
    with open(path, "wb") as out:
        pickle.dump({pair: _three(*_pair(*pair)) for pair in PAIRS}, out)


@pytest.fixture(scope="module")
def fused_elsewhere(tmp_path_factory):
    """``None`` in default mode, where both paths run in this process.  Under ``AUTODIFF_REFERENCE=1`` this
    process has no fused path, so a fresh process without the variable computes the fused side of every pair."""
    if not REFERENCE:
        return None
    path = tmp_path_factory.mktemp("fused") / "fused.pkl"
    env = {k: v for k, v in os.environ.items() if k not in ("AUTODIFF_REFERENCE", "AUTODIFF_ACCEL_OFF")}
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    code = f"import tests.accel.test_accelerations as t; t._save_fused({str(path)!r})"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(path, "rb") as saved:
        return pickle.load(saved)


@pytest.mark.parametrize(("name", "model_name"), PAIRS)
def test_known_reductions_fused_equal_the_reference(monkeypatch, fused_elsewhere, name, model_name):
    """The fused path against total's generic one: both here in default mode (the generic one by switching the
    lookup off), or the fused one from a default-mode process under ``AUTODIFF_REFERENCE=1``."""
    f, model = _pair(name, model_name)
    if fused_elsewhere is None:
        fused = _three(f, model)
        monkeypatch.setattr(accel_reductions, "lookup", lambda f: None)  # the reference: total's generic path
    else:
        fused = fused_elsewhere[(name, model_name)]
    reference = _three(f, model)
    np.testing.assert_allclose(fused[0], reference[0], rtol=1e-6)
    assert len(reference[1]) > 0  # a gradient to compare (the second order of a sum has none: it is linear)
    for got, want in zip(fused[1:], reference[1:]):
        assert len(got) == len(want)
        for x, y in zip(got, want):
            assert x.dtype == y.dtype
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", ["sumsq", "abssum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int64])
def test_kernel_forwards_equal_the_numpy_reference(name, dtype):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(50) * 3).astype(dtype) if dtype != np.complex128 else \
        rng.standard_normal(50) + 1j * rng.standard_normal(50)
    reference = getattr(_reductions, f"_{name}64")(x)
    got = getattr(accel_reductions, f"{name}64")(x)
    assert type(got) is type(reference) is float
    np.testing.assert_allclose(got, reference, rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_the_fused_pullback_can_run_twice_and_scales_by_g():
    rng = np.random.default_rng(9)
    model = {"a": rng.standard_normal(4), "b": rng.standard_normal((2, 3))}
    _, pullback = autodiff.vjp(lambda m: total(autodiff.sumsq, m), model)
    first, second = pullback(1.0)[0], pullback(3.0)[0]
    for k in model:
        np.testing.assert_allclose(first[k], 2 * model[k], rtol=1e-12)
        np.testing.assert_allclose(second[k], 6 * model[k], rtol=1e-12)


def _inline_cases():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(4), rng.standard_normal((2, 3)).astype(np.float32)
    return {"all traced": (lambda m: m, {"a": a, "b": b.astype(np.float64)}),
            "a plain array first": (lambda m: {"c": np.ones(2), **m}, {"a": a}),
            "float32 and float64": (lambda m: m, {"a": a, "b": b})}


@pytest.mark.parametrize("case", sorted(_inline_cases()))
@pytest.mark.parametrize("name", ["norm", "sumsq", "scaled"])
def test_the_known_total_recorded_inline_equals_the_primitive(monkeypatch, name, case):
    """``_record_known`` writes the entry and residuals the primitive would: same value, same tape entry (its
    parents and positions), same gradient at g = 2, same second order."""
    f, (wrap, model) = REDUCTIONS[name], _inline_cases()[case]

    def run():
        tapes = []
        value, pullback = autodiff.vjp(lambda m: _seen(tapes, total(f, wrap(m))), model)
        entry = tapes[0].tape.entries[tapes[0].index]
        g2 = grad(lambda m: total(autodiff.sumsq, grad(lambda q: total(f, wrap(q)))(m)))(model)
        return value, entry[:3], pullback(2.0)[0], g2

    inline = run()
    monkeypatch.setattr(accel_reductions, "_record_known", lambda r, init, xs: accel_reductions._known_total(
        r, init, *xs))
    primitive_path = run()
    assert inline[0] == primitive_path[0] and inline[1][0] is primitive_path[1][0]
    assert (inline[1][0] is accel_reductions._known_total) != REFERENCE  # the fused entry, unless switched off
    assert list(inline[1][1]) == list(primitive_path[1][1]) and list(inline[1][2]) == list(primitive_path[1][2])
    for got, want in zip(inline[2:], primitive_path[2:]):
        _same_tree(got, want, rtol=1e-12)


def _seen(tapes, out):
    tapes.append(out)
    return out


# --- collectors: tight loops and compiled readers vs the walks ----------------------------------------------


@pytest.mark.parametrize("model_name", sorted(gallery()))
def test_fast_collectors_equal_the_walks(model_name):
    model = gallery()[model_name]
    for _ in range(3):  # the third call reads through a compiled reader where one applies
        fast, walked = accel_collect.parameters(model), _collect.reference_parameters(model)
        assert len(fast) == len(walked) and all(a is b for a, b in zip(fast, walked))
    if model_name in ("empty", "one_array_in_two_arguments"):
        return
    grads = grad(lambda m: total(lambda p: anp.sum(anp.real(anp.sin(p) * p)), m))(model)
    fast = accel_collect.parameter_pairs(model, grads)
    walked = _collect.reference_parameter_pairs(model, grads)
    assert [id(x) for x, _ in fast] == [id(x) for x, _ in walked]
    for (_, a), (_, b) in zip(fast, walked):
        np.testing.assert_array_equal(a, b)


def test_fast_collectors_with_a_match_equal_the_walks():
    from tests.gallery import Dense

    model = gallery()["nested"]
    model["top"] = np.ones(3)
    for match in (lambda n: isinstance(n, Dense), lambda n: getattr(n, "ndim", 0) == 1):
        fast, walked = accel_collect.parameters(model, match), _collect.reference_parameters(model, match)
        assert [id(x) for x in fast] == [id(x) for x in walked] and fast
        grads = grad(lambda m: total(autodiff.sumsq, m))(model)
        assert [id(x) for x, _ in accel_collect.parameter_pairs(model, grads, match)] == \
            [id(x) for x, _ in _collect.reference_parameter_pairs(model, grads, match)]


# --- batched outer products: a pooled buffer on two threads vs the broadcast multiply ----------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_pooled_batched_outer_product_equals_the_multiply_and_is_not_reused_while_held(dtype):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((16, 400, 1)).astype(dtype), rng.standard_normal((16, 1, 200)).astype(dtype)
    first = accel_batching.batched_outer_fast(x, y)  # 10 MB (float64): from the pool, on two threads
    second = accel_batching.batched_outer_fast(2 * x, y)
    np.testing.assert_array_equal(first, x * y)  # held, so the second product went elsewhere
    np.testing.assert_array_equal(second, 2 * x * y)
    assert first.dtype == second.dtype == dtype


@pytest.mark.parametrize("outer", ["reference", "accelerated"])
def test_per_example_weight_gradients_with_and_without_the_pooled_outer_product(monkeypatch, outer):
    """vmap(grad) of a dense layer (its weight gradient is the batched outer product), and second order."""
    rng = np.random.default_rng(4)
    w, xs = rng.standard_normal((30, 40)), rng.standard_normal((6, 40))

    def loss(w, x):
        return anp.sum(anp.tanh(x[None] @ w.T) ** 2)

    def per_example(w):
        return autodiff.vmap(grad(loss), in_axes=(None, 0))(w, xs)

    monkeypatch.setattr(hooks, "batched_outer", _batch_ops._batched_outer)
    want = (per_example(w), grad(lambda w: anp.sum(per_example(w) ** 2))(w))
    if outer == "accelerated":
        monkeypatch.setattr(hooks, "batched_outer", accel_batching.batched_outer_fast)
    got = (per_example(w), grad(lambda w: anp.sum(per_example(w) ** 2))(w))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(got[0], [grad(loss)(w, x) for x in xs], rtol=1e-12)


# --- float64 tanh on a kernel ------------------------------------------------------------------------------


def _tanh_inputs():
    """Every regime of the kernel: both branches and their boundary (|x| = 0.55), signed zeros, subnormals,
    huge values, infinities and NaN, a Fortran-ordered and a strided array, beside standard normal values."""
    rng = np.random.default_rng(0)
    edges = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e-8, -1e-8, 0.55, -0.55, np.nextafter(0.55, 0), 0.549999,
                      0.550001, 1.0, 19.0, 20.0, -25.0, 710.0, -1e308, np.inf, -np.inf, np.nan])
    normal = rng.standard_normal(3000) * np.repeat([0.01, 0.3, 1.0, 3.0, 30.0], 600)
    return {"edges": np.concatenate([edges] * 13), "normal": normal.reshape(60, 50),
            "fortran": np.asfortranarray(normal.reshape(60, 50)), "strided": normal[::3]}


@pytest.mark.parametrize("case", list(_tanh_inputs()))
def test_the_tanh_kernel_equals_numpy_to_an_ulp_or_two(case):
    from autodiff._accel import kernels as _kernels

    if _kernels.load_now("tanh_into") is None:
        pytest.skip("numba kernels are off (AUTODIFF_ACCEL_OFF=kernels, NUMBA_DISABLE_JIT=1 or AUTODIFF_REFERENCE=1)")
    x = _tanh_inputs()[case]
    got, want = accel_elementwise.tanh(x), np.tanh(x)
    assert got.shape == want.shape and got.dtype == want.dtype and x.size >= accel_elementwise.MIN_SIZE
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0 stays -0.0
    ulps = np.abs(got - want) / np.spacing(np.maximum(np.abs(want), np.finfo(np.float64).tiny))
    assert np.nanmax(ulps) <= 2, float(np.nanmax(ulps))


@pytest.mark.parametrize("x", [np.ones(3), np.ones(300, np.float32), np.ones(300) + 0j, np.float64(2.0)],
                         ids=["small", "float32", "complex", "scalar"])
def test_tanh_leaves_what_the_kernel_does_not_take_to_numpy(x):
    got = accel_elementwise.tanh(x)
    assert type(got) is type(np.tanh(x)) and np.result_type(got) == np.result_type(np.tanh(x))
    np.testing.assert_array_equal(got, np.tanh(x))
    out = np.empty(400)
    assert accel_elementwise.tanh(np.ones(400), out=out) is out  # out= is numpy's


def test_tanh_through_the_kernel_differentiates_as_numpy_tanh_to_second_order(monkeypatch):
    x = np.linspace(-2.0, 2.0, 600)
    f = lambda x: anp.sum(anp.tanh(x) ** 3)  # noqa: E731
    monkeypatch.setattr(anp.tanh, "fun", accel_elementwise.tanh)
    fast = (f(x), grad(f)(x), grad(lambda x: anp.sum(grad(f)(x) ** 2))(x))
    monkeypatch.setattr(anp.tanh, "fun", np.tanh)
    plain = (f(x), grad(f)(x), grad(lambda x: anp.sum(grad(f)(x) ** 2))(x))
    for a, b in zip(fast, plain):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)
