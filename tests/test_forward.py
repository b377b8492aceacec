"""Forward mode (issue 16): dual values, JVP rules and their fallback, nesting with reverse mode,
every op of the table pushed forward, and the forward transforms (jvp, jacfwd, hvp, linearize)."""

import gc
import tracemalloc

import numpy as np
import pytest
from gallery import gallery
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_policy import DERANDOMIZE
from op_table import OPS
from tree_asserts import assert_same_tree

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, hessian, hvp, jacfwd, jacrev, jvp, linearize, vjp
from autodiff._trees import leaves, rebuild_node, transform
from autodiff.extend import ZeroTangent, defjvp, defjvp_joint, deflinear, defvjp, primitive, value_of
from traversal import fmap, isnumeric, total

# --- a handful of ops with their own JVP rules (the built-in ones get theirs file by file) -------------

calls = {"sin": 0, "mul": 0, "cube": 0}


def _count(name, value):
    calls[name] += 1
    return value


fsin = primitive(np.sin, "fsin")
fcos = primitive(np.cos, "fcos")
defvjp(fsin, lambda g, ans, x: g * fcos(x))
defvjp(fcos, lambda g, ans, x: -g * fsin(x))
defjvp(fsin, lambda t, ans, x: _count("sin", t * fcos(x)))
defjvp(fcos, lambda t, ans, x: -t * fsin(x))

fmul = primitive(np.multiply, "fmul")
defvjp(fmul, lambda g, ans, x, y: fmul(g, y), lambda g, ans, x, y: fmul(g, x))
deflinear(fmul)

fjoin = primitive(lambda *xs: np.concatenate(xs), "fjoin")


def _split_vjp(g, ans, *xs):
    bounds = np.cumsum([0] + [np.shape(autodiff.stop_gradient(x))[0] for x in xs])
    return [g[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]


autodiff.extend.defvjp_joint(fjoin, _split_vjp)


def _zeros_for(t, x):
    return np.zeros(np.shape(autodiff.stop_gradient(x))) if type(t) is ZeroTangent else t


defjvp_joint(fjoin, lambda ts, ans, *xs: fjoin(*[_zeros_for(t, x) for t, x in zip(ts, xs)]))

cube = primitive(lambda x: x ** 3, "cube")  # only a pullback: pushed forward through it
defvjp(cube, lambda g, ans, x: _count("cube", g * 3.0 * x ** 2))

flat = primitive(lambda x: np.round(x), "flat")  # derivative zero: a symbolic zero tangent
defvjp(flat, lambda g, ans, x: ZeroTangent())
defjvp(flat, lambda t, ans, x: ZeroTangent())


def derivative(f):
    return lambda x: jvp(f, (x,), (1.0,))[1]


# --- nesting ---------------------------------------------------------------------------------------


def test_perturbation_confusion_forward_at_both_levels():
    """d/dx [x * d/dy (x + y)] at 1 is 1 (a confused engine says 2); the design's product version is 2."""
    assert derivative(lambda x: x * derivative(lambda y: x + y)(1.0))(1.0) == 1.0
    assert derivative(lambda x: x * derivative(lambda y: x * y)(1.0))(1.0) == 2.0
    assert derivative(lambda x: fmul(x, derivative(lambda y: fmul(x, y))(1.0)))(1.0) == 2.0


@pytest.mark.parametrize("inner, outer", [(derivative, grad), (grad, derivative), (derivative, derivative)])
def test_mixed_nesting_has_no_perturbation_confusion(inner, outer):
    assert outer(lambda x: x * inner(lambda y: x + y)(1.0))(1.0) == 1.0
    assert outer(lambda x: x * inner(lambda y: x * y)(1.0))(1.0) == 2.0


def _f(x):
    return anp.sum(anp.tanh(x) * fsin(x) ** 2 + cube(x))


X = np.array([0.3, -0.7, 1.1])
V = np.array([1.0, 0.5, -2.0])
W = np.array([-0.4, 1.0, 0.3])


def test_forward_over_reverse_equals_reverse_over_reverse():
    np.testing.assert_allclose(jvp(grad(_f), X, V)[1], jacrev(grad(_f))(X) @ V, rtol=1e-12)


def test_reverse_over_forward_equals_reverse_over_reverse():
    np.testing.assert_allclose(grad(lambda x: jvp(_f, x, V)[1])(X), jacrev(grad(_f))(X) @ V, rtol=1e-12)
    assert gradcheck(lambda x: jvp(_f, x, V)[1], X, order=2)


def test_forward_over_forward_equals_reverse_over_reverse():
    second = jvp(lambda x: jvp(_f, x, V)[1], X, W)[1]
    np.testing.assert_allclose(second, W @ jacrev(grad(_f))(X) @ V, rtol=1e-12)
    assert gradcheck(lambda x: jvp(lambda y: jvp(_f, y, V)[1], x, W)[1], X)


# --- rules, zeros and the fallback ------------------------------------------------------------------


def test_rules_are_used_and_agree_with_the_pullback_linearisation():
    calls.update(sin=0, cube=0)
    out, t = jvp(lambda x: fsin(cube(x)), X, V)
    assert calls["sin"] == 1 and calls["cube"] == 1  # sin's own rule; cube's pullback, traced once
    np.testing.assert_allclose(out, np.sin(X ** 3), rtol=1e-15)
    np.testing.assert_allclose(t, np.cos(X ** 3) * 3 * X ** 2 * V, rtol=1e-12)


def test_joint_and_linear_rules():
    y = np.array([2.0, -1.0])
    out, t = jvp(lambda a, b: fjoin(fmul(a, a), b, a), (X, y), (V, None))
    np.testing.assert_allclose(t, np.concatenate([2 * X * V, [0.0, 0.0], V]), rtol=1e-12)
    assert gradcheck(lambda a: jvp(lambda a: fjoin(fmul(a, a), y), a, V)[1], X, order=2)


def test_a_symbolic_zero_runs_no_rule_downstream():
    calls.update(sin=0)
    out, t = jvp(lambda x: fsin(flat(x)), X, V)
    assert calls["sin"] == 0
    np.testing.assert_array_equal(t, np.zeros(3))


def test_an_argument_without_a_jvp_raises_naming_it():
    half = primitive(lambda x, y: x * y, "half")
    defjvp(half, lambda t, ans, x, y: t * y, None)
    np.testing.assert_allclose(jvp(lambda x: half(x, 2.0), 3.0, 1.0)[1], 2.0)
    with pytest.raises(NotImplementedError, match=r"half: argument 1 has no JVP.*defjvp"):
        jvp(lambda y: half(2.0, y), 3.0, 1.0)


def test_a_primitive_without_any_rule_says_how_to_add_one():
    bare = primitive(np.exp, "bare")
    with pytest.raises(NotImplementedError, match=r"bare has neither a JVP rule nor a pullback.*defjvp"):
        jvp(bare, 1.0, 1.0)


def test_a_leaked_dual_is_refused():
    kept = []
    jvp(lambda x: kept.append(x) or x, 1.0, 1.0)
    with pytest.raises(RuntimeError, match=r"fsin: got a traced value from a differentiation \(level 1\)"):
        fsin(kept[0])


# --- every op of the table ---------------------------------------------------------------------------

SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=DERANDOMIZE)
TOLERANCE = {np.float64: (1e-5, 1e-7), np.float32: (2e-3, 1e-4)}


def _random_like(x, rng):
    return np.asarray(rng.standard_normal(np.shape(x)), np.result_type(x))


def _leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _dot(a, b):
    return sum(float(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64)))
               for x, y in zip(_leaves(a), _leaves(b)))


def _pushforward_of(f, vs):
    """``x -> J_f(x) vs``: a function whose own JVP is the second-order one."""
    def g(*xs):
        dtypes = [np.result_type(autodiff.stop_gradient(x)) for x in xs]
        return jvp(f, tuple(xs), tuple(v.astype(d) for v, d in zip(vs, dtypes)))[1]
    return g


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", OPS, ids=repr)
def test_jvp_of_every_op(op, dtype, order):
    """J v against central differences (in float64) and against the VJP: <u, J v> = <J^T u, v>."""
    @SETTINGS
    @given(case=op.cases, seed=st.integers(0, 2**16))
    def check(case, seed):
        shapes, kwargs = case
        rng = np.random.default_rng(seed)
        xs = [op.domain(rng.standard_normal(s)).astype(dtype) for s in shapes]
        f = lambda *a: op.fn(*a, **kwargs)  # noqa: E731
        if order == 2:
            f = _pushforward_of(f, [_random_like(x, rng) for x in xs])
        vs = [_random_like(x, rng) for x in xs]
        out, jv = jvp(f, tuple(xs), tuple(vs))
        assert [np.result_type(t) for t in _leaves(jv)] == [np.result_type(o) for o in _leaves(out)]
        u = [_random_like(o, rng) for o in _leaves(out)]
        u = u if isinstance(out, (tuple, list)) else u[0]
        eps = op.eps  # the op table's finite-difference step (1e-6 but for an adaptive ODE solve)
        wide = [x.astype(np.float64) for x in xs]
        plus = f(*[x + eps * v for x, v in zip(wide, vs)])
        minus = f(*[x - eps * v for x, v in zip(wide, vs)])
        numeric = (_dot(u, plus) - _dot(u, minus)) / (2 * eps)
        forward = _dot(u, jv)
        reverse = _dot(vjp(f, *xs)[1](u), vs)
        rtol, atol = TOLERANCE[dtype]
        assert abs(forward - numeric) <= atol + rtol * max(abs(forward), abs(numeric)), (forward, numeric)
        assert abs(forward - reverse) <= atol + rtol * max(abs(forward), abs(reverse)), (forward, reverse)

    check()


TORCH_FNS = {
    "sin": (anp.sin, "sin"), "tanh": (anp.tanh, "tanh"), "exp": (anp.exp, "exp"),
    "matmul": (anp.matmul, "matmul"), "power": (lambda a, b: anp.abs(a) ** b, lambda a, b: a.abs() ** b),
    "logsumexp": (lambda a: autodiff.nn.functional.logsumexp(a, 1, False), lambda a: a.logsumexp(1)),
}


def _torch_cases():
    from test_numpy_vs_torch import CASES

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    mine = {"sin": ((a,),), "tanh": ((a,),), "exp": ((a,),), "matmul": ((a, b),),
            "power": ((a, rng.standard_normal((3, 4))),), "logsumexp": ((a,),)}
    cases = {}
    for name, (fn, theirs) in TORCH_FNS.items():
        cases[name] = (mine[name][0], fn, theirs)
    cases.update(CASES)
    return cases


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name", list(_torch_cases()))
def test_jvp_equals_torch_func_jvp(name, order):
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    args, ours, theirs = _torch_cases()[name]
    if isinstance(theirs, str):
        theirs = getattr(torch, theirs)
    rng = np.random.default_rng(11)
    vs = [rng.standard_normal(np.shape(a)) for a in args]
    ws = [rng.standard_normal(np.shape(a)) for a in args]
    if name == "cholesky":  # defined on symmetric matrices: torch's rule assumes a symmetric tangent
        vs, ws = [(v + v.T) / 2 for v in vs], [(w + w.T) / 2 for w in ws]
    targs, tv, tw = (tuple(torch.tensor(a) for a in xs) for xs in (args, vs, ws))
    if order == 1:
        mine = jvp(ours, tuple(args), tuple(vs))[1]
        want = torch.func.jvp(theirs, targs, tv)[1]
    else:
        # torch.func.jvp over torch.func.jvp gives wrong second derivatives for solve and det (torch 2.13;
        # both finite differences and torch's double-backward agree with ours), so the oracle at order 2
        # is torch's reverse-mode jvp nested in itself.
        mine = jvp(lambda *xs: jvp(ours, xs, tuple(vs))[1], tuple(args), tuple(ws))[1]
        inner = lambda *xs: torch.autograd.functional.jvp(theirs, xs, tv, create_graph=True)[1]  # noqa: E731
        want = torch.autograd.functional.jvp(inner, targs, tw)[1]
    np.testing.assert_allclose(mine, want.detach().numpy(), rtol=1e-9, atol=1e-10)


# --- memory ----------------------------------------------------------------------------------------


def _peak_arrays(f, x, v):
    gc.collect()
    tracemalloc.start()
    try:
        out, t = jvp(f, x, v)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / x.nbytes


def test_jvp_of_a_100_op_chain_holds_a_constant_number_of_arrays():
    """10^6 float64 values, 100 ops: the peak stays under 20 arrays' worth (a tape would hold ~200)."""
    x = np.random.default_rng(0).standard_normal(10 ** 6)
    v = np.ones_like(x)

    def with_rules(y):  # 10 sines, 90 products
        for k in range(100):
            y = fsin(y) if k % 10 == 0 else fmul(y, 1.01)
        return y

    def through_pullbacks(y):  # the same with built-in ops, pushed forward through their pullbacks
        for k in range(100):
            y = anp.sin(y) if k % 10 == 0 else anp.multiply(y, 1.01)
        return y

    assert _peak_arrays(with_rules, x, v) < 20
    assert _peak_arrays(through_pullbacks, x, v) < 20


# --- transforms ------------------------------------------------------------------------------------


def _gallery_cases():
    from gallery import gallery

    for name, model in gallery().items():
        if name in ("empty", "complex"):
            continue
        yield name, model


def _loss(m):
    return total(lambda p: anp.sum(anp.sin(p) * p ** 2), m) + total(anp.sumsq, m) ** 2


def _direction(model, seed=0):
    from traversal import fmap, isnumeric

    rng = np.random.default_rng(seed)
    return fmap(lambda p: np.asarray(rng.standard_normal(p.shape), p.dtype), model, exclude=isnumeric)


def _old_hvp(f, model, v):
    """Reverse over reverse, as hvp was before forward mode: grad of <grad f, v>."""
    def dot(m):
        g = grad(f)(m)
        return total(lambda a, b: anp.sum(a * b), v, g)
    return grad(dot)(model)


def _same(a, b, rtol):
    from autodiff._trees import leaves

    la, lb = leaves(a), leaves(b)
    assert [p for p, _ in la] == [p for p, _ in lb]
    for (path, x), (_, y) in zip(la, lb):
        assert (x is None) == (y is None), path
        if x is not None and isinstance(x, np.ndarray):
            assert x.dtype == y.dtype, path
            np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-6, err_msg=str(path))


@pytest.mark.parametrize("mode", ["reverse_over_forward", "forward_over_reverse"])
@pytest.mark.parametrize("name, model", list(_gallery_cases()))
def test_hvp_equals_the_old_reverse_over_reverse_on_the_gallery(name, model, mode):
    v = _direction(model)
    _same(hvp(_loss, (model,), (v,), mode=mode)[0], _old_hvp(_loss, model, v), rtol=1e-5)


@pytest.mark.parametrize("mode", ["reverse_over_forward", "forward_over_reverse"])
def test_hvp_where_the_tangent_is_a_symbolic_zero(mode):
    """f's output is a dual whose tangent is a symbolic zero (sign's): H v is zeros, not a leaked-value error."""
    def f(x):
        return anp.sum(2.0 * anp.sign(anp.transpose(x + x)))

    for x, v in [(np.array(-2.0), np.array(1.0)), (np.array([0.5, -1.5]), np.array([1.0, 2.0]))]:
        want = np.reshape(jacrev(grad(f))(x), (x.size, x.size)) @ v.ravel()
        np.testing.assert_array_equal(hvp(f, x, v, mode=mode), np.reshape(want, x.shape))


def test_hvp_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="hvp: mode must be one of"):
        hvp(_loss, np.ones(2), np.ones(2), mode="reverse_over_reverse")


@pytest.mark.parametrize("name, model", list(_gallery_cases()))
def test_jacfwd_equals_jacrev_on_the_gallery(name, model):
    f = lambda m: total(lambda p: anp.tanh(anp.sum(p)) * np.ones(2, np.float32), m)  # noqa: E731
    _same(jacfwd(f)(model), jacrev(f)(model), rtol=1e-6)


def test_jacfwd_with_several_argnums_and_a_structured_output():
    f = lambda a, s, b: {"y": anp.sin(a) * s, "z": (b @ a, 3)}  # noqa: E731
    args = (X, 2.0, np.arange(6.0).reshape(2, 3))
    _same(jacfwd(f, (0, 1))(*args), jacrev(f, (0, 1))(*args), rtol=1e-12)
    np.testing.assert_allclose(hessian(_f)(X), jacrev(grad(_f))(X), rtol=1e-12)


def test_linearize_pushes_many_directions_without_rerunning_f():
    runs = []

    def f(m):
        runs.append(1)
        return {"a": anp.tanh(m["w"]) * m["s"], "b": cube(m["w"])}

    m = {"w": X, "s": 1.5}
    out, f_jvp = linearize(f, m)
    for seed in range(3):
        v = {"w": np.random.default_rng(seed).standard_normal(3), "s": float(seed)}
        _same(f_jvp(v), jvp(f, m, v)[1], rtol=1e-12)
    assert len(runs) == 1 + 3  # linearize's one run, then only jvp's
    with pytest.raises(ValueError, match=r"linearize: tangents\[0\]\.w is of shape \(2,\)"):
        f_jvp({"w": np.ones(2), "s": 1.0})


def _every_position(*args):
    """A structured output reading each float array at every position it holds (ties twice), plus a scalar."""
    arrays = [x for _, x in leaves(args) if isinstance(value_of(x), np.ndarray) and value_of(x).dtype.kind in "fc"]
    out = {"each": [anp.sin(x) * x for x in arrays]}
    out["sum"] = sum((anp.sum(anp.real(x * x)) for x in arrays), 0.0)
    return out


def _like(tree, seed):
    """Random values shaped and typed like ``tree``'s array and float leaves (complex where it is)."""
    rng = np.random.default_rng(seed)

    def leaf(path, x):
        v = value_of(x)
        if isinstance(v, float):
            return float(rng.standard_normal())
        if not isinstance(v, (np.ndarray, np.generic)) or v.dtype.kind not in "fc":
            return None
        r = rng.standard_normal(np.shape(v)) + (1j * rng.standard_normal(np.shape(v)) if v.dtype.kind == "c" else 0)
        return np.asarray(r, v.dtype)

    return transform(tree, leaf, rebuild_node)


def _direction_like(model, seed):
    """A random direction per parameter, one per tied array (fmap maps a tie once), floats kept."""
    rng = np.random.default_rng(seed)
    return fmap(lambda p: np.asarray(rng.standard_normal(p.shape) + (1j * rng.standard_normal(p.shape)
                                                                       if p.dtype.kind == "c" else 0), p.dtype),
                model, exclude=isnumeric)


def _pairing(a, b):
    """The pairing the pullbacks transpose against, Re(sum(a * b)) with no conjugate (docs/complex.md), over
    matching leaves; ``None`` leaves add nothing."""
    total_ = 0.0
    for (_, x), (_, y) in zip(leaves(a), leaves(b)):
        if x is not None and y is not None:
            total_ += float(np.real(np.sum(x * y)))
    return total_


@pytest.mark.parametrize("name", list(gallery()))
def test_linearize_transpose_is_the_vjp_pullback_on_the_gallery(name):
    """Oracle: ``vjp``'s pullback on the same cotangent (structure, None places, dtypes, values); and the
    dot-product test <u, J v> = <Jᵀ u, v> ties it to the pushforward."""
    model = gallery()[name]
    args = model if name == "one_array_in_two_arguments" else (model,)
    out, f_jvp = linearize(_every_position, *args)
    _, pullback = vjp(_every_position, *args)
    rtol = 1e-5 if name == "float32" else 1e-12
    for seed in range(2):
        u = _like(out, seed)
        transposed = f_jvp.transpose(u)
        assert_same_tree(transposed, pullback(u), rtol)
        v = tuple(_direction_like(a, seed + 10) for a in args)
        np.testing.assert_allclose(_pairing(u, f_jvp(*v)), _pairing(transposed, v), rtol=1e-4 if rtol > 1e-6 else 1e-10)


def test_linearize_transpose_refuses_a_cotangent_of_the_wrong_shape():
    _, f_jvp = linearize(lambda x: {"y": anp.sin(x)}, X)
    with pytest.raises(ValueError, match=r"linearize transpose: cotangent at output\['y'\] has shape \(2,\)"):
        f_jvp.transpose({"y": np.ones(2)})


# --- total -----------------------------------------------------------------------------------------


def _numeric_total(f, model, v, eps=1e-6):
    from traversal import fmap, isnumeric

    plus = fmap(lambda p, d: p + eps * d, model, v, exclude=isnumeric)
    minus = fmap(lambda p, d: p - eps * d, model, v, exclude=isnumeric)
    return (total(f, plus) - total(f, minus)) / (2 * eps)


@pytest.mark.parametrize("f", [anp.sumsq, anp.linalg.norm, anp.abssum, lambda p: anp.sum(anp.sin(p) * p)],
                         ids=["sumsq", "norm", "abssum", "closure-free lambda"])
def test_jvp_of_total_counts_a_tie_once(f):
    w = np.array([0.5, -1.5, 2.0])
    model = {"a": w, "b": [w, np.array([[1.0, -2.0]])], "n": 3}
    v = _direction(model, seed=4)  # fmap keeps the tie: one direction for w
    out, t = jvp(lambda m: total(f, m), model, v)
    np.testing.assert_allclose(t, _numeric_total(f, model, v), rtol=1e-6)
    g = grad(lambda m: total(f, m))(model)
    np.testing.assert_allclose(t, np.vdot(g["a"], v["a"]) + np.vdot(g["b"][1], v["b"][1]), rtol=1e-12)


def test_jvp_of_total_with_a_closure_over_a_dual():
    model = {"a": np.array([0.5, -1.5]), "b": np.array([2.0])}
    c = 1.7
    t = derivative(lambda c: total(lambda p: c * anp.sumsq(p), model))(c)
    np.testing.assert_allclose(t, total(anp.sumsq, model), rtol=1e-12)
    hv = hvp(lambda m: total(lambda p: anp.sum(p ** 3), m), model, _direction(model))
    _same(hv, _old_hvp(lambda m: total(lambda p: anp.sum(p ** 3), m), model, _direction(model)), rtol=1e-12)


# --- introspection ---------------------------------------------------------------------------------


def test_trace_lists_each_push_with_its_primal_tangent_and_rule():
    t = autodiff.trace(lambda x: fsin(cube(flat(x) + x)), X, tangents=(V,))
    lines = str(t).splitlines()
    assert lines[0] == "pushforward 1 (level 1)"
    assert lines[1] == "  in  %0 x float64[3]  tangent float64[3]"
    assert lines[2] == "  %1 = flat(%0) -> float64[3]  tangent zero  (jvp rule)"
    assert lines[4] == "  %3 = cube(%2) -> float64[3]  tangent float64[3]  (via its pullback)"
    assert lines[5] == "  %4 = fsin(%3) -> float64[3]  tangent float64[3]  (jvp rule)"
    assert lines[-1] == "  out %4"
    np.testing.assert_allclose(t.tangent, jvp(lambda x: fsin(cube(flat(x) + x)), X, V)[1])


def test_total_of_a_known_reduction_is_one_push_through_its_own_rule_and_nests():
    model = {"a": np.array([0.5, -1.5]), "b": [np.array([2.0, 1.0])]}
    v = _direction(model, seed=2)
    from autodiff._hooks import REFERENCE

    t = autodiff.trace(lambda m: total(anp.sumsq, m), model, tangents=(v,))
    rows = [line.split(" = ")[1] for line in str(t).splitlines() if " = " in line]
    if REFERENCE:  # the generic entry (the fused one is autodiff._accel.reductions): f pushed per parameter inside
        assert rows == ["total(<f=sumsq>, 0.0, %0, %1) -> float64[]  tangent float64[]  (jvp rule)"] + [
            "sumsq(%0) -> float64[]  tangent float64[]  (jvp rule)"] * 2  # each in a level of its own
    else:
        assert rows == ["total(<sumsq>, 0.0, %0, %1) -> float64[]  tangent float64[]  (jvp rule)"]
    assert gradcheck(lambda m: jvp(lambda m: total(anp.sumsq, m), m, v)[1], model, order=2)
    assert gradcheck(lambda d: jvp(lambda m: total(anp.linalg.norm, m), model, d)[1], v)


# === group "shape, reductions, indexing, products": every primitive of these files has its own JVP rule ===

SHAPE_GROUP = [
    "autodiff.numpy._reductions", "autodiff.numpy._shape", "autodiff.numpy._indexing", "autodiff.numpy._linalg",
    "autodiff.numpy._construction", "autodiff.numpy._splitting", "autodiff.numpy._joining",
    "autodiff.numpy._dimensions", "autodiff.numpy._rotations", "autodiff.numpy._selection",
    "autodiff.numpy._products", "autodiff.numpy._differences", "autodiff.numpy._ranges", "autodiff.numpy._sorting",
    "autodiff.numpy._triangles", "autodiff.numpy._arraylike", "autodiff.numpy._einsum_forms",
    "layers._conv", "layers._pool",
]


def _primitives_defined_in(module):
    """The primitives bound by a module's own top-level assignments (``max = amax = ...`` too), not its imports."""
    import ast
    import inspect

    from autodiff.extend import Primitive

    tree = ast.parse(inspect.getsource(module))
    assigned = [node for node in tree.body if isinstance(node, ast.Assign)]
    names = {t.id for node in assigned for t in node.targets if isinstance(t, ast.Name)}
    return {name: v for name, v in vars(module).items() if name in names and isinstance(v, Primitive)}


def test_shape_group_every_primitive_has_its_own_jvp_rule():
    import importlib

    from autodiff._jvp_rules import _jvp_rules

    found = {}
    for name in SHAPE_GROUP:
        found.update({f"{name}.{k}": p for k, p in _primitives_defined_in(importlib.import_module(name)).items()})
    assert len(set(found.values())) >= 25  # sum ... windows: the lookup itself finds them
    assert [k for k, p in found.items() if p not in _jvp_rules] == []


def _shape_group_ops(x):
    from autodiff.numpy._construction import split_flat
    from layers._conv import unwindow, windows

    m = anp.reshape(x, (2, 3))
    reduced = anp.max(m, axis=0) * anp.prod(m) * anp.cumprod(x)[-1] + anp.sum(anp.pad(m, 1)) + anp.cumsum(x)[0]
    joined = anp.concatenate([x, x]) @ anp.reshape(anp.stack([x, x], axis=1), (12,))
    built = anp.array([x[0], 2.0]) * anp.linspace(x[1], x[2], 2) + split_flat(x, (2, 4))[1][:2]
    product = anp.einsum("ij,jk->ik", m, anp.transpose(m)) + anp.diag(anp.diagonal(m)) + m[:, :2] @ m[:, 1:].T
    cols = windows(anp.reshape(x, (1, 1, 2, 3)), 2, 2, 1)
    moved = unwindow(cols, (1, 1, 2, 3), 2, 2, 1) * anp.reshape(anp.sort(anp.roll(x, 1)), (1, 1, 2, 3))
    return anp.sum(reduced * anp.min(x)) + joined + anp.sum(built) + anp.sum(product) + anp.sum(moved)


def test_shape_group_ops_push_through_their_own_rules_and_agree_with_the_pullbacks():
    """Each kind (linear, per argument, joint, tuple-valued, ties) shows ``(jvp rule)`` in the trace."""
    x = np.array([0.7, -1.2, 1.5, 0.4, -0.3, 0.9])
    t = autodiff.trace(_shape_group_ops, x, tangents=(V[[0, 1, 2, 0, 1, 2]],))
    pushes = [line.split("  #")[0].split(" = ")[1] for line in str(t).splitlines() if " = " in line]
    mine = [p for p in pushes if not p.startswith(("add", "multiply"))]  # elementwise: another group's file
    ops = {p.split("(")[0] for p in mine}
    assert ops == {"reshape", "max", "prod", "cumprod", "getitem", "pad", "sum", "cumsum", "concatenate", "stack",
                   "matmul", "pack", "linspace", "split_flat", "tuple_item", "einsum", "transpose", "diagonal",
                   "put_diagonal", "windows", "unwindow", "roll", "permute_along", "min"}
    assert [p for p in mine if not p.endswith("(jvp rule)")] == []
    v = V[[0, 1, 2, 0, 1, 2]]
    np.testing.assert_allclose(t.tangent, grad(_shape_group_ops)(x) @ v, rtol=1e-12)
    assert gradcheck(lambda x: jvp(_shape_group_ops, x, v)[1], x, order=2)


def test_shape_group_forward_over_reverse_through_construction_and_its_split():
    """hvp through ``anp.array`` pushes the pullback's ``split_flat`` and ``tuple_item`` forward by their rules."""
    def f(x):
        return anp.sum(anp.array([[x[0] * x[1], anp.sin(x[2])], [3.0, x[1]]]) ** 3)

    x, v = np.array([0.3, -0.7, 1.1]), np.array([1.0, 0.5, -2.0])
    np.testing.assert_allclose(hvp(f, x, v), jacrev(grad(f))(x) @ v, rtol=1e-12)
    t = autodiff.trace(lambda y: grad(f)(y), x, tangents=(v,))
    pushes = [line.split("  #")[0].split(" = ")[1] for line in str(t).splitlines() if " = " in line]
    rules = {p.split("(")[0]: p.rsplit("(", 1)[1] for p in pushes}
    assert rules["split_flat"] == rules["tuple_item"] == "jvp rule)"


@pytest.mark.parametrize("ours, theirs", [(lambda a: anp.max(a, axis=1), "amax"),
                                          (lambda a: anp.prod(a, axis=1), "prod")], ids=["max ties", "prod at a zero"])
def test_shape_group_kinks_follow_the_pullback_and_torch(ours, theirs):
    """max's tied elements share the tangent evenly (the transpose of its pullback, and torch.amax's JVP);
    prod at an exact zero is exact at first order."""
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 5.0]])
    v = np.array([[0.5, 1.0, 2.0], [1.0, 4.0, -1.0]])
    u = np.array([1.0, -2.0])
    out, jv = jvp(ours, x, v)
    np.testing.assert_allclose(u @ jv, np.vdot(vjp(ours, x)[1](u), v), rtol=1e-12)
    want = torch.func.jvp(lambda a: getattr(torch, theirs)(a, dim=1), (torch.tensor(x),), (torch.tensor(v),))[1]
    np.testing.assert_allclose(jv, want.numpy(), rtol=1e-12)


# --- group "elementwise": JVP rules of the elementwise, complex, broadcast, named-reduction and nn ops ----

import re  # noqa: E402

import autodiff.nn.functional as F  # noqa: E402
from autodiff._jvp_rules import _jvp_rules  # noqa: E402
from autodiff.extend import Primitive  # noqa: E402
from autodiff.numpy import (  # noqa: E402
    _angles,
    _binary,
    _broadcast,
    _cleanup,
    _complex,
    _elementwise,
    _named,
    _real_functions,
    _remainder,
    _sinc,
    _transcendental,
)

ELEMENTWISE_MODULES = [_elementwise, _transcendental, _binary, _complex, _broadcast, _named, F, _remainder,
                       _sinc, _angles, _real_functions, _cleanup]


def _defined_primitives(module):
    """The primitives a module makes itself (``name = primitive(...)``), not those it imports."""
    with open(module.__file__) as f:
        made = set(re.findall(r"^(\w+) = primitive\(", f.read(), re.M))
    return {name: v for name, v in vars(module).items() if isinstance(v, Primitive) and name in made}


@pytest.mark.parametrize("module", ELEMENTWISE_MODULES, ids=lambda m: m.__name__)
def test_elementwise_every_primitive_has_its_own_jvp_rule(module):
    defined = _defined_primitives(module)
    assert [name for name, p in defined.items() if p not in _jvp_rules] == []
    if module is not _cleanup:  # _cleanup composes other ops and defines no primitive
        assert defined


def _rule_column(f, *args, tangents):
    """``{op name: how its tangent was made}`` from the trace of a pushforward."""
    lines = [line.split("  #")[0] for line in str(autodiff.trace(f, *args, tangents=tangents)).splitlines()
             if "  tangent " in line and " = " in line]
    return {line.split(" = ")[1].split("(")[0]: line.rsplit("  (", 1)[1] for line in lines}


Z = np.array([0.3 - 1.2j, -0.7 + 0.4j, 1.1 + 0.0j])
ZV = np.array([1.0 + 0.5j, -0.3 + 2.0j, 0.7 - 1.0j])

F32 = np.dtype(np.float32)
ELEMENTWISE_KINDS = {
    "linear": (lambda x: _broadcast.cast(anp.broadcast_to(anp.deg2rad(-x) * 2.0, (2, 3)), F32), (X, V)),
    "one jvp per argument": (lambda x: anp.where(x > 0, x + 1.0, 2.0 - x), (X, V)),
    "chain rule": (lambda x: anp.sinh(anp.exp(anp.sqrt(x * x))) / x ** 2.0, (X, V)),
    "choice": (lambda x: anp.clip(anp.maximum(x, 0.1), -0.5, 0.7) + anp.remainder(x, 0.4), (X, V)),
    "non-holomorphic": (lambda z: anp.real(anp.conj(anp.sign(z)) * anp.abs(z)) + anp.imag(z), (Z, ZV)),
    "named reductions": (lambda x: anp.sumsq(x) + anp.abssum(x) * anp.maxabs(x), (X, V)),
    "nn": (lambda x: F.logsumexp(F.softmax(x) + F.log_softmax(F.relu(x) + F.softplus(F.sigmoid(x)))), (X, V)),
    "issue 13": (lambda x: anp.logaddexp2(anp.sinc(x), anp.fabs(x)) + anp.rad2deg(x), (X, V)),
}


@pytest.mark.parametrize("kind", list(ELEMENTWISE_KINDS))
def test_elementwise_trace_shows_own_rules_not_the_pullback(kind):
    f, (x, v) = ELEMENTWISE_KINDS[kind]
    rules = _rule_column(f, x, tangents=(v,))
    assert len(rules) >= 3 and set(rules.values()) == {"jvp rule)"}, rules
    assert gradcheck(lambda x: jvp(f, x, v)[1], x) if x.dtype.kind == "f" else True


def test_elementwise_fused_pullbacks_push_forward_with_their_own_rules():
    """Forward over reverse runs sin/cos/tanh's fused pullbacks on duals: each has its rule."""
    def f(x):
        return anp.sum(anp.sin(x) * anp.cos(x) + anp.tanh(x))

    rules = _rule_column(lambda x: grad(f)(x), X, tangents=(V,))
    assert {k: rules[k] for k in ("sin_backward", "cos_backward", "tanh_backward")} == dict.fromkeys(
        ("sin_backward", "cos_backward", "tanh_backward"), "jvp rule)")
    np.testing.assert_allclose(hvp(f, X, V), jacrev(grad(f))(X) @ V, rtol=1e-12)


def _complex_fd(f, z, v, eps=1e-6):
    return (f(z + eps * v) - f(z - eps * v)) / (2 * eps)


@pytest.mark.parametrize("name, f", [
    ("absolute", anp.absolute), ("sign", anp.sign), ("real", anp.real), ("imag", anp.imag), ("conj", anp.conj),
    ("sumsq", anp.sumsq), ("abssum", anp.abssum), ("maxabs", anp.maxabs), ("angle", anp.angle),
    ("square", anp.square), ("exp", anp.exp), ("divide", lambda z: 1.0 / z), ("power", lambda z: z ** 3.0),
])
def test_elementwise_complex_jvps_are_the_real_linear_derivative(name, f):
    """Complex input: J v against central differences, and Re Σ u (J v) = Re Σ vjp(u) v (JAX's convention)."""
    out, jv = jvp(f, Z, ZV)
    np.testing.assert_allclose(jv, _complex_fd(f, Z, ZV), rtol=1e-6, atol=1e-8)
    assert np.result_type(jv) == np.result_type(out)
    u = np.asarray(np.random.default_rng(1).standard_normal(np.shape(out)), np.result_type(out))
    assert np.isclose(np.real(np.sum(u * jv)), np.real(np.sum(vjp(f, Z)[1](u) * ZV)), rtol=1e-10)


def test_elementwise_at_exact_zeros_the_jvp_follows_the_vjp():
    """abs/sign of complex 0, hypot(0, 0), power(0, 0), maximum ties: the pushforward is the pullback's transpose."""
    cases = [(anp.abs, np.array([0j, 1 + 1j])), (anp.sign, np.array([0j, 1 + 1j])),
             (lambda x: anp.hypot(x, 0.0 * x), np.array([0.0, 2.0])),
             (lambda x: anp.power(x, 0.0 * x), np.array([0.0, 2.0])),
             (lambda x: anp.maximum(x, x) + anp.maxabs(anp.concatenate([x, -x])), np.array([0.5, -1.0]))]
    for f, x in cases:
        v = np.ones_like(x) * (1 + 0.5j if x.dtype.kind == "c" else 1.0)
        out, jv = jvp(f, x, v)
        u = np.ones(np.shape(out), np.result_type(out))
        assert np.all(np.isfinite(jv))
        np.testing.assert_allclose(np.real(np.sum(u * jv)), np.real(np.sum(vjp(f, x)[1](u) * v)), rtol=1e-12)


def test_elementwise_tangents_broadcast_and_keep_float32():
    """A smaller argument's tangent takes the output's shape; float32 stays float32 (Python-float constants)."""
    x, c = np.ones((2, 3), np.float32), np.float32(2.0)
    for f in (anp.add, anp.subtract, anp.multiply, anp.divide, anp.power, anp.maximum, anp.hypot, anp.arctan2,
              anp.logaddexp, anp.remainder, anp.logaddexp2, lambda a, b: anp.where(a > 0, a, b)):
        out, t = jvp(f, (x, c), (None, np.float32(1.0)))
        assert np.shape(t) == (2, 3) and np.result_type(t) == np.float32, f
    for f in (anp.exp2, anp.log1p, anp.arctan, anp.tanh, anp.sqrt, F.sigmoid, F.softplus, anp.sumsq):
        assert np.result_type(jvp(f, x, x)[1]) == np.float32, f


# === linear algebra: JVP rules of autodiff/numpy/linalg.py and autodiff/numpy/_decompositions.py ====
# (and a guard over layers/ and traversal/_total.py, which define no primitive of their own / have theirs)

LINALG_MODULES = ["autodiff.numpy.linalg", "autodiff.numpy._decompositions", "traversal._total", "layers._norm",
                  "layers._dense", "layers._embedding", "layers._pool", "layers.losses"]


def _elementwise_primitives_in(name):
    """The primitives among a module's globals that it defines (not those it imports from elsewhere)."""
    import ast
    import importlib
    import inspect

    from autodiff.extend import Primitive

    module = importlib.import_module(name)
    tree = ast.parse(inspect.getsource(module))
    imported = {a.asname or a.name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                for a in node.names}
    return {k: v for k, v in vars(module).items() if isinstance(v, Primitive) and k not in imported}


@pytest.mark.parametrize("name", LINALG_MODULES)
def test_linalg_every_primitive_has_its_own_jvp_rule(name):
    from autodiff._jvp_rules import _jvp_rules

    defined = _elementwise_primitives_in(name)
    if name.startswith("autodiff.numpy") or name == "traversal._total":
        assert defined, f"{name}: no primitive found; the lookup is broken"
    assert [k for k, p in defined.items() if p not in _jvp_rules] == []


def _linalg_matrix(shape, seed=0, dtype=np.float64):
    """Near a diagonal of well-separated entries: invertible, distinct singular values and eigenvalues."""
    from linalg_cases import separated

    return separated(np.random.default_rng(seed).standard_normal(shape)).astype(dtype)


def _spd_matrix(n, seed=0):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


LINALG_TRACED = {  # one op of each kind: name in the trace, function, input
    "norm": (lambda a: anp.linalg.norm(a), _linalg_matrix((3, 3))),
    "inv": (anp.linalg.inv, _linalg_matrix((3, 3))),
    "solve": (lambda a: anp.linalg.solve(a, np.ones(3)), _linalg_matrix((3, 3))),
    "det": (anp.linalg.det, _linalg_matrix((3, 3))),
    "slogdet": (lambda a: anp.linalg.slogdet(a)[1], _linalg_matrix((3, 3))),
    "cholesky": (anp.linalg.cholesky, _spd_matrix(3)),
    "svd": (lambda a: anp.linalg.svd(a, full_matrices=False)[1], _linalg_matrix((4, 2))),
    "svdvals": (lambda a: anp.linalg.svd(a, compute_uv=False), _linalg_matrix((2, 3))),
    "eigh": (lambda a: anp.linalg.eigh(a)[0], _linalg_matrix((3, 3))),
    "eig": (lambda a: anp.real(anp.linalg.eig(a)[0]), _linalg_matrix((3, 3))),
    "pinv": (anp.linalg.pinv, _linalg_matrix((4, 2))),
}


@pytest.mark.parametrize("name", LINALG_TRACED)
def test_linalg_trace_shows_the_jvp_rule_not_the_pullback(name):
    f, a = LINALG_TRACED[name]
    lines = str(autodiff.trace(f, a, tangents=(np.ones_like(a),))).splitlines()
    ours = [line for line in lines if f"= {name}(" in line]
    assert len(ours) == 1 and ours[0].endswith("(jvp rule)"), lines


def _torch_svd_invariant(svd, real, conj, a):
    u, s, vh = svd(a)
    return (real(u * conj(u)) * 0.7).sum() + (s ** 3).sum() + real((u * s[..., None, :] ** 2) @ vh).sum() \
        + (real(vh * conj(vh)) * 0.3).sum()


def _linalg_torch_cases():
    import torch

    wide, tall, sq = _linalg_matrix((2, 3)), _linalg_matrix((2, 4, 2)), _linalg_matrix((3, 3))
    csq = sq + 0.05j * np.random.default_rng(5).standard_normal((3, 3))
    turn = np.array([[1.0, 2.0, 0.0], [-2.0, 1.0, 0.0], [0.0, 0.0, 4.0]]) + 0.05 * sq  # complex eigenvalues
    svd_ours = lambda a: _torch_svd_invariant(lambda x: anp.linalg.svd(x, full_matrices=False), anp.real,  # noqa: E731
                                               anp.conj, a)
    svd_theirs = lambda a: _torch_svd_invariant(lambda x: torch.linalg.svd(x, full_matrices=False),  # noqa: E731
                                                 torch.real, torch.conj, a)
    eig_ours = lambda a: anp.sum(anp.real(anp.linalg.eig(a)[0] ** 2)) + anp.sum(  # noqa: E731
        anp.real(anp.linalg.eig(a)[1] * anp.conj(anp.linalg.eig(a)[1])) * sq)
    eig_theirs = lambda a: torch.real(torch.linalg.eig(a)[0] ** 2).sum() + (  # noqa: E731
        torch.real(torch.linalg.eig(a)[1] * torch.linalg.eig(a)[1].conj()) * torch.tensor(sq)).sum()
    eigh_ours = lambda a: anp.linalg.eigh(a)[0] + anp.sum(anp.linalg.eigh(a)[1] ** 2 * sq, axis=0)  # noqa: E731
    eigh_theirs = lambda a: torch.linalg.eigh(a)[0] + (torch.linalg.eigh(a)[1] ** 2 * torch.tensor(sq)).sum(0)  # noqa: E731
    return {
        "svd wide": (wide, svd_ours, svd_theirs), "svd tall batched": (tall, svd_ours, svd_theirs),
        "svd complex": (csq, svd_ours, svd_theirs),
        "svdvals": (tall, lambda a: anp.linalg.svd(a, compute_uv=False), torch.linalg.svdvals),
        "eigh": (sq + sq.T, eigh_ours, eigh_theirs),
        "eig complex eigenvalues": (turn, eig_ours, eig_theirs),
        "pinv": (tall, anp.linalg.pinv, torch.linalg.pinv), "pinv complex": (csq, anp.linalg.pinv, torch.linalg.pinv),
        "slogdet complex": (csq, lambda a: anp.stack(list(anp.linalg.slogdet(a))),
                            lambda a: torch.stack(list(torch.linalg.slogdet(a)))),
        "cholesky batched": (np.stack([_spd_matrix(3, 1), _spd_matrix(3, 2)]), anp.linalg.cholesky,
                             torch.linalg.cholesky),
        "norm complex": (csq, anp.linalg.norm, torch.linalg.norm),
    }


def _linalg_direction(a, rng):
    return rng.standard_normal(a.shape) + (1j * rng.standard_normal(a.shape) if np.iscomplexobj(a) else 0)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name", list(_linalg_torch_cases()))
def test_linalg_jvp_equals_torch_func_jvp(name, order):
    """Gauge-invariant functions of the decompositions, pushed forward: ours against torch.func.jvp."""
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    a, ours, theirs = _linalg_torch_cases()[name]
    rng = np.random.default_rng(7)
    v, w = _linalg_direction(a, rng), _linalg_direction(a, rng)
    if name.startswith(("eigh", "cholesky")):  # torch's rules assume a symmetric tangent (ours symmetrise)
        v, w = (v + np.swapaxes(v, -1, -2)) / 2, (w + np.swapaxes(w, -1, -2)) / 2
    ta, tv, tw = torch.tensor(a), torch.tensor(v), torch.tensor(w)
    if order == 1:
        mine = jvp(ours, (a,), (v,))[1]
        want = torch.func.jvp(theirs, (ta,), (tv,))[1]
    else:  # as in test_jvp_equals_torch_func_jvp: torch's reverse-mode jvp nested, the reliable oracle at order 2
        mine = jvp(lambda x: jvp(ours, (x,), (v,))[1], (a,), (w,))[1]
        inner = lambda x: torch.autograd.functional.jvp(theirs, (x,), (tv,), create_graph=True)[1]  # noqa: E731
        want = torch.autograd.functional.jvp(inner, (ta,), (tw,))[1]
    np.testing.assert_allclose(mine, want.detach().resolve_conj().numpy(), rtol=1e-8, atol=1e-10)


def test_linalg_cholesky_jvp_at_a_complex_matrix_raises_as_its_pullback_does():
    z = _spd_matrix(2) + 0.1j * np.array([[0.0, 1.0], [-1.0, 0.0]])
    with pytest.raises(NotImplementedError, match=r"cholesky: the derivative at a complex \(Hermitian\) matrix"):
        jvp(anp.linalg.cholesky, (z,), (np.ones_like(z),))


# === group "autodiff.scipy": each primitive's JVP beside its VJP (special, linalg, signal, integrate) ==========

SCIPY_MODULES = ["autodiff.scipy.special._gamma", "autodiff.scipy.special._beta", "autodiff.scipy.special._erf",
                 "autodiff.scipy.special._logistic", "autodiff.scipy.special._logsumexp",
                 "autodiff.scipy.special._bessel", "autodiff.scipy.linalg", "autodiff.scipy.signal",
                 "autodiff.scipy.integrate"]


def _scipy_primitives():
    import importlib

    found = {}
    for name in SCIPY_MODULES:
        found.update({f"{name}.{k}": p for k, p in _primitives_defined_in(importlib.import_module(name)).items()})
    return found


def test_scipy_every_primitive_has_its_own_jvp_rule():
    found = _scipy_primitives()
    assert len(set(found.values())) >= 31  # gammaln ... odeint: the lookup itself finds them
    assert [k for k, p in found.items() if p not in _jvp_rules] == []


def _scipy_ops(x):
    import autodiff.scipy.linalg as sla
    import autodiff.scipy.signal as sig
    import autodiff.scipy.special as sp

    u = sp.expit(x)  # in (0, 1)
    special = (sp.gammaln(u + 1.0) + sp.digamma(u + 1.0) + sp.polygamma(2, u + 1.0) + sp.erf(x) + sp.erfc(x)
               + sp.erfinv(u - 0.5) + sp.ndtr(x) + sp.ndtri(u) + sp.log_ndtr(x) + sp.logit(u) + sp.xlogy(u, u + 1.0)
               + sp.xlog1py(u, u) + sp.entr(u) + sp.betaln(u + 1.0, 2.0) + sp.betainc(2.0, 3.0, u)
               + sp.stdtr(3.0, x) + sp.gammainc(2.0, u) + sp.gammaincc(2.0, u) + sp.i0(x) + sp.i1(x) + sp.i0e(x)
               + sp.i1e(x))
    m = anp.reshape(x[:4], (2, 2)) * 0.1
    tri = sla.solve_triangular(m + 2.0 * np.eye(2), x[4:], lower=True)
    shifted = m + 2.0 * np.eye(2)
    mats = sla.expm(m) + sla.sqrtm(shifted) + sla.logm(shifted) + sla.lu_factor(shifted)[0]
    return (anp.sum(special) + sp.logsumexp(x) + anp.sum(tri) + anp.sum(mats)
            + anp.sum(sig.convolve(x, x[:3])))


SCIPY_PRIMITIVE_NAMES = {"gammaln", "digamma", "polygamma", "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr",
                         "expit", "logit", "xlogy", "xlog1py", "entr", "betaln", "betainc", "stdtr", "gammainc",
                         "gammaincc", "i0", "i1", "i0e", "i1e", "logsumexp", "solve_triangular", "expm", "sqrtm",
                         "logm", "lu_factor", "convolve"}


def test_scipy_ops_push_through_their_own_rules_and_agree_with_the_pullbacks():
    x = np.array([0.7, -1.2, 1.5, 0.4, -0.3, 0.9])
    v = V[[0, 1, 2, 0, 1, 2]]
    rules = _rule_column(_scipy_ops, x, tangents=(v,))
    assert SCIPY_PRIMITIVE_NAMES <= set(rules)
    assert {name: rules[name] for name in SCIPY_PRIMITIVE_NAMES} == dict.fromkeys(SCIPY_PRIMITIVE_NAMES, "jvp rule)")
    np.testing.assert_allclose(jvp(_scipy_ops, x, v)[1], grad(_scipy_ops)(x) @ v, rtol=1e-10)


def test_scipy_odeint_pushes_through_its_sensitivity_rule_and_agrees_with_torch_matrix_exp():
    """A linear system's exact solution is expm(a t) y0: the JVP in y0, a and the times against torch.func.jvp."""
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    from autodiff.scipy.integrate import odeint

    rng = np.random.default_rng(4)
    a, y0, t = 0.5 * rng.standard_normal((2, 2)), rng.standard_normal(2), np.array([0.0, 0.4, 1.0])
    va, vy, vt = rng.standard_normal((2, 2)), rng.standard_normal(2), rng.standard_normal(3)

    def ours(a, y0, t):
        return odeint(lambda y, s, a: a @ y, y0, t, (a,), rtol=1e-12, atol=1e-12)

    def theirs(a, y0, t):
        return torch.stack([torch.linalg.matrix_exp(a * (s - t[0])) @ y0 for s in t])

    rules = _rule_column(ours, a, y0, t, tangents=(va, vy, vt))
    assert rules["odeint"] == "jvp rule)"
    mine = jvp(ours, (a, y0, t), (va, vy, vt))[1]
    want = torch.func.jvp(theirs, tuple(map(torch.tensor, (a, y0, t))), tuple(map(torch.tensor, (va, vy, vt))))[1]
    np.testing.assert_allclose(mine, want.numpy(), rtol=1e-8, atol=1e-10)
