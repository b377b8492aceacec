"""The built-in ops' own JVP rules, group by group (issue 16): shape, reductions, indexing and products;
elementwise, complex, broadcast, named reductions and nn; linear algebra; autodiff.scipy.  Each group: every
primitive its modules define has a JVP rule of its own, the trace shows that rule (not the pullback pushed
forward), and the tangents agree with the pullbacks, finite differences and torch.func.jvp."""

import ast
import importlib
import inspect
import re

import numpy as np
import pytest

import autodiff
import autodiff.nn.functional as F
import autodiff.numpy as anp
from autodiff import grad, gradcheck, hvp, jacrev, jvp, vjp
from autodiff.extend import Primitive
from tests.internals import jvp_rules, plain_results

X = np.array([0.3, -0.7, 1.1])
V = np.array([1.0, 0.5, -2.0])


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
    tree = ast.parse(inspect.getsource(module))
    assigned = [node for node in tree.body if isinstance(node, ast.Assign)]
    names = {t.id for node in assigned for t in node.targets if isinstance(t, ast.Name)}
    return {name: v for name, v in vars(module).items() if name in names and isinstance(v, Primitive)}


def test_shape_group_every_primitive_has_its_own_jvp_rule():
    found = {}
    for name in SHAPE_GROUP:
        found.update({f"{name}.{k}": p for k, p in _primitives_defined_in(importlib.import_module(name)).items()})
    assert len(set(found.values())) >= 25  # sum ... windows: the lookup itself finds them
    assert [k for k, p in found.items() if p not in jvp_rules] == []


def _shape_group_ops(x):
    from tests.internals import split_flat, unwindow, windows

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

ELEMENTWISE_MODULES = [
    "autodiff.numpy._elementwise", "autodiff.numpy._transcendental", "autodiff.numpy._binary",
    "autodiff.numpy._complex", "autodiff.numpy._broadcast", "autodiff.numpy._named", "autodiff.nn.functional",
    "autodiff.numpy._remainder", "autodiff.numpy._sinc", "autodiff.numpy._angles", "autodiff.numpy._real_functions",
    "autodiff.numpy._cleanup",
]


def _defined_primitives(name):
    """The primitives a module makes itself (``name = primitive(...)``), not those it imports."""
    module = importlib.import_module(name)
    with open(module.__file__) as f:
        made = set(re.findall(r"^(\w+) = primitive\(", f.read(), re.M))
    return {name: v for name, v in vars(module).items() if isinstance(v, Primitive) and name in made}


@pytest.mark.parametrize("module", ELEMENTWISE_MODULES)
def test_elementwise_every_primitive_has_its_own_jvp_rule(module):
    """Every primitive with a derivative, that is; a plain result's (unwrap's added periods) carries none."""
    defined = _defined_primitives(module)
    assert [name for name, p in defined.items() if p not in jvp_rules and p not in plain_results] == []
    if module != "autodiff.numpy._cleanup":  # _cleanup composes other ops and defines no primitive
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
    "linear": (lambda x: anp.cast(anp.broadcast_to(anp.deg2rad(-x) * 2.0, (2, 3)), F32), (X, V)),
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
    module = importlib.import_module(name)
    tree = ast.parse(inspect.getsource(module))
    imported = {a.asname or a.name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                for a in node.names}
    return {k: v for k, v in vars(module).items() if isinstance(v, Primitive) and k not in imported}


@pytest.mark.parametrize("name", LINALG_MODULES)
def test_linalg_every_primitive_has_its_own_jvp_rule(name):
    defined = _elementwise_primitives_in(name)
    if name.startswith("autodiff.numpy") or name == "traversal._total":
        assert defined, f"{name}: no primitive found; the lookup is broken"
    assert [k for k, p in defined.items() if p not in jvp_rules] == []


def _linalg_matrix(shape, seed=0, dtype=np.float64):
    """Near a diagonal of well-separated entries: invertible, distinct singular values and eigenvalues."""
    from tests.linalg_cases import separated

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
    found = {}
    for name in SCIPY_MODULES:
        found.update({f"{name}.{k}": p for k, p in _primitives_defined_in(importlib.import_module(name)).items()})
    return found


def test_scipy_every_primitive_has_its_own_jvp_rule():
    found = _scipy_primitives()
    assert len(set(found.values())) >= 31  # gammaln ... odeint: the lookup itself finds them
    assert [k for k, p in found.items() if p not in jvp_rules] == []


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
