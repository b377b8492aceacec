"""A jitted call an outer transform traces is one primitive to it, whose rules are jitted functions (issue 42).

Every value is checked against the same transform of the function run eagerly, and the gradients against
finite differences (``autodiff.gradcheck``) to order 2; the structure (one tape entry for the call, no second
trace for a second call) is read off ``autodiff.trace`` and ``cache_info``."""

import gc
import weakref

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.extend import defvjp, effectful, primitive

DTYPES = [np.float64, np.float32]


def _x(seed, shape=(3,), dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _f(x):
    return anp.sum(anp.tanh(x) * anp.sin(x) ** 2)


def _close(a, b, dtype=np.float64):
    tol = 1e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _trees_close(a, b, dtype=np.float64):
    la, ta = _flatten(a)
    lb, tb = _flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        if x is None or y is None:
            assert x is None and y is None
        else:
            _close(x, y, dtype)


def _flatten(tree):
    """The leaves of nested dicts, tuples and lists, and the structure as a string (the test's own oracle)."""
    if isinstance(tree, dict):
        parts = [_flatten(tree[k]) for k in sorted(tree)]
        shape = ",".join(f"{k}:{p[1]}" for k, p in zip(sorted(tree), parts))
        return [leaf for p in parts for leaf in p[0]], "{" + shape + "}"
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(v) for v in tree]
        return [leaf for p in parts for leaf in p[0]], "(" + ",".join(p[1] for p in parts) + ")"
    return [tree], "*"


# --- reverse mode --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_of_jit_matches_eager_and_finite_differences(dtype):
    jf = autodiff.jit(_f)
    x = _x(0, dtype=dtype)
    g = autodiff.grad(jf)(x)
    assert g.dtype == dtype
    _close(g, autodiff.grad(_f)(x), dtype)
    assert autodiff.gradcheck(jf, x, order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_order_through_jit(dtype):
    jf = autodiff.jit(_f)
    x, v = _x(1, dtype=dtype), _x(2, dtype=dtype)
    s = np.asarray(1.3, dtype)
    _close(autodiff.grad(autodiff.grad(lambda s: jf(x * s)))(s), autodiff.grad(autodiff.grad(lambda s: _f(x * s)))(s),
           dtype)
    _close(autodiff.hvp(jf, (x,), (v,)), autodiff.hvp(_f, (x,), (v,)), dtype)
    _close(autodiff.hessian(jf)(x), autodiff.hessian(_f)(x), dtype)


def test_jit_of_grad_of_jit():
    jf = autodiff.jit(_f)
    jg = autodiff.jit(autodiff.grad(jf))
    for seed in (3, 4):  # the second call replays jg's program
        x = _x(seed)
        _close(jg(x), autodiff.grad(_f)(x))
    assert jg.cache_info().traces == 1 and jg.cache_info().hits == 1
    assert autodiff.gradcheck(jg, _x(5), order=2)


def test_the_outer_tape_records_one_entry_for_the_call_and_a_second_call_traces_nothing():
    runs = []  # the Python function runs only while something traces it

    def f(x):
        runs.append(1)
        return _f(x)

    jf = autodiff.jit(f)
    x = _x(6)
    tape = autodiff.trace(jf, x).tapes[0]
    kinds = [entry[0].__name__ for entry in tape.entries if entry[0] is not None]  # None: the input
    eager = [entry[0].__name__ for entry in autodiff.trace(_f, x).tapes[0].entries if entry[0] is not None]
    assert kinds.count("jit_call") == 1 and set(kinds) <= {"jit_call", "tuple_item"}
    assert len(eager) > 3  # what the eager call records: one entry per primitive
    autodiff.grad(jf)(_x(7))  # traces the pullback's program once, on its first call
    traced, info = len(runs), jf.cache_info()
    _close(autodiff.grad(jf)(_x(8)), autodiff.grad(_f)(_x(8)))
    assert len(runs) == traced and jf.cache_info() == info and info.traces == 1


# --- forward mode and batching -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_jvp_of_jit(dtype):
    jf = autodiff.jit(lambda x, y: (anp.sin(x) * y, anp.sum(x ** 2)))
    f = jf.__wrapped__
    x, y, v = _x(8, dtype=dtype), _x(9, dtype=dtype), _x(10, dtype=dtype)
    got, want = autodiff.jvp(jf, (x, y), (v, None)), autodiff.jvp(f, (x, y), (v, None))
    _trees_close(got, want, dtype)


def test_vmap_of_jit_with_a_shared_argument():
    def f(x, w):
        return anp.tanh(anp.dot(w, x)), anp.sum(x * x)

    jf = autodiff.jit(f)
    xs, w = _x(11, (5, 3)), _x(12, (2, 3))
    _trees_close(autodiff.vmap(jf, in_axes=(0, None))(xs, w), autodiff.vmap(f, in_axes=(0, None))(xs, w))
    ws = _x(13, (5, 2, 3))
    _trees_close(autodiff.vmap(jf, in_axes=(None, 0))(xs[0], ws), autodiff.vmap(f, in_axes=(None, 0))(xs[0], ws))


def test_vmap_of_grad_of_jit_and_grad_of_vmap_of_jit():
    def loss(w, x):
        return anp.sum(anp.tanh(w * x) ** 2)

    jl = autodiff.jit(loss)
    w, xs = _x(14), _x(15, (4, 3))
    per_example = autodiff.vmap(autodiff.grad(jl), in_axes=(None, 0))
    _close(per_example(w, xs), autodiff.vmap(autodiff.grad(loss), in_axes=(None, 0))(w, xs))
    total = autodiff.grad(lambda w: anp.sum(autodiff.vmap(jl, in_axes=(None, 0))(w, xs)))
    _close(total(w), autodiff.grad(lambda w: anp.sum(autodiff.vmap(loss, in_axes=(None, 0))(w, xs)))(w))
    assert autodiff.gradcheck(lambda w: anp.sum(autodiff.vmap(jl, in_axes=(None, 0))(w, xs)), w, order=2)


# --- argument and output trees -------------------------------------------------------------------------------------


def test_a_tied_array_gets_the_sum_of_its_cotangents():
    def f(p, pair):
        return anp.sum(p["a"] * pair[0]) + anp.sum(anp.sin(pair[1]))

    jf = autodiff.jit(f)
    a, b = _x(16), _x(17)
    params, pair = {"a": a}, (a, b)  # `a` twice: a tie (design.md section 3)
    got = autodiff.grad(lambda a: jf({"a": a}, (a, b)))(a)
    _close(got, autodiff.grad(lambda a: f({"a": a}, (a, b)))(a))
    _trees_close(autodiff.grad(jf, argnums=(0, 1))(params, pair), autodiff.grad(f, argnums=(0, 1))(params, pair))
    assert autodiff.gradcheck(lambda a: jf({"a": a}, (a, b)), a, order=2)


def test_a_static_argument_and_an_integer_input():
    def f(x, idx, power):
        return anp.sum(anp.take(x, idx) ** power) + anp.sum(idx * x[:2])

    jf = autodiff.jit(f, static_argnums=2)
    x, idx = _x(18), np.array([2, 0])
    for power in (2, 3):
        _close(autodiff.grad(jf)(x, idx, power), autodiff.grad(f)(x, idx, power))
        assert autodiff.gradcheck(lambda x, power=power: jf(x, idx, power), x, order=2)
    assert jf.cache_info().traces == 2  # one per value of the static argument
    idxs = np.array([[0, 1], [2, 2]])
    with pytest.warns(autodiff.JitFallbackWarning):  # take's batching reads batched indices: that rule runs eagerly
        got = autodiff.vmap(jf, in_axes=(None, 0, None))(x, idxs, 2)
    _close(got, autodiff.vmap(f, in_axes=(None, 0, None))(x, idxs, 2))


def test_an_output_tree_with_none_and_constant_leaves():
    constant = np.arange(3.0)

    def f(x):
        return {"y": anp.sin(x) * 2.0, "none": None, "two": 2.0, "c": constant, "n": anp.sum(x)}

    jf = autodiff.jit(f)
    x, v = _x(19), _x(20)
    out, pullback = autodiff.vjp(jf, x)
    _trees_close(out, f(x))
    ct = {"y": v, "none": None, "two": None, "c": None, "n": np.float64(1.5)}
    _close(pullback(ct)[0], autodiff.vjp(f, x)[1](ct)[0])
    _trees_close(autodiff.jvp(jf, (x,), (v,)), autodiff.jvp(f, (x,), (v,)))
    _trees_close(autodiff.vmap(jf)(_x(21, (2, 3))), autodiff.vmap(f)(_x(21, (2, 3))))
    assert autodiff.vjp(jf, x)[0]["c"] is not constant  # a caller changing it must not change the next call's


def test_a_function_closing_over_an_outer_value_still_runs_itself():
    def outer(w):
        jf = autodiff.jit(lambda x: anp.sum(w * anp.sin(x)))
        with pytest.warns(autodiff.JitFallbackWarning, match="closes over"):
            out = jf(w * 2.0)
        assert jf.cache_info().eager_calls == 1
        return out

    w = _x(22)
    _close(autodiff.grad(outer)(w), autodiff.grad(lambda w: anp.sum(w * anp.sin(w * 2.0)))(w))


def test_a_program_that_draws_replays_through_the_primitives():
    """A pullback program recomputing the forward would draw other numbers: such a call is recorded primitive by
    primitive, its draw once.  The oracle: the value and the gradient imply the same noise."""
    rng = np.random.default_rng(0)
    noisy = effectful(primitive(lambda x: x + rng.standard_normal(np.shape(x)), "noisy"))
    defvjp(noisy, lambda g, ans, x: g)
    jf = autodiff.jit(lambda x: anp.sum(x * noisy(x)))
    x = _x(24)
    value, grad = autodiff.value_and_grad(jf)(x)
    noise = grad - 2.0 * x  # d/dx sum(x * (x + n)) = 2x + n
    _close(value, np.sum(x * (x + noise)))
    tape = autodiff.trace(jf, x).tapes[0]
    assert "noisy" in [entry[0].__name__ for entry in tape.entries if entry[0] is not None]


def test_a_jitted_function_and_what_it_holds_go_when_nothing_needs_them():
    """The rule registries hold primitives for ever: the call site must not be held by them, or the jitted
    function, its programs and the arrays they keep read-only would stay for the process's life.  A pullback
    kept after its jitted function is dropped still works (its tape holds the call site)."""
    w = _x(25)
    jf = autodiff.jit(lambda x: anp.sum(w * anp.sin(x)))
    x = _x(26)
    _close(autodiff.grad(jf)(x), w * np.cos(x))
    assert not w.flags.writeable  # captured by the program: read-only while the cache holds it
    pullback = autodiff.vjp(jf, x)[1]
    alive = weakref.ref(jf)
    del jf
    gc.collect()
    _close(pullback(np.float64(2.0))[0], 2.0 * w * np.cos(x))
    del pullback
    gc.collect()
    assert alive() is None and w.flags.writeable


def test_the_pullback_computes_only_the_traced_inputs_cotangents():
    """A data input passed as an argument (not differentiated) gets no cotangent: its pullback never runs."""
    calls = {"w": 0, "x": 0}

    def count(name, value):
        calls[name] += 1
        return value

    scaled = primitive(lambda w, x: w * x, "scaled")
    defvjp(scaled, lambda g, ans, w, x: count("w", g * x), lambda g, ans, w, x: count("x", g * w))
    jf = autodiff.jit(lambda w, x: anp.sum(anp.tanh(scaled(w, x))))
    w, x = _x(30), _x(31)
    for _ in range(2):
        _close(autodiff.grad(jf)(w, x), autodiff.grad(lambda w: anp.sum(anp.tanh(scaled(w, x))))(w))
    assert calls["x"] == 0 and calls["w"] >= 1
    both = autodiff.grad(jf, argnums=(0, 1))(w, x)  # both traced: both cotangents, by a pullback of its own
    _close(both[1], autodiff.grad(lambda x: anp.sum(anp.tanh(scaled(w, x))))(x))
    assert calls["x"] >= 1
