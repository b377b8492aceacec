"""Issue 13's elementwise and shape ops beyond the op table: the same values and dtypes as numpy
(plain and traced inputs), complex inputs against finite differences and torch, and the forms and
errors the table cannot express.

Complex gradients follow the engine's convention (JAX's): for a real ``L(z)``, ``grad`` gives
``dL/dx - i dL/dy``, so ``dL = Re(grad * dz)``; torch's ``z.grad`` is its conjugate.
"""

import math
import warnings

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff.extend import value_of

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")

rng = np.random.default_rng(13)
A = rng.standard_normal((3, 4))
P = np.abs(A) + 0.5
C = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
V3, W3 = rng.standard_normal((2, 3)), rng.standard_normal(3)
V2 = rng.standard_normal((4, 2))
N = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])
NC = np.zeros(5, complex)
NC.real, NC.imag = N, N[::-1]  # non-finite real and imaginary parts in different places
X = np.array([0.0, 1e-9, -0.2, 0.7, 3.0])

# (name, call(module, *arrays), arrays): called with module numpy and autodiff.numpy alike.
SAME_AS_NUMPY = [
    ("tril", lambda m, a: m.tril(a, -1), (A,)),
    ("triu 1-D", lambda m, a: m.triu(a[0], 1), (A,)),
    ("remainder", lambda m, a, b: m.remainder(a, b), (A * 3, P)),
    ("mod negative divisor", lambda m, a: m.mod(a * 3, -0.7), (A,)),
    ("deg2rad", lambda m, a: m.deg2rad(a * 90), (A,)),
    ("rad2deg", lambda m, a: m.rad2deg(a), (A,)),
    ("degrees", lambda m, a: m.degrees(a), (A,)),
    ("radians", lambda m, a: m.radians(a), (A,)),
    ("fabs", lambda m, a: m.fabs(a), (A,)),
    ("sinc", lambda m, x: m.sinc(x), (X,)),
    ("logaddexp2", lambda m, a, b: m.logaddexp2(a, b[0]), (A, P)),
    ("angle", lambda m, c: m.angle(c), (C,)),
    ("angle deg", lambda m, c: m.angle(c, deg=True), (C,)),
    ("angle of reals", lambda m, a: m.angle(a), (A,)),
    ("nan_to_num", lambda m, n: m.nan_to_num(n, nan=-1.0, neginf=-5.0), (N,)),
    ("nan_to_num complex", lambda m, n: m.nan_to_num(n, posinf=9.0), (NC,)),
    ("real_if_close", lambda m, a: m.real_if_close(a + 1e-17j), (A,)),
    ("real_if_close keeps complex", lambda m, c: m.real_if_close(c), (C,)),
    ("array_split", lambda m, a: m.array_split(a, 3, axis=1), (A,)),
    ("array_split indices", lambda m, a: m.array_split(a, [1, -1, 9]), (A,)),
    ("hsplit", lambda m, a: m.hsplit(a, 2), (A,)),
    ("vsplit", lambda m, a: m.vsplit(a, [1]), (A,)),
    ("dsplit", lambda m, a: m.dsplit(a.reshape(3, 2, 2), 2), (A,)),
    ("column_stack", lambda m, a, v: m.column_stack([a[0], v[:, 0], a[1:].T]), (A, V2)),
    ("atleast_1d", lambda m, a: m.atleast_1d(a[0, 0]), (A,)),
    ("atleast_2d", lambda m, a: m.atleast_2d(a[0]), (A,)),
    ("atleast_3d", lambda m, a: m.atleast_3d(a), (A,)),
    ("atleast_3d many", lambda m, a: m.atleast_3d(a[0, 0], a[0], a), (A,)),
    ("rollaxis", lambda m, a: m.rollaxis(a.reshape(3, 2, 2), 2, 1), (A,)),
    ("flipud", lambda m, a: m.flipud(a), (A,)),
    ("fliplr", lambda m, a: m.fliplr(a), (A,)),
    ("rot90", lambda m, a: m.rot90(a, 3), (A,)),
    ("rot90 axes", lambda m, a: m.rot90(a.reshape(3, 2, 2), -2, axes=(2, 0)), (A,)),
    ("append", lambda m, a, v: m.append(a, v), (A, V2)),
    ("append axis", lambda m, a: m.append(a, a[:1], axis=0), (A,)),
    ("select", lambda m, a, b: m.select([a > 0.5, a < -0.5], [a, b * 2], default=b), (A, P)),
    ("select scalar choice", lambda m, a: m.select([a > 0], [a], 7), (A,)),
    ("cross", lambda m, v, w: m.cross(v, w), (V3, W3)),
    ("cross axes", lambda m, v, w: m.cross(v.T, w, axisa=0, axisc=0), (V3, W3)),
    ("cross 2-vectors", lambda m, v: m.cross(v, v[::-1]), (V2,)),
    ("cross 2 and 3", lambda m, v, w: m.cross(v[0], w), (V2, W3)),
    ("kron", lambda m, a, v: m.kron(a, v), (A, V2)),
    ("kron 1-D and 3-D", lambda m, a, w: m.kron(w, a.reshape(3, 2, 2)), (A, W3)),
    ("diff", lambda m, a: m.diff(a, 2), (A,)),
    ("diff ends", lambda m, a: m.diff(a, axis=0, prepend=0.5, append=a[:1]), (A,)),
    ("gradient", lambda m, a: m.gradient(a), (A,)),
    ("gradient spacing", lambda m, a: m.gradient(a, 0.3, [0.0, 1.0, 1.5, 4.0], edge_order=2), (A,)),
    ("gradient axis", lambda m, a: m.gradient(a, axis=-1), (A,)),
    ("linspace", lambda m, a, b: m.linspace(a[0, 0], b[0, 0], 7), (A, P)),
    ("linspace arrays", lambda m, a, b: m.linspace(a[0], b[:, :1], 5, endpoint=False, axis=-1), (A, P)),
    ("linspace retstep", lambda m, a, b: m.linspace(a[0], b[0], 4, retstep=True), (A, P)),
    ("linspace one sample", lambda m, a, b: m.linspace(a[0], b[0], 1, retstep=True)[0], (A, P)),
    ("sort", lambda m, a: m.sort(a, axis=0), (A,)),
    ("sort flat", lambda m, a: m.sort(a, axis=None), (A,)),
    ("sort complex", lambda m, c: m.sort(c), (C,)),
    ("partition", lambda m, a: m.partition(a, 2), (A,)),
    ("partition several", lambda m, a: m.partition(a, [0, 2], axis=0), (A,)),
    ("where", lambda m, a, b: m.where(a > 0, a, b), (A, P)),
    ("unwrap", lambda m, a: m.unwrap(a * 6.0), (A,)),  # steps beyond pi: whole periods added
    ("unwrap axis period", lambda m, a: m.unwrap(a * 4.0, discont=2.0, axis=0, period=5.0), (A,)),
    ("unwrap half periods", lambda m, a: m.unwrap(m.round(a * 4.0) * (m.pi / 2)), (A,)),  # steps of exactly pi
]


def _leaves(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _assert_same(ours, theirs):
    ours, theirs = _leaves(ours), _leaves(theirs)
    assert len(ours) == len(theirs)
    for mine, ref in zip(ours, theirs):
        mine = value_of(mine)
        assert np.shape(mine) == np.shape(ref)
        assert np.result_type(mine) == np.result_type(ref)
        np.testing.assert_array_equal(mine, ref)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, call, arrays", SAME_AS_NUMPY, ids=[c[0] for c in SAME_AS_NUMPY])
def test_same_values_and_dtype_as_numpy(name, call, arrays, dtype):
    """Plain inputs give numpy's output exactly; so do traced ones (the value inside the trace)."""
    arrays = [a.astype(np.result_type(a, dtype) if a.dtype.kind == "c" else dtype) for a in arrays]
    if dtype == np.float32:
        arrays = [a.astype(np.complex64) if a.dtype.kind == "c" else a for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # numpy deprecates 2-vector cross products
        expected = call(np, *arrays)
    _assert_same(call(anp, *arrays), expected)
    traced_out, _ = autodiff.vjp(lambda *xs: call(anp, *xs), *arrays)
    _assert_same(traced_out, expected)


LISTS = [[1.0, 2.0, 3.5], [4.0, -5.0, 7.0]]
ARRAY_LIKE_CALLS = {
    "tril": lambda m: m.tril(LISTS), "angle": lambda m: m.angle([1j, -1.0]), "diff": lambda m: m.diff(LISTS),
    "gradient": lambda m: m.gradient(LISTS), "sort": lambda m: m.sort(LISTS), "flipud": lambda m: m.flipud(LISTS),
    "rot90": lambda m: m.rot90(LISTS), "cross": lambda m: m.cross(LISTS[0], LISTS[1]),
    "kron": lambda m: m.kron(LISTS[0], [1.0, 3.0]), "partition": lambda m: m.partition(LISTS[1], 1),
    "unwrap": lambda m: m.unwrap(LISTS),
}


@pytest.mark.parametrize("name", list(ARRAY_LIKE_CALLS))
def test_array_likes_as_numpy_takes_them(name):
    call = ARRAY_LIKE_CALLS[name]
    _assert_same(call(anp), call(np))


def test_where_forms():
    """One argument: the indices of nonzero entries (no derivative); two: numpy's error."""
    m = np.array([[0.0, 1.5], [2.0, 0.0]])
    for ours, theirs in zip(anp.where(m), np.where(m)):
        np.testing.assert_array_equal(ours, theirs)
    got = autodiff.grad(lambda x: anp.sum(x[anp.where(x > 1.0)] ** 2))(m)
    np.testing.assert_array_equal(got, np.where(m > 1.0, 2 * m, 0.0))
    named = autodiff.grad(lambda x: anp.sum(anp.where(x > 1.0, x=x * 3, y=x)))(m)
    np.testing.assert_array_equal(named, np.where(m > 1.0, 3.0, 1.0))
    with pytest.raises(ValueError, match="both or neither"):
        anp.where(m > 0, m)


def test_numpy_calls_route_here():
    """Plain numpy functions and the % operator reach these ops on traced values."""
    def f(x):
        return np.sum(np.sort(np.tril(np.outer(x, x)), axis=None) * np.linspace(0.0, 1.0, 4)) + np.sum(2.5 % x)

    def g(x):
        return anp.sum(anp.sort(anp.tril(anp.outer(x, x)), axis=None) * anp.linspace(0.0, 1.0, 4)) \
            + anp.sum(anp.remainder(2.5, x))

    x = np.array([0.7, 1.9])
    np.testing.assert_array_equal(autodiff.grad(f)(x), autodiff.grad(g)(x))
    assert autodiff.gradcheck(lambda x: x % 0.3 + 1.7 % x, x, order=2)


def test_sinc_at_and_near_zero():
    """Exact zeros are routine after relu and padding: sinc's second derivative there is -pi^2/3,
    not the 0 a guarded sin(y)/y gives; near 0 the quotient rule's cancellation is avoided."""
    h = 1e-3
    for x in [0.0, 1e-7, 0.05]:
        d2 = autodiff.grad(autodiff.grad(anp.sinc))(x)
        numeric = (np.sinc(x + h) - 2 * np.sinc(x) + np.sinc(x - h)) / h**2
        assert abs(d2 - numeric) < 1e-5, (x, d2, numeric)
    d3 = autodiff.grad(autodiff.grad(autodiff.grad(anp.sinc)))(0.3)
    d2 = autodiff.grad(autodiff.grad(anp.sinc))
    assert abs(d3 - (d2(0.3 + h) - d2(0.3 - h)) / (2 * h)) < 1e-5


def test_linspace_endpoints_against_torch():
    """d/dstart and d/dstop of weighted samples, against torch's samples written out."""
    w = rng.standard_normal(6)
    ours = autodiff.grad(lambda a, b: anp.sum(anp.linspace(a, b, 6) * w), argnums=(0, 1))(0.3, 2.0)
    a, b = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.3, 2.0))
    (((b - a) * torch.arange(6, dtype=torch.float64) / 5 + a) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours, (a.grad.item(), b.grad.item()), rtol=1e-12)


def test_sort_against_torch():
    x = rng.standard_normal((3, 5))
    w = rng.standard_normal((3, 5))
    ours = autodiff.grad(lambda v: anp.sum(anp.sort(v, axis=1) * w))(x)
    t = torch.tensor(x, requires_grad=True)
    (torch.sort(t, dim=1).values * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-12)


def test_clear_errors():
    with pytest.raises(ValueError, match="vsplit only works on arrays of 2"):
        anp.vsplit(np.ones(3), 3)
    with pytest.raises(ValueError, match="cross: a must hold vectors of 2 or 3"):
        anp.cross(np.ones(4), np.ones(3))
    with pytest.raises(NotImplementedError, match="sort: order="):
        anp.sort(np.ones(3), order="x")
    with pytest.raises(TypeError, match="gradient: the spacings are constants"):
        autodiff.grad(lambda h: anp.sum(anp.gradient(np.arange(3.0), h)))(1.0)
    with pytest.raises(ValueError, match="edge_order=2 needs at least 3"):
        anp.gradient(np.ones(2), edge_order=2)
    with pytest.raises(TypeError, match="condlist\\[0\\] must be a boolean"):
        anp.select([np.ones(2)], [np.ones(2)])


# --- complex inputs ------------------------------------------------------------------------

def _complex_direction(shape, seed):
    r = np.random.default_rng(seed)
    return r.standard_normal(shape) + 1j * r.standard_normal(shape)


def _check_complex(loss, z, seed=0, eps=1e-6):
    """``grad(loss)(z)`` against central differences along a random complex direction ``v``:
    in the engine's convention the directional derivative is ``Re(sum(grad * v))``."""
    g = autodiff.grad(loss)(z)
    v = _complex_direction(np.shape(z), seed)
    numeric = (loss(z + eps * v) - loss(z - eps * v)) / (2 * eps)
    analytic = np.real(np.sum(g * v))
    assert abs(analytic - numeric) <= 1e-6 * (1 + abs(numeric)), (analytic, numeric)


def _real_loss(op, like, seed=1):
    """``Re(sum(w * op(z)))`` with fixed random complex weights ``w``: a real function of ``z``."""
    w = _complex_direction(np.shape(op(like)), seed)
    return lambda z: anp.sum(anp.real(op(z) * w))


Z = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
COMPLEX_OPS = {
    "tril": lambda z: anp.tril(z, 1),
    "triu": anp.triu,
    "sinc": anp.sinc,
    "angle": lambda z: anp.angle(z, deg=True) + 0j,
    # an infinite real part on the diagonal: only that part is replaced, the imaginary part passes
    "nan_to_num": lambda z: anp.nan_to_num(anp.where(np.eye(3) > 0, np.inf, anp.real(z)) + 1j * anp.imag(z),
                                           posinf=2.0),
    "real_if_close": lambda z: anp.real_if_close(z),
    "array_split": lambda z: anp.array_split(z, 2, axis=1)[1],
    "hsplit": lambda z: anp.hsplit(z, [1])[1],
    "column_stack": lambda z: anp.column_stack([z[0], z[:, 1]]),
    "atleast_3d": anp.atleast_3d,
    "rollaxis": lambda z: anp.rollaxis(z, 1),
    "flipud": anp.flipud,
    "fliplr": anp.fliplr,
    "rot90": lambda z: anp.rot90(z, 3),
    "append": lambda z: anp.append(z, z[0] * 2.0),
    "select": lambda z: anp.select([np.eye(3) > 0], [z * 2.0], default=z),
    "cross": lambda z: anp.cross(z, z[::-1]),
    "kron": lambda z: anp.kron(z, z[0]),
    "diff": lambda z: anp.diff(z, 2, axis=0),
    "gradient": lambda z: anp.gradient(z, 0.5, edge_order=2)[1],
    "linspace": lambda z: anp.linspace(z[0], z[1], 4),
    "sort": lambda z: anp.sort(z, axis=0),
    "partition": lambda z: anp.partition(z, 1, axis=None),
    "where": lambda z: anp.where(np.eye(3) > 0, z, z * z),
}


@pytest.mark.parametrize("name", list(COMPLEX_OPS))
def test_complex_inputs_against_finite_differences(name):
    """First order, and second order through a real function of the (complex) gradient."""
    op = COMPLEX_OPS[name]
    loss = _real_loss(op, Z)
    _check_complex(loss, Z)
    w = _complex_direction(Z.shape, 2)
    _check_complex(lambda u: anp.sum(anp.real(autodiff.grad(loss)(u) * w)), Z, seed=3)
    assert autodiff.grad(loss)(Z.astype(np.complex64)).dtype == np.complex64


TORCH_COMPLEX = {
    "angle": (lambda z: anp.angle(z), torch.angle),
    "tril": (lambda z: anp.tril(z, -1), lambda t: torch.tril(t, -1)),
    "rot90": (lambda z: anp.rot90(z, 1), lambda t: torch.rot90(t, 1)),
    "kron": (lambda z: anp.kron(z, z[1:]), lambda t: torch.kron(t, t[1:])),
    "cross": (lambda z: anp.cross(z, z[::-1]), lambda t: torch.linalg.cross(t, t.flip(0))),
    "diff": (lambda z: anp.diff(z, axis=0), lambda t: torch.diff(t, dim=0)),
    "sinc": (anp.sinc, torch.sinc),
    "fliplr": (anp.fliplr, torch.fliplr),
}


@pytest.mark.parametrize("name", list(TORCH_COMPLEX))
def test_complex_inputs_against_torch(name):
    """torch's gradient of a real loss is the conjugate of ours (its convention against JAX's)."""
    ours, theirs = TORCH_COMPLEX[name]
    out = value_of(ours(Z))
    w = _complex_direction(np.shape(out), 4)
    g = autodiff.grad(lambda z: anp.sum(anp.real(ours(z) * w)))(Z)
    t = torch.tensor(Z, requires_grad=True)
    result = theirs(t)
    np.testing.assert_allclose(out, result.detach().numpy(), rtol=1e-12, atol=1e-12)
    torch.real(result * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(g, np.conj(t.grad.numpy()), rtol=1e-10, atol=1e-12)


def test_real_in_real_out_through_complex_angle():
    """angle(x + iy) is arctan2(y, x): real in, real out through a complex intermediate."""
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    ours = autodiff.grad(lambda a, b: anp.sum(anp.angle(a + 1j * b) ** 2), argnums=(0, 1))(x, y)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    (torch.atan2(ty, tx) ** 2).sum().backward()
    np.testing.assert_allclose(ours, (tx.grad.numpy(), ty.grad.numpy()), rtol=1e-12)
    assert math.isclose(autodiff.grad(lambda t: anp.angle(1.0 + 1j * t))(0.0), 1.0)


def test_unwrap_recomputes_its_periods_for_each_input_under_jit_and_vmap():
    """The added periods are a plain result (no derivative), but they depend on the input: a jitted unwrap must
    compute them on every call, not keep the traced call's as a constant, and vmap per example."""
    p = np.random.default_rng(7).standard_normal((5, 9)) * 6.0
    jitted = autodiff.jit(lambda q: anp.unwrap(q, axis=0))
    for q in (p, p * 2.0, -p):
        np.testing.assert_array_equal(jitted(q), np.unwrap(q, axis=0))
    assert jitted.cache_info().traces == 1
    np.testing.assert_array_equal(autodiff.vmap(anp.unwrap)(p), np.unwrap(p, axis=-1))
    np.testing.assert_array_equal(autodiff.vmap(lambda q: anp.unwrap(q, axis=0), in_axes=1, out_axes=1)(p),
                                  np.unwrap(p, axis=0))
    weights = np.arange(p.size, dtype=float).reshape(p.shape)
    np.testing.assert_array_equal(autodiff.grad(lambda q: anp.sum(anp.unwrap(q) * weights))(p), weights)


@pytest.mark.parametrize("value, error, words", [
    (np.float64(1.0), ValueError, "unwrap: p is a 0-d value, with no axis to unwrap along"),
    (np.ones(3, np.complex128), TypeError, "unwrap: p is complex, and unwrap takes real phases"),
])
def test_unwrap_refuses_what_numpy_refuses_naming_the_fix(value, error, words):
    with pytest.raises(Exception):  # noqa: B017 (numpy's own: a ValueError or TypeError from inside)
        np.unwrap(value)
    with pytest.raises(error, match=f"autodiff.numpy.{words}"):
        anp.unwrap(value)
