"""Complex numbers under JAX's convention (docs/complex.md): ours == conj(torch's .grad) for a real loss.

Three oracles: central finite differences (``gradcheck`` pairs cotangents with tangents by
``Re(sum(u * v))``, the convention's pairing), PyTorch's complex autograd mapped through the convention,
and, for real inputs passing through complex intermediates, PyTorch and finite differences directly.
"""

import operator
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff
import autodiff.numpy as anp
from autodiff import grad, gradcheck, holomorphic_grad
from tests.hypothesis_policy import DERANDOMIZE
from tests.op_table import OPS
from tests.oracle import needs_torch, torch

SETTINGS = settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=DERANDOMIZE)

rng = np.random.default_rng(0)
Z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
W = rng.standard_normal(4) + 1j * rng.standard_normal(4)
U = rng.standard_normal(8) + 1j * rng.standard_normal(8)  # the cotangent of a complex output (its first n)
M = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4)) + 3 * np.eye(4)


# --- Real in, real out, through complex intermediates -------------------------------------------------------

def _real_through_complex(lib):
    """Real-valued functions of a real vector ``x`` whose insides are complex (numpy/anp or torch)."""
    c = (lambda a: torch.tensor(a)) if lib is torch else (lambda a: a)
    to_c = (lambda x: x.to(torch.complex128)) if lib is torch else (lambda x: x)
    vnorm = (lambda v, **kw: torch.linalg.vector_norm(v, **kw)) if lib is torch else anp.linalg.norm
    return {
        "abs of exp(i x)(1 + x)": lambda x: lib.sum(lib.abs(lib.exp(1j * x) * (1 + x))),
        "real of outer squared": lambda x: lib.real(lib.sum(lib.outer(to_c(x), c(W)) ** 2)),
        "norm": lambda x: vnorm(x * c(W) + c(Z)),
        "norm ord=3": lambda x: vnorm(x * c(W) + c(Z), ord=3),
        "imag of log": lambda x: lib.sum(lib.imag(lib.log(x + 2j))),
        "|M x|^2": lambda x: lib.sum(lib.abs(c(M) @ to_c(x)) ** 2),
        "real of M^-1 x": lambda x: lib.sum(lib.real(lib.linalg.solve(c(M), to_c(x)))),
        "real of conj product": lambda x: lib.sum(lib.real(lib.conj(x * c(W)) * lib.sin(x + c(Z)))),
        "var": lambda x: lib.var(x * c(W), unbiased=False) if lib is torch else anp.var(x * W),
        "concatenate": lambda x: lib.sum(lib.abs(lib.cat([x, c(W)]) if lib is torch else anp.concatenate([x, W])) ** 3),
        "slogdet": lambda x: (lib.linalg.slogdet(c(M) + lib.diag(to_c(x)))[1] +
                              lib.real(lib.linalg.slogdet(c(M) + lib.diag(to_c(x)))[0] * (0.3 - 1j))),
    }


REAL_THROUGH_COMPLEX = list(_real_through_complex(np))


@needs_torch
@pytest.mark.parametrize("name", REAL_THROUGH_COMPLEX)
def test_real_function_through_complex_intermediates(name):
    ours = _real_through_complex(anp)[name]
    theirs = _real_through_complex(torch)[name]
    x = rng.standard_normal(4)
    assert gradcheck(ours, x, order=1)
    assert gradcheck(ours, x, order=2)
    xt = torch.tensor(x, requires_grad=True)
    (g,) = torch.autograd.grad(theirs(xt), xt, create_graph=True)
    v = U.real[:4]
    linear = not g.requires_grad  # torch's graph of a linear function's gradient ends at g
    hv = torch.zeros_like(xt) if linear else torch.autograd.grad(torch.sum(g * torch.tensor(v)), xt)[0]
    assert np.allclose(grad(ours)(x), g.detach().numpy())
    (ours_hv,) = autodiff.hvp(ours, (x,), (v,))
    assert ours_hv.dtype == np.float64 and np.allclose(ours_hv, hv.numpy())


# --- Complex inputs against torch's complex autograd --------------------------------------------------------

def _complex_cases(lib):
    """Ops on complex inputs ``(z, w)``, written once for anp and once for torch."""
    t = lib is torch
    eye = torch.eye(4) if t else np.eye(4)
    return {
        "sin": lambda z, w: lib.sin(z), "cos": lambda z, w: lib.cos(z), "tanh": lambda z, w: lib.tanh(z),
        "exp": lambda z, w: lib.exp(z), "log": lambda z, w: lib.log(z), "sqrt": lambda z, w: lib.sqrt(z),
        "square": lambda z, w: lib.square(z), "abs": lambda z, w: lib.abs(z),
        "sign": lambda z, w: lib.sgn(z) if t else anp.sign(z),
        "multiply": lambda z, w: z * w, "divide": lambda z, w: z / w, "power": lambda z, w: z ** w,
        "power of const": lambda z, w: z ** 2.5, "reciprocal": lambda z, w: lib.reciprocal(z),
        "exp2": lambda z, w: lib.exp2(z) if not t else 2 ** z,
        "log2": lambda z, w: lib.log2(z), "log10": lambda z, w: lib.log10(z), "log1p": lambda z, w: lib.log1p(z),
        "expm1": lambda z, w: lib.expm1(z), "tan": lambda z, w: lib.tan(z),
        "arcsin": lambda z, w: lib.asin(z) if t else anp.arcsin(z),
        "arccos": lambda z, w: lib.acos(z) if t else anp.arccos(z),
        "arctan": lambda z, w: lib.atan(z) if t else anp.arctan(z),
        "sinh": lambda z, w: lib.sinh(z), "cosh": lambda z, w: lib.cosh(z),
        "arcsinh": lambda z, w: lib.asinh(z) if t else anp.arcsinh(z),
        "arccosh": lambda z, w: lib.acosh(z + 3) if t else anp.arccosh(z + 3),
        "arctanh": lambda z, w: lib.atanh(z / 4) if t else anp.arctanh(z / 4),
        "real": lambda z, w: lib.real(z) * w, "imag": lambda z, w: lib.imag(z) * w,
        "conj": lambda z, w: lib.conj(z) * w,
        "sum": lambda z, w: lib.sum(z * w), "mean": lambda z, w: lib.mean(z),
        "prod": lambda z, w: lib.prod(z), "cumsum": lambda z, w: lib.cumsum(z, 0) if t else anp.cumsum(z),
        "cumprod": lambda z, w: lib.cumprod(z, 0) if t else anp.cumprod(z),
        "var": lambda z, w: lib.var(z, unbiased=False) if t else anp.var(z),
        "std": lambda z, w: lib.std(z, unbiased=False) if t else anp.std(z),
        "norm": lambda z, w: lib.linalg.vector_norm(z) if t else anp.linalg.norm(z),
        "norm ord=3": lambda z, w: lib.linalg.vector_norm(z, ord=3) if t else anp.linalg.norm(z, 3),
        "norm ord=1": lambda z, w: lib.linalg.vector_norm(z, ord=1) if t else anp.linalg.norm(z, 1),
        "fro": lambda z, w: (lib.linalg.matrix_norm(lib.outer(z, w)) if t else
                             anp.linalg.norm(anp.outer(z, w), "fro")),
        "norm axis": lambda z, w: (lib.linalg.vector_norm(lib.outer(z, w), dim=0) if t else
                                   anp.linalg.norm(anp.outer(z, w), axis=0)),
        "sumsq": lambda z, w: lib.sum(lib.abs(z) ** 2) if t else anp.sumsq(z),
        "abssum": lambda z, w: lib.sum(lib.abs(z)) if t else anp.abssum(z),
        "maxabs": lambda z, w: lib.max(lib.abs(z)) if t else anp.maxabs(z),
        "matmul": lambda z, w: lib.outer(z, w) @ z if t else anp.outer(z, w) @ z,
        "outer": lambda z, w: lib.outer(z, w), "inner": lambda z, w: lib.inner(z, w),
        "vdot": lambda z, w: lib.vdot(z, w),
        "tensordot": lambda z, w: lib.tensordot(lib.outer(z, w), z, dims=1) if t else
                                  anp.tensordot(anp.outer(z, w), z, axes=1),
        "concatenate": lambda z, w: lib.cat([z, w]) if t else anp.concatenate([z, w]),
        "stack": lambda z, w: lib.stack([z, w], 1) if t else anp.stack([z, w], 1),
        "getitem": lambda z, w: z[[0, 0, 2]],
        "inv": lambda z, w: lib.linalg.inv(lib.outer(z, w) + 3 * eye),
        "solve": lambda z, w: lib.linalg.solve(lib.outer(z, w) + 3 * eye, w),
        "det": lambda z, w: lib.linalg.det(lib.outer(z, w) + 3 * eye),
        "slogdet": lambda z, w: lib.stack([*lib.linalg.slogdet(lib.outer(z, w) + 3 * eye)])
                                if t else anp.stack(list(anp.linalg.slogdet(anp.outer(z, w) + 3 * eye))),
    }


COMPLEX_CASES = list(_complex_cases(np))


def _torch_grads(op, z, w):
    zt, wt = torch.tensor(z, requires_grad=True), torch.tensor(w, requires_grad=True)
    out = op(zt, wt)
    u = torch.tensor(U[:out.shape[-1]] if out.ndim else U[0])
    loss = torch.real(torch.sum(u * out)) if out.is_complex() else torch.sum(u.real * out)
    gz, gw = torch.autograd.grad(loss, (zt, wt), allow_unused=True)
    return [np.zeros_like(z) if g is None else g.resolve_conj().numpy() for g in (gz, gw)]


def _our_loss(op):
    def loss(z, w):
        out = op(z, w)
        u = U[:np.shape(out)[-1]] if np.ndim(out) else U[0]
        return anp.real(anp.sum(u * out)) if np.iscomplexobj(autodiff.stop_gradient(out)) else anp.sum(u.real * out)

    return loss


@needs_torch
@pytest.mark.parametrize("name", COMPLEX_CASES)
def test_complex_inputs_match_torch_conjugated(name):
    ours, theirs = _complex_cases(anp)[name], _complex_cases(torch)[name]
    z, w = Z.copy(), W.copy()
    expected = _torch_grads(theirs, z, w)
    got = grad(_our_loss(ours), argnums=(0, 1))(z, w)
    for g, e in zip(got, expected):
        assert np.allclose(g, np.conj(e)), (g, np.conj(e))
    assert gradcheck(ours, z, w, order=2)


@needs_torch
@pytest.mark.parametrize("name", COMPLEX_CASES)
def test_jvp_at_complex_inputs_matches_finite_differences(name):
    op, v, eps = _complex_cases(anp)[name], U[4:], 1e-6
    _, tangent = autodiff.jvp(lambda z: op(z, W), (Z,), (v,))
    fd = (np.asarray(op(Z + eps * v, W)) - np.asarray(op(Z - eps * v, W))) / (2 * eps)
    assert np.allclose(tangent, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", [anp.sumsq, anp.abssum, anp.maxabs, anp.linalg.norm, anp.var, anp.std],
                         ids=["sumsq", "abssum", "maxabs", "norm", "var", "std"])
def test_real_reductions_of_complex64_are_float32(f):
    z = np.array([3 + 4j, 1j, -2.0], np.complex64)
    assert np.result_type(f(z)) == np.abs(z).dtype == np.float32  # sumsq, abssum, maxabs were float64
    assert grad(f)(z).dtype == np.complex64


# --- Every complex-capable op of the table at complex inputs ------------------------------------------------

# Rows whose numpy forward accepts complex input but whose derivative is defined for real inputs only.
REAL_ONLY = {
    "maximum", "minimum", "fmax", "fmin", "clip", "clip arrays", "max", "amax", "min", "amin", "relu",
    "maxpool2d", "logsumexp", "softmax", "log_softmax", "softplus", "sigmoid", "cbrt", "hypot", "arctan2",
    "logaddexp", "where", "linalg.cholesky", "linalg.norm ord=inf",
    # these rows' functions (u * u, vh * vh) are invariant under a real sign but not a complex phase, so at
    # complex inputs they are not functions of the matrix; complex svd is checked against torch on
    # phase-invariant functions in tests/rules/test_linalg_decompositions.py
    "linalg.svd", "linalg.svd square full", "linalg.svd tall full",
}  # (autodiff.scipy's rows are not here: they refuse complex input, which the test below asserts)


def _complex_inputs(op, shapes, dtype, seed):
    r = np.random.default_rng(seed)
    return [(op.domain(r.standard_normal(s)) + 0.5j * r.standard_normal(s)).astype(dtype) for s in shapes]


def _refusal(op, dtype):
    """The error the op's forward raises at complex inputs of ``dtype``, or ``None`` when it takes them."""
    shapes, kwargs = op.cases.example()
    try:
        op.fn(*_complex_inputs(op, shapes, dtype, 0), **kwargs)
    except (TypeError, ValueError, np.exceptions.DTypePromotionError, NotImplementedError) as e:
        return e
    return None


def _assert_refused_clearly(op, error):
    """A refusal is one of two decided ones: autodiff.scipy takes real inputs only (as autograd.scipy does) and
    says so, naming the function; autodiff.numpy refuses only where numpy's own ufunc refuses complex input."""
    message = str(error)
    if "autodiff.scipy." in message:
        assert isinstance(error, TypeError) and "got a complex input" in message and "real inputs only" in message, (
            f"{op.name}: {message}")
        return
    named = re.search(r"ufunc '(\w+)' not supported for the input types", message)
    operator_named = re.search(r"unsupported operand type\(s\) for (\S+): .*'numpy.complex", message)
    assert named or operator_named, f"{op.name} refused complex input without saying why: {message}"
    if named:
        ufunc = getattr(np, named.group(1))
        numpys_own = lambda: ufunc(*[np.ones(2, np.complex128)] * ufunc.nin)  # noqa: E731
    else:  # a numpy complex scalar's operator, as in ``x % c`` on 0-d input
        numpys_own = lambda: _OPERATORS[operator_named.group(1)](np.complex128(1 + 1j), 1.0)  # noqa: E731
    with pytest.raises(TypeError):  # numpy itself refuses: there is no complex function to differentiate
        numpys_own()


_OPERATORS = {"%": operator.mod, "//": operator.floordiv, "divmod()": divmod}


@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["complex128", "complex64"])
@pytest.mark.parametrize("op", [op for op in OPS if op.name not in REAL_ONLY], ids=repr)
def test_table_op_at_complex_inputs(op, dtype, order):
    """Every op either differentiates correctly at complex inputs (gradcheck, orders 1 and 2) or refuses them
    with a clear error (:func:`_assert_refused_clearly`)."""
    refused = _refusal(op, dtype)
    if refused is not None:
        _assert_refused_clearly(op, refused)
        return

    @SETTINGS
    @given(case=op.cases, seed=st.integers(0, 2**16))
    def check(case, seed):
        shapes, kwargs = case
        args = _complex_inputs(op, shapes, dtype, seed)
        assert gradcheck(lambda *zs: op.fn(*zs, **kwargs), *args, order=order)

    check()


def test_hvp_at_complex_primals_is_the_derivative_of_the_gradient():
    loss = lambda z: anp.sum(anp.abs(anp.sin(z)) ** 2) + anp.real(anp.sum(z ** 3 * W))  # noqa: E731
    (got,) = autodiff.hvp(loss, (Z,), (U[:4],))  # refused before: the inner vdot was a complex scalar
    eps = 1e-6
    fd = (grad(loss)(Z + eps * U[:4]) - grad(loss)(Z - eps * U[:4])) / (2 * eps)
    assert np.allclose(got, fd, rtol=1e-6, atol=1e-8)


# --- holomorphic_grad ---------------------------------------------------------------------------------------

HOLOMORPHIC = {
    "z^3": lambda z: z ** 3, "sin": lambda z: anp.sin(z) if not torch.is_tensor(z) else torch.sin(z),
    "exp(z) log(z)": lambda z: (anp.exp(z) * anp.log(z)) if not torch.is_tensor(z) else torch.exp(z) * torch.log(z),
    "1 / (1 + z^2)": lambda z: 1 / (1 + z ** 2),
}


@needs_torch
@pytest.mark.parametrize("name", HOLOMORPHIC)
def test_holomorphic_grad_matches_torch_and_finite_differences(name):
    f, z = HOLOMORPHIC[name], 0.7 - 0.4j
    zt = torch.tensor(z, requires_grad=True)
    torch.real(f(zt)).backward()  # Cauchy-Riemann: f'(z) = conj of the gradient of Re f
    ours = holomorphic_grad(f)(z)
    assert np.isclose(ours, np.conj(zt.grad.item()))
    eps = 1e-6
    for step in (eps, 1j * eps):  # a holomorphic derivative is the same along every direction
        assert np.isclose(ours, (f(z + step) - f(z - step)) / (2 * step), rtol=1e-7)


@needs_torch
def test_holomorphic_grad_second_order_and_arrays():
    z = np.array([0.3 + 0.2j, -1.0 + 0.5j])
    second = holomorphic_grad(holomorphic_grad(lambda z: anp.sin(z) * z))(0.3 + 0.2j)
    zt = torch.tensor(0.3 + 0.2j, requires_grad=True)
    (d1,) = torch.autograd.grad(torch.real(torch.sin(zt) * zt), zt, create_graph=True)
    torch.real(d1.conj()).backward()
    assert np.isclose(second, np.conj(zt.grad.item()))
    da, db = holomorphic_grad(lambda a, b: anp.sum(a * anp.exp(b)), argnums=(0, 1))(z, z)
    assert np.allclose(da, np.exp(z)) and np.allclose(db, z * np.exp(z))


@pytest.mark.parametrize("bad, message", [
    (lambda: holomorphic_grad(anp.sin)(1.0), "needs complex inputs"),
    (lambda: holomorphic_grad(lambda z: anp.sum(z))({"a": np.ones(2)}), r"arg 0: \['a'\] is of dtype float64"),
    (lambda: holomorphic_grad(anp.abs)(1j), "must return a complex scalar"),
    (lambda: holomorphic_grad(anp.sin)(np.array([1j, 2j])), r"shape \(2,\)"),
])
def test_holomorphic_grad_errors(bad, message):
    with pytest.raises(TypeError, match=message):
        bad()
