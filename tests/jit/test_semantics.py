"""autodiff.jit's model: signatures and retracing, ties, static arguments, the control-flow error, the value-read
fallback, captured arrays, the program as data, and composition with the other transforms.  Every value is
checked against the same function run eagerly (itself checked against finite differences elsewhere) on inputs
other than the ones traced."""

import os
import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
import traversal
from autodiff import ConcretizationError, JitFallbackWarning
from autodiff.extend import defvjp, plain_value, primitive
from tests.modes import REFERENCE
from tests.trees import leaves

HERE = os.path.basename(__file__)


def _x(seed, shape=(3,)):
    return np.random.default_rng(seed).standard_normal(shape)


def _f(x):
    return anp.sum(anp.sin(x) * x ** 2)


# --- retracing exactly on a signature change ------------------------------------------------------------------


def test_a_new_shape_dtype_or_structure_traces_again_and_nothing_else_does():
    jf = autodiff.jit(lambda t: anp.sum(t["a"] * 2.0) + anp.sum(t["b"]))
    calls = [{"a": _x(0), "b": _x(1)}, {"a": _x(2), "b": _x(3)},  # same signature: one trace
             {"a": _x(4, (4,)), "b": _x(5)},  # a new shape
             {"a": _x(6).astype(np.float32), "b": _x(7)},  # a new dtype
             {"b": _x(8), "a": _x(9)}]  # another key order: another tree
    for t in calls:
        np.testing.assert_allclose(jf(t), anp.sum(t["a"] * 2.0) + anp.sum(t["b"]), rtol=1e-6)
    assert jf.cache_info().traces == 4 and jf.cache_info().hits == 1 and jf.cache_info().signatures == 4


def test_two_record_dtypes_of_one_size_are_two_signatures():
    first, swapped = np.dtype([("a", "<f8"), ("b", "<f8")]), np.dtype([("b", "<f8"), ("a", "<f8")])
    assert first.str == swapped.str  # both '|V16': a key by the dtype's str would give them one program
    jf = autodiff.jit(lambda records, x: x * 2.0)
    for dtype in (first, swapped, first):
        assert np.array_equal(jf(np.zeros(2, dtype), _x(0)), _x(0) * 2.0)
    assert jf.cache_info().traces == 2 and jf.cache_info().hits == 1


def test_python_numbers_are_static_by_type_and_value_and_a_0d_array_is_traced():
    jf = autodiff.jit(lambda x, c: x * c)
    x = _x(0).astype(np.float32)
    for c in (2.0, 2.0, 3.0, 2, np.float64(2.0), True, 1, True):  # 2.0 twice: one trace; True and 1 differ
        out = jf(x, c)
        assert out.dtype == (x * c).dtype and np.array_equal(out, x * c)
    assert jf.cache_info().traces == 6
    jf.clear_cache()
    for c in (np.array(2.0), np.array(5.0)):
        assert np.array_equal(jf(x, c), x * c)
    assert jf.cache_info().traces == 1


def test_static_argnums_and_argnames_are_part_of_the_signature_and_may_steer_python():
    def f(x, n, mode="sin"):
        for _ in range(n):
            x = anp.sin(x) if mode == "sin" else anp.cos(x)
        return x

    jf = autodiff.jit(f, static_argnums=1, static_argnames="mode")
    for n, mode in ((1, "sin"), (2, "sin"), (2, "cos"), (2, "cos")):
        assert np.array_equal(jf(_x(n), n, mode=mode), f(_x(n), n, mode=mode))
    assert jf.cache_info().traces == 3


def test_an_unhashable_static_value_is_refused_naming_it():
    def f(x, n):
        return x

    with pytest.raises(TypeError, match=r"jit\(f\): args\[1\] is a list.*static_argnums"):
        autodiff.jit(f, static_argnums=1)(_x(0), [1, 2])
    with pytest.raises(TypeError, match=r"jit\(f\): kwargs\['n'\]\[0\] is a set"):
        autodiff.jit(f)(_x(0), n=[{1}])


def test_jits_own_arguments_are_checked_when_it_is_called_naming_the_mistake():
    def f(x, n, *, mode="sin"):
        return x

    refused = [
        (TypeError, r"jit: expected a function to compile, got int 3", lambda: autodiff.jit(3)),
        (ValueError, r"jit\(f\): static_argnums=\(2,\) names position 2, but f takes 2 positional arguments "
                     r"\(x, n\); positions count from 0", lambda: autodiff.jit(f, static_argnums=2)),
        (ValueError, r"static_argnums=\(-3,\)", lambda: autodiff.jit(f, static_argnums=-3)),
        (ValueError, r"jit\(f\): static_argnames=\('nn',\) names 'nn', but f has no such parameter \(its "
                     r"parameters: x, n, mode\)", lambda: autodiff.jit(f, static_argnames="nn")),
        (TypeError, r"jit\(f\): static_argnums must be an int or a tuple of ints, got 'n'",
         lambda: autodiff.jit(f, static_argnums="n")),
        (TypeError, r"static_argnums must be .*, got True", lambda: autodiff.jit(f, static_argnums=True)),
        (TypeError, r"jit\(f\): static_argnames must be a name or a tuple of names, got 1",
         lambda: autodiff.jit(f, static_argnames=1)),
        (ValueError, r"jit: no pass named 'dse'; the passes are cse, fold", lambda: autodiff.jit(f, passes=("dse",))),
    ]
    for kind, message, make in refused:
        with pytest.raises(kind, match=message):
            make()
    # what is accepted: a negative position, keyword-only and *args/**kwargs functions, one pass by its name
    assert np.array_equal(autodiff.jit(f, static_argnums=-1, static_argnames="mode")(_x(0), 2, mode="cos"), _x(0))
    assert autodiff.jit(lambda *xs: xs[0], static_argnums=3).static_argnums == (3,)
    assert autodiff.jit(lambda x, **kw: x, static_argnames="anything").static_argnames == ("anything",)
    assert autodiff.jit(f, passes="dce").passes == ("dce",)


def test_shape_dependent_python_works():
    def f(x):
        return anp.sum(x[0] * x[-1]) if x.shape[0] > 2 and len(x) == x.shape[0] else anp.sum(x)

    jf = autodiff.jit(f)
    for x in (_x(0, (4, 2)), _x(1, (4, 2)), _x(2, (2, 2))):
        assert np.array_equal(jf(x), f(x))
    assert sum(1 for _ in autodiff.jit(lambda x: list(x))(_x(0, (3, 2)))) == 3  # iteration works too


# --- ties ----------------------------------------------------------------------------------------------------


def test_ties_are_part_of_the_signature_and_a_tied_array_is_one_input():
    def loss(m):
        return anp.sum(m["x"] * m["y"]) + anp.sum(m["x"])

    jg = autodiff.jit(autodiff.grad(loss))
    a, b = _x(0), _x(1)
    for m in ({"x": a, "y": a}, {"x": b, "y": b}, {"x": a, "y": b}):
        got, want = jg(m), autodiff.grad(loss)(m)
        assert (got["y"] is None) == (want["y"] is None)  # a tie's gradient sits at its first occurrence only
        np.testing.assert_allclose(got["x"], want["x"], rtol=1e-12)
    assert jg.cache_info().traces == 2
    assert jg.lower({"x": a, "y": a}).n_inputs == 1


# --- the control-flow error ------------------------------------------------------------------------------------


def _line_of(text):
    return next(i for i, line in enumerate(open(__file__), 1) if text in line)


@pytest.mark.parametrize("body, what", [
    ("if_", "bool()"), ("bool_", "bool()"), ("float_", "float()"), ("item", "x.item()"), ("int_", "int()"),
    ("asarray", "np.asarray()"), ("index", "operator.index()")])
def test_python_reading_a_traced_value_raises_naming_the_line(body, what):
    def if_(x):
        if anp.sum(x) > 0:  # line: if_
            return x
        return -x

    bodies = {
        "if_": if_,
        "bool_": lambda x: bool(x[0] > 0),  # line: bool_
        "float_": lambda x: float(anp.sum(x)),  # line: float_
        "item": lambda x: anp.sum(x).item(),  # line: item
        "int_": lambda x: int(anp.sum(x)),  # line: int_
        "asarray": lambda x: np.asarray(x),  # line: asarray
        "index": lambda x: list(range(anp.sum(x > 0))),  # line: index
    }
    with pytest.raises(ConcretizationError) as info:
        autodiff.jit(bodies[body])(_x(0))
    message = str(info.value)
    assert f"{what} of a traced value at {HERE}:{_line_of(f'# line: {body}')}" in message
    assert "anp.where" in message and "static_argnums" in message and "without jit" in message
    assert isinstance(info.value, TypeError)


def test_the_branch_free_spelling_traces_and_follows_each_call():
    jf = autodiff.jit(lambda x: anp.where(x > 0, x, -2.0 * x))
    for seed in range(3):
        x = _x(seed)
        assert np.array_equal(jf(x), np.where(x > 0, x, -2.0 * x))
    assert jf.cache_info().traces == 1


# --- a library read of a value's data: the signature runs without jit -----------------------------------------


_reads = primitive(lambda x: x * 2.0, "reads_data")
defvjp(_reads, lambda g, ans, x: g * (2.0 if np.all(plain_value(x) > 0) else -1.0))  # a branch on the data


def test_a_rule_reading_data_makes_that_signature_run_without_jit_and_stays_right():
    jg = autodiff.jit(autodiff.grad(lambda x: anp.sum(_reads(x))))
    positive, mixed = np.abs(_x(0)) + 0.1, np.array([1.0, -1.0, 2.0])
    with pytest.warns(JitFallbackWarning, match=r"read a traced value's data \(tests\.jit\.test_semantics"):
        assert np.array_equal(jg(positive), np.full(3, 2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, for the signature
        assert np.array_equal(jg(mixed), np.full(3, -1.0))  # the other branch: the trace's would say 2
    info = jg.cache_info()
    assert info.eager_calls == 1 and info.hits == 0 and len(info.fallbacks) == 1
    assert "tests.jit.test_semantics" in info.fallbacks[0]
    with pytest.raises(ValueError, match="has no program"):
        jg.lower(positive)


def test_a_library_rule_that_reads_data_falls_back_too():
    jg = autodiff.jit(autodiff.grad(anp.prod))
    with pytest.warns(JitFallbackWarning, match="_prod_vjp"):
        jg(np.array([1.0, 2.0, 3.0]))  # no zeros: the fast path prod / x
    with_zero = np.array([2.0, 0.0, 3.0])  # the other branch: prod / x would give nan
    np.testing.assert_allclose(jg(with_zero), autodiff.grad(anp.prod)(with_zero), rtol=1e-12)
    assert np.all(np.isfinite(jg(with_zero)))


def test_staging_is_not_differentiation_to_a_rule_that_refuses_higher_orders():
    """prod's pullback at a zero is exact to first order and refuses the second: ``jit(grad(prod))`` traced at a
    zero is first order, as ``grad(prod)`` is, so it answers (the random-program fuzzer found it refusing), and
    ``jit`` of a second derivative refuses as eager code does."""
    with_zero, v = np.array([2.0, 0.0, 3.0]), np.ones(3)
    with pytest.warns(JitFallbackWarning, match="_prod_vjp"):
        got = autodiff.jit(autodiff.grad(anp.prod))(with_zero)
    np.testing.assert_allclose(got, autodiff.grad(anp.prod)(with_zero), rtol=1e-12)
    assert autodiff.gradcheck(anp.prod, with_zero, order=1)
    def hvp(x):
        return autodiff.hvp(anp.prod, (x,), (v,))

    for second_order in (hvp, autodiff.jit(hvp)):
        with pytest.raises(NotImplementedError, match="higher derivatives at inputs containing zeros"):
            second_order(with_zero)


def test_a_shape_that_depends_on_the_data_stops_the_replay_and_runs_without_jit():
    def mean_of_positives(x):
        kept = x[x > 0]
        return anp.sum(kept) / kept.shape[0]  # the shape, read while tracing, depends on the data

    jf = autodiff.jit(mean_of_positives)
    two, one = np.array([1.0, 2.0, -1.0]), np.array([1.0, -2.0, -1.0])
    assert jf(two) == 1.5
    with pytest.warns(JitFallbackWarning, match=r"the shape of %\d+ = getitem\(\.\.\.\) depends on the data"):
        assert jf(one) == 1.0  # the program would say 0.5: it divides by the traced count, 2
    assert jf(two) == 1.5 and jf.cache_info().eager_calls == 2


def test_closing_over_an_outer_transforms_value_runs_without_jit_and_stays_right():
    def outer(a):
        return anp.sum(autodiff.jit(lambda x: x * a)(_x(0)))

    with pytest.warns(JitFallbackWarning, match="closes over a value an outer transform is tracing"):
        got = autodiff.grad(outer)(np.array(3.0))
    np.testing.assert_allclose(got, np.sum(_x(0)), rtol=1e-12)


def test_an_output_jit_cannot_see_inside_runs_without_jit_and_holds_plain_values():
    import types

    jf = autodiff.jit(lambda x: types.SimpleNamespace(y=anp.sin(x)))
    with pytest.warns(JitFallbackWarning, match="an output leaf is a SimpleNamespace"):
        first = jf(_x(0))
    assert np.array_equal(first.y, np.sin(_x(0))) and type(first.y) is np.ndarray
    assert np.array_equal(jf(_x(1)).y, np.sin(_x(1)))


# --- captured arrays --------------------------------------------------------------------------------------------


def test_a_captured_array_stays_read_only_while_its_program_is_cached():
    w = _x(5)
    jf = autodiff.jit(lambda x: anp.sum(anp.exp(w) * x))
    jf(_x(0))
    with pytest.raises(ValueError, match="read-only"):
        w[0] = 1.0  # the program holds exp(w): a change would go stale silently
    np.testing.assert_allclose(jf(_x(1)), np.sum(np.exp(w) * _x(1)), rtol=1e-12)
    jf.clear_cache()
    w[0] = 1.0  # writable again, and the next call traces with the new value
    np.testing.assert_allclose(jf(_x(1)), np.sum(np.exp(w) * _x(1)), rtol=1e-12)


def test_a_constant_output_is_a_fresh_copy_each_call():
    c = np.ones(2)
    jf = autodiff.jit(lambda x: (anp.sum(x), c))
    jf(_x(0))
    first = jf(_x(1))[1]
    first[0] = 5.0
    assert np.array_equal(jf(_x(2))[1], np.ones(2))


# --- the program as data ------------------------------------------------------------------------------------------


def test_lower_gives_the_program_and_it_prints_as_a_listing():
    program = autodiff.jit(lambda x, y: {"s": anp.sum(anp.sin(x) * y), "y": y}).lower(_x(0), _x(1, (2, 3)))
    text = str(program)
    assert text.splitlines()[:2] == ["program <lambda>", "  in  %0:float64[3]  %1:float64[2,3]"]
    assert "%2 = sin(%0) -> float64[3]" in text and "{'s': %4, 'y': %1}" in text
    assert len(program.equations) == 3


def test_the_replay_drops_every_value_after_its_last_use_but_the_outputs():
    def f(x):
        y = anp.sin(x)
        z = anp.cos(y) * y
        return z, anp.exp(z)

    program = autodiff.jit(f, passes=()).lower(_x(0))
    freed = [ref for dead in program.frees for ref in dead]
    made = {e.out for e in program.equations} | set(range(program.n_inputs))
    outputs = {o.ref for o in program.outputs}
    assert sorted(freed) == sorted(made - outputs)  # each once, none an output
    last_use = {}
    for k, e in enumerate(program.equations):
        for a in e.operands:
            if hasattr(a, "ref"):
                last_use[a.ref] = k
    for k, dead in enumerate(program.frees):
        assert all(last_use.get(ref, k) == k for ref in dead)


def test_dead_code_elimination_drops_only_what_no_output_needs():
    def f(x):
        anp.exp(x)  # dead
        y = anp.cos(x)
        return anp.sin(y) + y

    full, pruned = autodiff.jit(f, passes=()), autodiff.jit(f, passes=("dce",))
    assert [e.prim.__name__ for e in pruned.lower(_x(0)).equations] == ["cos", "sin", "add"]
    assert len(full.lower(_x(0)).equations) == 4
    for seed in range(3):
        assert np.array_equal(pruned(_x(seed)), full(_x(seed)))
    with pytest.raises(ValueError, match="no pass named 'buffers'"):  # buffer planning: not built yet
        autodiff.jit(f, passes=("buffers",))


# --- composition ----------------------------------------------------------------------------------------------------


def test_outer_transforms_share_the_plain_program():
    jf = autodiff.jit(_f)
    jf(_x(9))  # traced on plain values; the calls below replay it under grad, jvp, vmap
    x, v = _x(0), _x(1)
    np.testing.assert_allclose(autodiff.grad(jf)(x), autodiff.grad(_f)(x), rtol=1e-12)
    np.testing.assert_allclose(autodiff.jvp(jf, (x,), (v,))[1], autodiff.jvp(_f, (x,), (v,))[1], rtol=1e-12)
    xs = _x(2, (4, 3))
    np.testing.assert_allclose(autodiff.vmap(jf)(xs), autodiff.vmap(_f)(xs), rtol=1e-12)
    np.testing.assert_allclose(autodiff.grad(autodiff.grad(lambda s: jf(x * s)))(1.5),
                               autodiff.grad(autodiff.grad(lambda s: _f(x * s)))(1.5), rtol=1e-10)
    # under every outer context the call is one primitive: jvp and vmap replay the plain program (one trace
    # serves them both), grad runs the two halves of its pullback's program, traced once; another call traces
    # nothing
    info = jf.cache_info()
    assert info.traces == 1
    np.testing.assert_allclose(autodiff.grad(jf)(v), autodiff.grad(_f)(v), rtol=1e-12)
    assert jf.cache_info() == info
    np.testing.assert_allclose(autodiff.jvp(jf, (v,), (x,))[1], autodiff.jvp(_f, (v,), (x,))[1], rtol=1e-12)
    assert jf.cache_info().traces == 1 and jf.cache_info().hits > info.hits


@pytest.mark.parametrize("name", ["grad", "hvp", "vmap_grad", "total", "has_aux", "tuple", "hessian", "jacobian",
                                  "jacfwd", "linearize", "vjp", "remat"])
def test_jit_traces_through_inner_transforms(name):
    v = _x(7)
    fns = {
        "grad": autodiff.grad(_f),
        "hvp": lambda x: autodiff.hvp(_f, (x,), (v,)),
        "vmap_grad": autodiff.vmap(autodiff.grad(_f)),
        "total": lambda m: traversal.total(anp.sumsq, m),
        "has_aux": autodiff.grad(lambda x: (_f(x), anp.cos(x)), has_aux=True),
        "tuple": lambda x: (anp.sin(x), (anp.cos(x), 2.0)),
        "hessian": autodiff.hessian(_f),
        "jacobian": autodiff.jacobian(anp.sin),
        "jacfwd": autodiff.jacfwd(anp.tanh),
        "linearize": lambda x: autodiff.linearize(_f, x)[1](v),
        "vjp": lambda x: autodiff.vjp(anp.sin, x)[1](v),
        "remat": autodiff.grad(autodiff.remat(_f)),
    }
    f = fns[name]
    arg = {"w": _x(0), "b": [_x(1, (2,))]} if name == "total" else (_x(0, (4, 3)) if name == "vmap_grad" else _x(0))
    jf = autodiff.jit(f)
    jf(arg)
    new = traversal.fmap(lambda p: p * 1.7 - 0.3, arg)
    _assert_same_tree(jf(new), f(new))
    assert jf.cache_info().hits == 1 and jf.cache_info().fallbacks == ()


def _assert_same_tree(got, want):
    gl, wl = leaves(got), leaves(want)
    assert [p for p, _ in gl] == [p for p, _ in wl]
    for (_, a), (_, b) in zip(gl, wl):
        if isinstance(b, (np.ndarray, float, np.generic)):
            np.testing.assert_allclose(a, b, rtol=1e-12)
            assert np.result_type(a) == np.result_type(b)
        else:
            assert a == b


@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_cotangent_and_tangent_additions_are_equations_of_the_program(transform):
    """The backward loop's (and a JVP rule's) additions depend on the inputs: the program must hold them, in
    the reference and the accelerated backward pass alike (which hand a staged cotangent to the reference)."""
    def f(x):
        return anp.sum(anp.sin(x) * anp.cos(x)) if transform == "grad" else anp.sin(x) * x

    t = autodiff.grad(f) if transform == "grad" else (lambda x: autodiff.jvp(f, (x,), (x,))[1])
    program = autodiff.jit(t, passes=("dce",)).lower(_x(0))  # unfused, to read its equations
    assert [e.prim.__name__ for e in program.equations].count("add") == 1
    jt = autodiff.jit(t)
    jt(_x(0))
    np.testing.assert_allclose(jt(_x(1)), t(_x(1)), rtol=1e-12)


def test_a_jitted_method_binds_its_object():
    class Scale:
        def __init__(self, c):
            self.c = c

        @autodiff.jit
        def apply(self, x):
            return x * self.c

    s = Scale(3.0)
    assert np.array_equal(s.apply(_x(0)), _x(0) * 3.0) and np.array_equal(s.apply(_x(1)), _x(1) * 3.0)
    assert Scale.apply.cache_info().traces == 1


def test_a_jit_inside_a_jit_is_part_of_the_outer_program():
    inner = autodiff.jit(anp.sin)
    outer = autodiff.jit(lambda x: inner(x) * 2.0, passes=("dce",))  # unfused, to read its equations
    assert [e.prim.__name__ for e in outer.lower(_x(0)).equations] == ["sin", "multiply"]
    assert inner.cache_info().traces == 0


def test_a_staged_value_kept_past_its_jit_is_refused():
    kept = []
    autodiff.jit(lambda x: kept.append(x) or anp.sin(x))(_x(0))
    with pytest.raises(RuntimeError, match="already finished"):
        anp.cos(kept[0])


@pytest.mark.skipif(not REFERENCE, reason="bitwise equality is promised under AUTODIFF_REFERENCE=1 only (an "
                    "accelerated kernel may round otherwise); this mode's 1e-12 checks are in test_op_table.py")
def test_under_the_reference_the_replay_is_bitwise_the_function():
    for f in (_f, autodiff.grad(_f), lambda x: autodiff.hvp(_f, (x,), (x,))):
        jf = autodiff.jit(f)
        jf(_x(0))
        assert np.array_equal(jf(_x(1)), f(_x(1)))


def test_a_training_step_given_optimiser_state_is_refused_with_the_fix_and_the_fix_steps_as_eager_code():
    import optimisers

    model = {"w": _x(0), "b": _x(1, (2,))}
    state = optimisers.setup(optimisers.Adam(1e-2), model)
    grad = autodiff.grad(lambda m: traversal.total(autodiff.sumsq, m) + anp.sum(anp.sin(m["w"])))

    def step(m, s):
        return optimisers.update(s, m, grad(m))

    with pytest.raises(TypeError, match=r"jit\(step\): args\[1\]\['w'\] is a Leaf.*optimiser state: jit the "
                                        r"gradient.*optimisers\.update"):
        autodiff.jit(step)(model, state)
    jitted_grad, eager = autodiff.jit(grad), (state, model)
    ours = (optimisers.setup(optimisers.Adam(1e-2), model), model)
    for _ in range(3):  # the advice: the jitted gradient, then update outside
        eager = step(eager[1], eager[0])
        ours = optimisers.update(ours[0], ours[1], jitted_grad(ours[1]))
        for key in model:
            np.testing.assert_allclose(ours[1][key], eager[1][key], rtol=1e-12)
    assert jitted_grad.cache_info().traces == 1
