"""Forward mode (issue 16): dual values, JVP rules and their fallback, nesting with reverse mode,
every op of the table pushed forward, and the forward transforms (jvp, jacfwd, hvp, linearize).
The built-in ops' own JVP rules, group by group, are in ``tests/rules/test_jvp_rules.py``."""

import gc
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, hessian, hvp, jacfwd, jacrev, jvp, linearize, vjp
from autodiff.extend import ZeroTangent, defjvp, defjvp_joint, deflinear, defvjp, primitive, value_of
from tests.gallery import gallery
from tests.hypothesis_policy import DERANDOMIZE
from tests.op_table import OPS
from tests.tree_asserts import assert_same_tree
from tests.trees import leaves
from traversal import fmap, fmap_with_path, isnumeric, total

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
    from tests.rules.test_numpy_vs_torch import CASES

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
    from tests.gallery import gallery

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
        if type(v) in (dict, list, tuple):  # an empty container stays what it is
            return v
        if isinstance(v, float):
            return float(rng.standard_normal())
        if not isinstance(v, (np.ndarray, np.generic)) or v.dtype.kind not in "fc":
            return None
        r = rng.standard_normal(np.shape(v)) + (1j * rng.standard_normal(np.shape(v)) if v.dtype.kind == "c" else 0)
        return np.asarray(r, v.dtype)

    return fmap_with_path(leaf, tree, cache=False)  # a tie gets a value per position


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
    from tests.modes import REFERENCE

    t = autodiff.trace(lambda m: total(anp.sumsq, m), model, tangents=(v,))
    rows = [line.split(" = ")[1] for line in str(t).splitlines() if " = " in line]
    if REFERENCE:  # the generic entry (the fused one is an acceleration): f pushed per parameter inside
        assert rows == ["total(<f=sumsq>, 0.0, %0, %1) -> float64[]  tangent float64[]  (jvp rule)"] + [
            "sumsq(%0) -> float64[]  tangent float64[]  (jvp rule)"] * 2  # each in a level of its own
    else:
        assert rows == ["total(<sumsq>, 0.0, %0, %1) -> float64[]  tangent float64[]  (jvp rule)"]
    assert gradcheck(lambda m: jvp(lambda m: total(anp.sumsq, m), m, v)[1], model, order=2)
    assert gradcheck(lambda d: jvp(lambda m: total(anp.linalg.norm, m), model, d)[1], v)
