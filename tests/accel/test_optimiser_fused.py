"""``optimisers._fused``: the one-pass kernels of Descent, Momentum, Nesterov, Adam and AdamW give the reference
rules' results to the last bit (float32 and float64, several steps, infinities, NaN, signed zeros, gradients from
1e-30 to 1e30), on one thread or two; they run where they should (large plain arrays, Python-number
hyperparameters) and leave everything else to the reference: small or traced arrays, non-contiguous views, a
numpy-scalar learning rate, a rule chain."""

import numpy as np
import pytest

import autodiff
from autodiff._accel import numba_jit as _jit
from autodiff._accel import parallel as _parallel
from autodiff._hooks import hooks
from optimisers import (
    Adam,
    AdamW,
    ClipNorm,
    Descent,
    Momentum,
    Nesterov,
    OptimiserChain,
    WeightDecay,
    _accel,
    _fused,
    _tree,
    setup,
    update,
)

RULES = [Descent(0.1), Momentum(0.05, 0.9), Nesterov(0.05, 0.9), Adam(0.1), AdamW(0.01, weight_decay=0.1),
         Adam(0.1, beta1=0.0, eps=0.0)]
DTYPES = [np.float32, np.float64]
N = _fused.MIN_SIZE + 3  # large enough for a kernel, and not a multiple of any vector width


def _numba_expected():
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return _jit.use_numba()


def _model(rng, dtype):
    awkward = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e30], dtype)
    big = rng.standard_normal(N).astype(dtype) * 10.0
    big[:len(awkward)] = awkward
    return {"big": big, "matrix": rng.standard_normal((N // 64 + 1, 64)).astype(dtype), "small": np.ones(5, dtype)}


def _gradients(rng, model, count=3):
    def one(x):
        scale = 10.0 ** rng.integers(-30, 30, x.shape)  # tiny to huge, so v overflows and underflows somewhere
        return (rng.standard_normal(x.shape) * scale).astype(x.dtype)

    return [{k: one(x) for k, x in model.items()} for _ in range(count)]


def _steps(monkeypatch, updater, rule, model, gradients):
    monkeypatch.setattr(hooks, "updater", updater)
    state, states, models = setup(rule, model), [], []
    for g in gradients:
        state, model = update(state, model, g)
        states.append(state)
        models.append(model)
    return states, models


def _same_bits(a, b):
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_bits(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same_bits(a[k], b[k])
    elif isinstance(a, _tree.Leaf):
        assert a.rule == b.rule and a.frozen == b.frozen
        _same_bits(a.state, b.state)
    else:
        assert a == b


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered",
                            "ignore:divide by zero encountered")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("rule", RULES, ids=repr)
@pytest.mark.parametrize("threads", [1, 2])
def test_the_kernels_give_the_reference_rules_bits(monkeypatch, rule, dtype, threads):
    rng = np.random.default_rng(0)
    model = _model(rng, dtype)
    gradients = _gradients(rng, model)
    previous = _parallel.set_threads(threads)
    monkeypatch.setattr(_parallel, "PARALLEL_BYTES", 1)  # share even these arrays with the worker thread
    try:
        fast = _steps(monkeypatch, _accel.update_fast, rule, model, gradients)
    finally:
        _parallel.set_threads(previous)
    reference = _steps(monkeypatch, _tree._update, rule, model, gradients)
    _same_bits(fast, reference)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("rule", RULES[:5], ids=repr)
def test_the_kernels_take_large_plain_arrays_and_leave_the_small_ones(rule, dtype):
    model = _model(np.random.default_rng(1), dtype)
    state = setup(rule, model)
    grads = {k: np.ones_like(x) for k, x in model.items()}
    steps = _tree._collect(state, model, grads)
    taken = _fused.take(steps)
    expected = {id(model["big"]), id(model["matrix"])} if _numba_expected() else set()
    assert set(taken) == expected
    for key in taken:
        assert taken[key].shape == steps[key].x.shape and taken[key] is not steps[key].x


@pytest.mark.parametrize("case", ["numpy lr", "traced", "view", "chain", "float16", "numpy count"])
def test_what_the_kernels_leave_to_the_reference(case):
    x = np.linspace(-1.0, 1.0, N)
    rule = Adam(0.1)
    if case == "numpy lr":
        rule = Adam(np.float64(0.1))  # numpy computes a float32 step with it in float64: the reference does
        x = x.astype(np.float32)
    if case == "view":
        x = np.linspace(-1.0, 1.0, 2 * N)[::2]
    if case == "chain":
        rule = OptimiserChain(ClipNorm(1.0), Adam(0.1))
    if case == "float16":
        x = x.astype(np.float16)
    state = setup(rule, {"w": x})
    if case == "numpy count":
        m, v, _ = state["w"].state
        state = {"w": _tree.Leaf(rule, (m, v, np.int64(0)))}
    grads = {"w": np.ones_like(x)}
    if case == "traced":
        seen = []

        def f(w):
            steps = _tree._collect(state, {"w": w}, {"w": w * 1.0})
            seen.append(_fused.take(steps))
            return autodiff.numpy.sum(w)

        autodiff.grad(f)(x)
        assert seen == [{}]
        return
    assert _fused.take(_tree._collect(state, {"w": x}, grads)) == {}
    fast = update(state, {"w": x}, grads)[1]["w"]
    previous = hooks.updater
    try:
        hooks.updater = _tree._update
        reference = update(state, {"w": x}, grads)[1]["w"]
    finally:
        hooks.updater = previous
    assert fast.tobytes() == reference.tobytes()


def test_a_chain_without_a_global_rule_still_steps_as_the_reference_does():
    model = {"w": np.linspace(-1.0, 1.0, N).astype(np.float32)}
    rule = OptimiserChain(WeightDecay(0.1), Descent(0.1))
    grads = {"w": np.ones(N, np.float32)}
    fast = update(setup(rule, model), model, grads)[1]["w"]
    reference = model["w"] - 0.1 * (grads["w"] + 0.1 * model["w"])
    np.testing.assert_array_equal(fast, reference)


def test_recycled_buffers_never_overwrite_arrays_still_held():
    """The kernels write into recycled buffers: one whose earlier result a caller still holds is never reused."""
    rng = np.random.default_rng(2)
    model = {"w": rng.standard_normal(1 << 19).astype(np.float32)}  # 2 MB: pooled
    state = setup(Adam(0.1), model)
    kept = []
    for _ in range(4):
        state, model = update(state, model, {"w": np.ones_like(model["w"])})
        kept.append((model["w"], model["w"].copy(), state["w"].state[0], state["w"].state[0].copy()))
    for array, copy, m, m_copy in kept:
        np.testing.assert_array_equal(array, copy)
        np.testing.assert_array_equal(m, m_copy)
    assert len({id(a) for a, _, m, _ in kept} | {id(m) for _, _, m, _ in kept}) == 2 * len(kept)


def test_a_global_rule_in_one_place_is_refused_as_the_reference_refuses_it():
    """Adam on one large array and a ClipNorm chain on another: the reference refuses the mix (a global rule
    must sit at the same position of every chain); the kernels must not take the Adam step and let the chain
    through alone."""
    model = {"a": np.ones(N, np.float32), "b": np.ones(N, np.float32)}
    state = {"a": setup(Adam(0.1), model["a"]), "b": setup(OptimiserChain(ClipNorm(1.0), Descent(0.1)), model["b"])}
    grads = {k: np.ones(N, np.float32) for k in model}
    with pytest.raises(ValueError, match="same position of the rule chain"):
        update(state, model, grads)
