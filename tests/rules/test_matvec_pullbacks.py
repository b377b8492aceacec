"""Every matmul form pulls back through matmuls of the right shapes (issue 20): checked at orders 1 and 2
against finite differences and against torch, in float32, float64 and complex, and on the tape: the
pullback of ``(N, D) @ (D,)`` records nothing of ``N * D`` elements, where it used to build a broadcast
product and sum it."""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, trace
from tests.internals import contract

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")


def _solve_stack_vector(t):
    """torch reads a (n,) right-hand side beside (2, n, n) as numpy does only once it is a column per system."""
    return lambda a, b: t.linalg.solve(a, b.expand(a.shape[:-1]).unsqueeze(-1)).squeeze(-1)


# name: (shapes, ours, torch's).  Each form is one of matmul's, or reduces to one.
FORMS = {
    "matvec": (((5, 4), (4,)), anp.matmul, torch.matmul),
    "batched matvec": (((2, 5, 4), (4,)), anp.matmul, torch.matmul),
    "vecmat": (((4,), (4, 3)), anp.matmul, torch.matmul),
    "batched vecmat": (((4,), (2, 4, 3)), anp.matmul, torch.matmul),
    "vecvec": (((4,), (4,)), anp.matmul, torch.matmul),
    "matmat": (((5, 4), (4, 3)), anp.matmul, torch.matmul),
    "batched @ matrix": (((2, 5, 4), (4, 3)), anp.matmul, torch.matmul),
    "matrix @ batched": (((5, 4), (2, 4, 3)), anp.matmul, torch.matmul),
    "broadcast batches": (((2, 1, 5, 4), (3, 4, 2)), anp.matmul, torch.matmul),
    "dot matvec": (((5, 4), (4,)), anp.dot, torch.matmul),
    "dot vecvec": (((4,), (4,)), anp.dot, torch.dot),
    "dot 3-D": (((2, 5, 4), (4, 3)), anp.dot, lambda a, b: torch.tensordot(a, b, dims=([2], [0]))),
    "inner": (((5, 4), (3, 4)), anp.inner, torch.inner),
    "outer": (((5,), (4,)), anp.outer, torch.outer),
    "vdot": (((2, 3), (6,)), anp.vdot, lambda a, b: torch.vdot(a.reshape(-1), b)),
    "tensordot": (((2, 3, 4), (3, 4, 5)), lambda a, b: anp.tensordot(a, b, axes=([1, 2], [0, 1])),
                  lambda a, b: torch.tensordot(a, b, dims=([1, 2], [0, 1]))),
    "tensordot axes=1": (((5, 4), (4,)), lambda a, b: anp.tensordot(a, b, axes=1),
                         lambda a, b: torch.tensordot(a, b, dims=1)),
    "einsum matvec": (((5, 4), (4,)), lambda a, b: anp.einsum("ij,j->i", a, b),
                      lambda a, b: torch.einsum("ij,j->i", a, b)),
    "einsum vecmat": (((5,), (5, 4)), lambda a, b: anp.einsum("i,ij->j", a, b),
                      lambda a, b: torch.einsum("i,ij->j", a, b)),
    "einsum transposed": (((4, 5), (3, 4)), lambda a, b: anp.einsum("ji,kj->ik", a, b),
                          lambda a, b: torch.einsum("ji,kj->ik", a, b)),
    "einsum batched": (((2, 5, 4), (2, 4, 3)), lambda a, b: anp.einsum("bij,bjk->bik", a, b),
                       lambda a, b: torch.einsum("bij,bjk->bik", a, b)),
    "einsum rowwise dot": (((5, 4), (5, 4)), lambda a, b: anp.einsum("ij,ij->i", a, b),
                           lambda a, b: torch.einsum("ij,ij->i", a, b)),
    "einsum summed first": (((5, 4), (4, 3)), lambda a, b: anp.einsum("ij,jk->k", a, b),
                            lambda a, b: torch.einsum("ij,jk->k", a, b)),
    "kron": (((2, 3), (2, 2)), anp.kron, torch.kron),
    "solve vector": (((4, 4), (4,)), anp.linalg.solve, torch.linalg.solve),
    "solve stack, one vector": (((2, 4, 4), (4,)), anp.linalg.solve, _solve_stack_vector(torch)),
    "solve stack, one matrix": (((4, 4, 4), (4, 4)), anp.linalg.solve,
                                lambda a, b: torch.linalg.solve(a, b.expand(a.shape))),
}

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _inputs(name, dtype, seed=0):
    r = np.random.default_rng(seed)
    shapes = FORMS[name][0]
    xs = [r.standard_normal(s) + (0.5j * r.standard_normal(s) if np.dtype(dtype).kind == "c" else 0) for s in shapes]
    if name.startswith("solve"):  # well conditioned
        xs[0] = xs[0] + 4 * np.eye(shapes[0][-1])
    return [x.astype(dtype) for x in xs]


def _weights(out_shape, dtype, seed):
    r = np.random.default_rng(seed)
    u = r.standard_normal(out_shape) + (1j * r.standard_normal(out_shape) if np.dtype(dtype).kind == "c" else 0)
    return u.astype(dtype)


def _tolerance(dtype):
    return {"rtol": 2e-4, "atol": 2e-4} if np.dtype(dtype) in (np.float32, np.complex64) else {"rtol": 1e-9,
                                                                                                 "atol": 1e-10}


def _ours_and_torch_loss(name, xs):
    """``L = Re sum(u * f(a, b)^2)``: a real loss whose Hessian involves both operands."""
    _, ours, theirs = FORMS[name]
    u = _weights(np.shape(ours(*xs)), xs[0].dtype, 1)
    ut = torch.tensor(u)
    return (lambda a, b: anp.real(anp.sum(u * ours(a, b) ** 2)),
            lambda a, b: torch.real(torch.sum(ut * theirs(a, b) ** 2)))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", FORMS)
def test_form_matches_torch_at_orders_1_and_2(name, dtype):
    """Gradient and Hessian-vector product of a real loss, ours against torch's conjugated (docs/complex.md)."""
    xs = _inputs(name, dtype)
    ours, theirs = _ours_and_torch_loss(name, xs)
    vs = [_weights(x.shape, dtype, 2 + k) for k, x in enumerate(xs)]
    g = grad(ours, argnums=(0, 1))(*xs)
    hv = grad(lambda a, b: sum(anp.real(anp.sum(gk * v)) for gk, v in zip(grad(ours, argnums=(0, 1))(a, b), vs)),
              argnums=(0, 1))(*xs)
    ts = [torch.tensor(x, requires_grad=True) for x in xs]
    gt = torch.autograd.grad(theirs(*ts), ts, create_graph=True)
    # ours is conj(torch's), so our <g, v> is Re sum(conj(torch's g) * v)
    inner = sum(torch.real(torch.sum(torch.conj(gk) * torch.tensor(v))) for gk, v in zip(gt, vs))
    hvt = torch.autograd.grad(inner, ts)
    for mine, theirs_ in zip(list(g) + list(hv), list(gt) + list(hvt)):
        assert mine.dtype == xs[0].dtype
        np.testing.assert_allclose(mine, np.conj(theirs_.detach().resolve_conj().numpy()), **_tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", FORMS)
def test_form_passes_gradcheck_at_orders_1_and_2(name, dtype):
    f = FORMS[name][1]
    xs = _inputs(name, dtype, seed=3)
    assert gradcheck(lambda a, b: f(a, b) * f(a, b), *xs, order=1)
    assert gradcheck(lambda a, b: f(a, b) * f(a, b), *xs, order=2)


def test_real_operand_of_a_complex_product_gets_a_real_cotangent():
    a, b = _inputs("matvec", np.complex128)[0], _inputs("matvec", np.float64)[1]
    ga, gb = grad(lambda a, b: anp.real(anp.sum((a @ b) ** 2)), argnums=(0, 1))(a, b)
    assert ga.dtype == np.complex128 and gb.dtype == np.float64
    assert gradcheck(lambda a, b: (a @ b) ** 2, a, b, order=2)


def _broadcast_products(f, *args):
    """Every elementwise product recorded while ``f`` ran whose output is larger than each of its inputs:
    a broadcast product, which a pullback then sums back (what a GEMV does in one pass)."""
    found = []
    for tape in trace(f, *args).tapes:
        for prim, _, _, ans, inputs, _ in tape.entries:
            sizes = [np.size(autodiff.stop_gradient(x)) for x in inputs]
            if prim is not None and prim.__name__ == "multiply" and np.size(autodiff.stop_gradient(ans)) > max(sizes):
                found.append((prim.__name__, [np.shape(autodiff.stop_gradient(x)) for x in inputs]))
    return found


@pytest.mark.parametrize("name", FORMS)
def test_form_pullbacks_of_orders_1_and_2_make_no_broadcast_product(name):
    """The second-order pullbacks are recorded by a third derivative, so both orders are inspected."""
    xs = _inputs(name, np.float64)
    ours, _ = _ours_and_torch_loss(name, xs)
    vs = [_weights(x.shape, np.float64, 2 + k) for k, x in enumerate(xs)]
    hvp = grad(lambda a, b: sum(anp.vdot(gk, v) for gk, v in zip(grad(ours, argnums=(0, 1))(a, b), vs)),
               argnums=(0, 1))
    assert _broadcast_products(lambda a, b: sum(anp.vdot(h, v) for h, v in zip(hvp(a, b), vs)), *xs) == []


# --- The tape: no N x D-sized op in the pullbacks of a matrix-vector product ----------------------------------

N, D = 40, 7


def _logistic(X, y):
    return lambda w: anp.mean(anp.logaddexp(0.0, -y * (X @ w)))


def _sizes_recorded(f, *args):
    """(op name, output size) of every entry on every tape ``f`` opened: pullbacks run under an outer
    derivative record their ops, so this lists what each lower-order pullback computed."""
    t = trace(f, *args)
    return [(e[0].__name__, int(np.size(autodiff.stop_gradient(e[3])))) for tape in t.tapes for e in tape.entries
            if e[0] is not None and not isinstance(e[3], tuple)]


def _data(seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal((N, D)), np.sign(r.standard_normal(N)), r.standard_normal(D), r.standard_normal(D)


def test_matvec_gradient_records_nothing_of_size_n_times_d():
    X, y, w, v = _data()
    loss = _logistic(X, y)
    first = _sizes_recorded(lambda w: anp.vdot(grad(loss)(w), v), w)  # grad's pullback, recorded
    assert max(size for _, size in first) <= N
    assert ("matmul", D) in first  # the cotangent of w: one GEMV g @ X


def test_matvec_hvp_records_nothing_of_size_n_times_d():
    """The Hessian-vector product's ops (the pullback of the pullback) recorded under a third derivative."""
    X, y, w, v = _data()
    loss = _logistic(X, y)
    hvp = grad(lambda w: anp.vdot(grad(loss)(w), v))
    recorded = _sizes_recorded(lambda w: anp.vdot(hvp(w), v), w)
    assert max(size for _, size in recorded) <= N
    assert sum(name == "matmul" for name, _ in recorded) >= 4  # X w, g X, X h, ... all GEMVs


@pytest.mark.parametrize("order", [1, 2])
def test_one_dimensional_weights_record_no_more_than_a_column(order):
    """The same loss with ``w`` and with ``w[:, None]`` records as many ops for the gradient (order 1) and
    the HVP (order 2): the 1-D form costs no extra pass (issue 20 measured 2.97 ms against 0.55 ms before)."""
    X, y, w, v = _data()
    flat, column = _logistic(X, y), lambda w: anp.mean(anp.logaddexp(0.0, -y[:, None] * (X @ w)))

    def lift(f):
        return grad(f) if order == 1 else grad(lambda w: anp.vdot(anp.ravel(grad(f)(w)), anp.reshape(v, w.shape)))

    n_flat = len(_sizes_recorded(lambda w: anp.vdot(lift(flat)(w), v), w))
    n_column = len(_sizes_recorded(lambda w: anp.vdot(anp.ravel(lift(column)(w[:, None])), v), w))
    assert n_flat <= n_column


MATVECS = {
    "einsum ij,j->i": lambda X, w: anp.einsum("ij,j->i", X, w),
    "einsum j,ij->i": lambda X, w: anp.einsum("j,ij->i", w, X),
    "einsum ij,kj->ik": lambda X, w: anp.einsum("ij,kj->ik", X, w[None, :])[:, 0],
    "tensordot": lambda X, w: anp.tensordot(X, w, axes=1),
    "inner": lambda X, w: anp.inner(X, w),
    "dot": lambda X, w: anp.dot(X, w),
}


@pytest.mark.parametrize("form", MATVECS)
def test_other_matvec_forms_record_nothing_of_size_n_times_d(form):
    X, y, w, v = _data()
    loss = lambda w: anp.mean(anp.logaddexp(0.0, -y * MATVECS[form](X, w)))  # noqa: E731
    hvp = grad(lambda w: anp.vdot(grad(loss)(w), v))
    assert max(size for _, size in _sizes_recorded(lambda w: anp.vdot(hvp(w), v), w)) <= N
    np.testing.assert_allclose(hvp(w), grad(lambda w: anp.vdot(grad(_logistic(X, y))(w), v))(w), rtol=1e-12)


def test_batched_matvec_pullback_records_nothing_of_the_stack_size():
    r = np.random.default_rng(1)
    X, w, v = r.standard_normal((3, N, D)), r.standard_normal(D), r.standard_normal(D)
    loss = lambda w: anp.sum(anp.tanh(X @ w))  # noqa: E731
    hvp = grad(lambda w: anp.vdot(grad(loss)(w), v))
    assert max(size for _, size in _sizes_recorded(lambda w: anp.vdot(hvp(w), v), w)) <= 3 * N


# --- Two-operand einsum through one matmul --------------------------------------------------------------------

CONTRACTIONS = [
    ("ij,jk->ik", (3, 4), (4, 5)), ("ij,j->i", (3, 4), (4,)), ("j,jk->k", (4,), (4, 5)), ("i,i->", (4,), (4,)),
    ("i,j->ij", (3,), (4,)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), ("ij,ij->i", (3, 4), (3, 4)),
    ("abc,cad->db", (2, 3, 4), (4, 2, 5)), ("ij,k->ik", (2, 3), (4,)), ("ij,kl->", (2, 3), (4, 5)),
    (",i->i", (), (3,)), (",->", (), ()), ("ij,jk->ik", (0, 4), (4, 5)), ("ij,jk->ik", (3, 0), (0, 5)),
    ("bj,jb->b", (3, 4), (4, 3)), ("ikjl,kl->ij", (2, 3, 4, 5), (3, 5)),
    # not matmuls: numpy.einsum's own loops
    ("ii,ij->j", (3, 3), (3, 4)), ("ij,j->i", (3, 4), (1,)),
]


@pytest.mark.parametrize("subscripts,sa,sb", CONTRACTIONS)
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float64), (np.complex128, np.float32),
                                    (np.int64, np.float32)], ids=["f64", "f32-f64", "c128-f32", "int-f32"])
def test_contract_equals_numpy_einsum(subscripts, sa, sb, dtypes):
    r = np.random.default_rng(0)
    a, b = (r.standard_normal(sa) * 3).astype(dtypes[0]), (r.standard_normal(sb) * 3).astype(dtypes[1])
    got, expected = contract(subscripts, a, b), np.einsum(subscripts, a, b)
    assert np.result_type(got) == np.result_type(expected) and np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-5 if np.float32 in dtypes else 1e-12, atol=1e-6)


def _no_einsum(*args, **kwargs):
    raise AssertionError("numpy.einsum was called: this form should run as a matmul")


@pytest.mark.parametrize("name", ["tensordot", "inner", "outer", "vdot", "dot 3-D", "einsum matvec",
                                  "einsum transposed", "einsum batched", "kron"])
def test_einsum_forms_never_reach_numpy_einsum_at_orders_1_and_2(name, monkeypatch):
    """numpy.einsum's own loops never call BLAS; these forms and their pullbacks of both orders are matmuls."""
    f, xs = FORMS[name][1], _inputs(name, np.float64)
    ours, _ = _ours_and_torch_loss(name, xs)
    expected = grad(lambda a, b: anp.sum(grad(ours, argnums=(0, 1))(a, b)[0]), argnums=(0, 1))(*xs)
    monkeypatch.setattr(np, "einsum", _no_einsum)
    got = grad(lambda a, b: anp.sum(grad(ours, argnums=(0, 1))(a, b)[0]), argnums=(0, 1))(*xs)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    assert np.shape(f(*xs)) == np.shape(FORMS[name][2](*[torch.tensor(x) for x in xs]))


def test_jvp_of_matvec_matches_the_pullback():
    X, y, w, v = _data()
    loss = _logistic(X, y)
    _, hv_forward = autodiff.jvp(grad(loss), (w,), (v,))
    hv_reverse = grad(lambda w: anp.vdot(grad(loss)(w), v))(w)
    np.testing.assert_allclose(hv_forward, hv_reverse, rtol=1e-12)


# --- The three GEMM forms: matmul, matmul_nt (a bᵀ), matmul_tn (aᵀ b) ------------------------------------------


def _mlp_loss(params, x, y):
    from autodiff.nn.functional import linear

    (w1, b1), (w2, b2) = params
    return anp.mean((linear(anp.tanh(linear(x, w1, b1)), w2, b2) - y) ** 2)


def _mlp_data(seed=0):
    r = np.random.default_rng(seed)
    params = [(r.standard_normal((5, 3)), r.standard_normal(5)), (r.standard_normal((2, 5)), r.standard_normal(2))]
    return params, r.standard_normal((4, 3)), r.standard_normal((4, 2))


def test_derivatives_of_every_order_through_linear_record_no_transpose():
    """matmul's, matmul_nt's and matmul_tn's pullbacks are GEMMs of the three forms, so a gradient, a Hessian-
    vector product and a third derivative through ``F.linear`` record no transpose at all (MAML's meta-gradient
    recorded 804 among 2922 ops before)."""
    params, x, y = _mlp_data()
    v = autodiff.stop_gradient(params)
    inner = grad(_mlp_loss)
    second = grad(lambda p: sum(anp.vdot(a, b) for ga, va in zip(inner(p, x, y), v) for a, b in zip(ga, va)))
    third = lambda p: sum(anp.sum(a) for ga in second(p) for a in ga)  # noqa: E731
    names = [name for name, _ in _sizes_recorded(third, params)]
    assert "transpose" not in names and "swapaxes" not in names
    assert {"matmul", "matmul_nt", "matmul_tn"} <= set(names)


def test_linear_equals_torch_to_second_order():
    """``F.linear`` against ``torch.nn.functional.linear``: value, gradient and a Hessian-vector product."""
    params, x, y = _mlp_data(1)
    v = [(np.ones_like(w), np.full_like(b, 0.5)) for w, b in params]
    ts = [torch.tensor(a, requires_grad=True) for pair in params for a in pair]
    tx, ty = torch.tensor(x), torch.tensor(y)
    F = torch.nn.functional
    t_loss = ((F.linear(torch.tanh(F.linear(tx, ts[0], ts[1])), ts[2], ts[3]) - ty) ** 2).mean()
    t_grads = torch.autograd.grad(t_loss, ts, create_graph=True)
    t_hv = torch.autograd.grad(sum((g * torch.tensor(a)).sum() for g, a in zip(t_grads, [a for p in v for a in p])), ts)
    np.testing.assert_allclose(_mlp_loss(params, x, y), t_loss.item(), rtol=1e-12)
    ours = [a for p in grad(_mlp_loss)(params, x, y) for a in p]
    for a, b in zip(ours, t_grads):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-10)
    hv = [a for p in autodiff.hvp(lambda p: _mlp_loss(p, x, y), (params,), (v,))[0] for a in p]
    for a, b in zip(hv, t_hv):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-10, atol=1e-12)


def test_linear_of_one_example_is_a_gemv_and_batches_under_vmap():
    """One example's ``x`` (a vector) takes the matmul path; ``vmap`` over rows equals the batched call, and
    per-example gradients equal a loop of gradients."""
    from autodiff.nn.functional import linear

    params, x, y = _mlp_data(2)
    (w, b), _ = params
    np.testing.assert_allclose(autodiff.vmap(lambda r: linear(r, w, b))(x), linear(x, w, b), rtol=1e-13)
    per_example = autodiff.vmap(grad(lambda p, r, t: _mlp_loss(p, r[None], t[None])), in_axes=(None, 0, 0))(
        params, x, y)
    for i in range(len(x)):
        loop = grad(_mlp_loss)(params, x[i:i + 1], y[i:i + 1])
        for a, b in zip([a for p in per_example for a in p], [a for p in loop for a in p]):
            np.testing.assert_allclose(a[i], b, rtol=1e-10, atol=1e-13)
