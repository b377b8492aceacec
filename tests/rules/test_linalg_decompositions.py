"""svd, eigh, eig, pinv, matrix norms and einsum's forms against PyTorch, complex inputs included (issue 13).

Complex gradients follow the engine's (JAX's) convention: the conjugate of
torch's.  Functions of singular and eigen vectors are gauge invariant (squares
of entries, products that rebuild a matrix), since the vectors themselves are
defined only up to sign or phase.  Second order is checked by ``gradcheck``
on a real parametrisation ``x + 1j y`` of a complex input.
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import gradcheck
from tests.oracle import needs_torch, torch

RNG = np.random.default_rng(13)


def _complex(shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _separated(shape):
    a = 0.05 * RNG.standard_normal(shape)
    k = min(shape[-2:])
    a[..., range(k), range(k)] += 1.0 + 1.5 * np.arange(k)[::-1]
    return a


def _torch_grads(f, *arrays):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    f(*ts).backward()
    return [t.grad.numpy().conj() if np.iscomplexobj(a) else t.grad.numpy() for a, t in zip(arrays, ts)]


def _check_against_torch(f, *arrays):
    """Values and gradients of ``f(*arrays, lib)`` agree between the engine and torch."""
    ours = autodiff.grad(lambda *xs: f(*xs, lib=anp), argnums=tuple(range(len(arrays))))(*arrays)
    theirs = _torch_grads(lambda *ts: f(*ts, lib=torch), *arrays)
    value = f(*arrays, lib=anp)
    np.testing.assert_allclose(value, f(*[torch.tensor(a) for a in arrays], lib=torch).item(), rtol=1e-10)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-7, atol=1e-9)


def _w(shape, phase=0.0, lib=np):
    w = np.cos(np.arange(int(np.prod(shape))).reshape(shape) + phase)
    return torch.tensor(w) if lib is torch else w


def _svd_function(a, lib):
    svd = anp.linalg.svd if lib is anp else torch.linalg.svd
    u, s, vh = svd(a, full_matrices=False)
    rebuilt = (u * s[..., None, :] ** 2) @ vh
    real = anp.real if lib is anp else torch.real
    squares = (real(u * u.conj()) * _w(u.shape[-2:], 0.0, lib)).sum() + (real(vh * vh.conj()) * 0.5).sum()
    return squares + (s ** 3).sum() + real(rebuilt * _w(a.shape[-2:], 1.0, lib)).sum()


@needs_torch
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)])
def test_svd_matches_torch(shape):
    _check_against_torch(_svd_function, _separated(shape))


@needs_torch
@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (2, 3)])
def test_svd_of_complex_matrices_matches_torch(shape):
    z = _complex(shape)
    _check_against_torch(_svd_function, z)
    assert gradcheck(lambda x, y: _svd_function(x + 1j * y, anp), z.real.copy(), z.imag.copy(), order=2)


@needs_torch
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3, 4)])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_singular_values_match_torch(shape, kind):
    a = _separated(shape) if kind == "real" else _complex(shape)
    weights = np.arange(1.0, min(shape[-2:]) + 1.0)

    def f(a, lib):
        s = anp.linalg.svd(a, compute_uv=False) if lib is anp else torch.linalg.svdvals(a)
        return (s * (weights if lib is anp else torch.tensor(weights))).sum()

    _check_against_torch(f, a)
    if kind == "complex":
        assert gradcheck(lambda x, y: f(x + 1j * y, anp), a.real.copy(), a.imag.copy(), order=2)


def test_full_matrices_beyond_the_thin_part_raise():
    a = _separated((4, 2))
    with pytest.raises(NotImplementedError, match=r"linalg\.svd: with full_matrices=True .* full_matrices=False"):
        autodiff.grad(lambda a: anp.sum(anp.linalg.svd(a)[0] ** 3))(a)


@needs_torch
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_torch_on_symmetric_input(uplo):
    """Through a symmetrisation both libraries see the same function; torch reads the same triangle."""
    b = _separated((2, 3, 3))

    def f(b, lib):
        a = b + b.swapaxes(-1, -2) if lib is anp else b + b.transpose(-1, -2)
        w, v = anp.linalg.eigh(a, UPLO=uplo) if lib is anp else torch.linalg.eigh(a, UPLO=uplo)
        rebuilt = (v * (w[..., None, :] * 0.3)) @ v.swapaxes(-1, -2)
        return (w ** 2).sum() + (v * v * _w((3, 3), 0.0, lib)).sum() + (rebuilt * _w((3, 3), 1.0, lib)).sum()

    _check_against_torch(f, b)


def test_eigh_reads_one_triangle_like_numpy():
    """The gradient lives on the triangle eigh reads, so finite differences on a non-symmetric input agree."""
    a = _separated((3, 3)) + np.triu(RNG.standard_normal((3, 3)), 1)
    g = autodiff.grad(lambda a: anp.sum(anp.linalg.eigh(a)[0] ** 3))(a)
    assert np.all(np.triu(g, 1) == 0)
    assert gradcheck(lambda a: anp.linalg.eigh(a, UPLO="U")[1] ** 2, a, order=2)


@needs_torch
@pytest.mark.parametrize("case", ["real eigenvalues", "complex pair"])
def test_eig_of_gauge_invariant_functions_matches_torch(case):
    base = np.array([[1.0, 2.0, 0.0], [-2.0, 1.0, 0.0], [0.0, 0.0, 4.0]]) if case == "complex pair" else np.diag(
        [1.0, 2.5, 4.0])
    a = base + 0.1 * RNG.standard_normal((3, 3))

    def f(a, lib):
        w, v = anp.linalg.eig(a) if lib is anp else torch.linalg.eig(a)
        real = anp.real if lib is anp else torch.real
        return real(w * w).sum() + (real(v * v.conj()) * _w((3, 3), 0.0, lib)).sum()

    _check_against_torch(f, a)


@needs_torch
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_pinv_matches_torch(shape, kind):
    a = _separated(shape) if kind == "real" else _complex(shape)
    weights = _complex(shape[:-2] + shape[-2:][::-1])

    def f(a, lib):
        p = anp.linalg.pinv(a) if lib is anp else torch.linalg.pinv(a)
        return (p * (weights if lib is anp else torch.tensor(weights))).real.sum()

    _check_against_torch(f, a)
    if kind == "complex":
        assert gradcheck(lambda x, y: f(x + 1j * y, anp), a.real.copy(), a.imag.copy(), order=2)


@needs_torch
@pytest.mark.parametrize("ord", ["nuc", 2, -2])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_matrix_norms_match_torch(ord, kind):
    a = _separated((2, 3, 4)) if kind == "real" else _complex((2, 3, 4))

    def f(a, lib):
        if lib is anp:
            n = anp.linalg.matrix_norm(a, ord, axis=(0, 2), keepdims=True)
        else:
            n = torch.linalg.matrix_norm(a, ord, dim=(0, 2), keepdim=True)
        return (n * (1.0 + (np.arange(3.0) if lib is anp else torch.arange(3.0, dtype=n.dtype))).reshape(1, 3, 1)).sum()

    _check_against_torch(f, a)


def test_unsupported_forms_name_the_fix():
    with pytest.raises(NotImplementedError, match=r"matrix_norm: ord=1 is not supported; use 'fro', 'nuc', 2 or -2"):
        anp.linalg.matrix_norm(np.eye(2), 1)
    with pytest.raises(TypeError, match=r"autodiff\.numpy\.einsum: out= is not supported"):
        autodiff.grad(lambda x: np.einsum("i->", x, out=np.zeros(())))(np.ones(2))


def test_plain_numpy_calls_route_here():
    """np.linalg.* and np.einsum on traced values reach these rules; np.linalg.matrix_norm keeps its 'fro' default."""
    a = _separated((3, 2))
    for f in (lambda a: np.linalg.matrix_norm(a), lambda a: np.linalg.matrix_norm(a, ord="nuc"),
              lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 3), lambda a: np.sum(np.linalg.pinv(a) ** 2),
              lambda a: np.einsum("ij,ij", a, a)):
        assert np.allclose(autodiff.vjp(f, a)[0], f(a))
        assert gradcheck(f, a, order=2)


# ---- einsum ---------------------------------------------------------------------------------------------

FORMS = [
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("lli", [(2, 2, 3)]), ("iii->i", [(2, 2, 2)]),
    ("iij,jk->ik", [(2, 2, 3), (3, 4)]), ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
    ("...ij,...jk", [(1, 2, 3), (4, 3, 2)]), ("i...->...", [(2, 3, 4)]), ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("bii,bj->bij", [(2, 3, 3), (2, 4)]), ("i,i", [(3,), (3,)]),
]


@needs_torch
@pytest.mark.parametrize("subscripts,shapes", FORMS, ids=[f for f, _ in FORMS])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_einsum_forms_match_torch(subscripts, shapes, kind):
    xs = [RNG.standard_normal(s) if kind == "real" else _complex(s) for s in shapes]
    u = _complex(np.einsum(subscripts, *xs).shape)

    def f(*xs, lib):
        out = anp.einsum(subscripts, *xs) if lib is anp else torch.einsum(subscripts, *xs)
        return (out * (u if lib is anp else torch.tensor(u))).real.sum()

    _check_against_torch(f, *xs)


def test_einsum_sublist_form():
    """Bug 7 of issue 13: it raised AttributeError ('numpy.ndarray' object has no attribute 'replace')."""
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    np.testing.assert_array_equal(anp.einsum(x, [0, 1], [1, 0]), x.T)
    f = lambda x, y: anp.einsum(x, [0, 1], y, [1, Ellipsis], [Ellipsis, 0])  # noqa: E731
    np.testing.assert_allclose(f(x, y), np.einsum(x, [0, 1], y, [1, Ellipsis], [Ellipsis, 0]))
    assert gradcheck(f, x, y, order=2)


@needs_torch
def test_einsum_real_operand_of_complex_product_gets_real_cotangents():
    """Bug 5 of issue 13 for einsum (and outer, built on it): the second derivative through a complex
    operand came out complex; now real and equal to torch's."""
    b = np.array([1 + 2j, -0.5 + 1j, 0.3 - 0.7j])
    a = np.array([0.3, -1.2, 0.8])

    def grad_norm(a, lib):
        if lib is anp:
            inner = autodiff.grad(lambda a: anp.real(anp.sum(anp.einsum("i,j->ij", a, b) ** 2)))
            return anp.sum(inner(a) ** 2)
        a = a if a.requires_grad else a.clone().requires_grad_()  # the value check passes a plain tensor
        (g,) = torch.autograd.grad((torch.einsum("i,j->ij", a, torch.tensor(b)) ** 2).real.sum(), a, create_graph=True)
        return (g ** 2).sum()

    _check_against_torch(grad_norm, a)
    assert autodiff.grad(lambda a: grad_norm(a, anp))(a).dtype == np.float64


@pytest.mark.parametrize("args,message", [
    (("ij->k", (2, 3)), r"output 'k' names \['k'\], which no operand has"),
    (("ij,jk", (2, 3), (2, 3)), r"axis 'j' has sizes 3 and 2"),
    (("i.j", (2, 3)), r"invalid term 'i\.j'"),
    (("ijk", (2, 3)), r"term 'ijk' names 3 axes but its operand has shape \(2, 3\)"),
    (("ij->ii", (2, 2)), r"output 'ii' names an axis twice; use autodiff\.numpy\.diagonal"),
    (("ij,jk->ik", (2, 3)), r"2 operands in 'ij,jk->ik' but 1 given"),
])
def test_einsum_errors_name_einsum_not_numpy(args, message):
    subscripts, *shapes = args
    with pytest.raises(ValueError, match=r"autodiff\.numpy\.einsum: " + message):
        anp.einsum(subscripts, *[np.ones(s) for s in shapes])
    with pytest.raises(ValueError, match="sublist labels must be integers"):
        anp.einsum(np.ones(2), ["a"])


@needs_torch
def test_einsum_jvp_with_a_complex_operand():
    """Bug 5's jvp form: it raised 'cotangent ... dtype float64, but the output has ... complex128'."""
    b = np.array([1 + 2j, -0.5 + 1j, 0.3 - 0.7j])
    a, v = np.array([0.3, -1.2, 0.8]), np.array([1.0, 0.5, -2.0])
    _, tangent = autodiff.jvp(lambda a: anp.einsum("i,j->ij", a, b), (a,), (v,))
    _, theirs = torch.autograd.functional.jvp(lambda t: torch.einsum("i,j->ij", t, torch.tensor(b)), (torch.tensor(a),),
                               (torch.tensor(v),))
    np.testing.assert_allclose(tangent, theirs.numpy())


JVPS = {
    "svd values": (lambda a: anp.linalg.svd(a, compute_uv=False), lambda a: torch.linalg.svdvals(a)),
    "pinv": (anp.linalg.pinv, lambda a: torch.linalg.pinv(a)),
    "eigh values": (lambda a: anp.linalg.eigh(a)[0], lambda a: torch.linalg.eigh(a)[0]),
    "einsum diagonal": (lambda a: anp.einsum("ii->i", a), lambda a: torch.einsum("ii->i", a)),
    "array": (lambda a: anp.array([a[0, 0] * 2.0, 1.0, a[1, 2]]),
              lambda a: torch.stack([a[0, 0] * 2.0, torch.tensor(1.0, dtype=a.dtype), a[1, 2]])),
}


@needs_torch
@pytest.mark.parametrize("name", JVPS)
def test_jvp_matches_torch(name):
    ours, theirs = JVPS[name]
    a, v = _separated((3, 3)), RNG.standard_normal((3, 3))
    v = v + v.T  # torch's eigh reads a symmetric tangent; ours (numpy's) reads one triangle: they agree on these
    _, tangent = autodiff.jvp(ours, (a,), (v,))
    _, expected = torch.autograd.functional.jvp(theirs, (torch.tensor(a),), (torch.tensor(v),))
    np.testing.assert_allclose(tangent, expected.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_norm_dispatches_matrix_norms(ord):
    """``linalg.norm`` with a matrix ord gives numpy's value and a derivative that passes gradcheck."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(anp.linalg.norm(a, ord), np.linalg.norm(a, ord))
    np.testing.assert_allclose(anp.linalg.norm(b, ord, axis=(2, 1), keepdims=True),
                               np.linalg.norm(b, ord, axis=(2, 1), keepdims=True))
    assert autodiff.gradcheck(lambda x: anp.linalg.norm(x, ord), a, order=2)


# --- eigh at complex Hermitian input ---------------------------------------------------------------------------

C = np.cos(np.arange(9.0)).reshape(3, 3) + 1j * np.sin(np.arange(9.0) * 0.7).reshape(3, 3)


def _hermitian(shape):
    """Near diag(4, 2.5, 1) (eigenvalues well apart), with complex entries off the diagonal."""
    b = 0.15 * _complex(shape)
    return b + np.conj(b.swapaxes(-1, -2)) + np.diag(1.0 + 1.5 * np.arange(3.0)[::-1])


def _eigh_invariants(a, lib=anp, uplo="L"):
    """sum(w^2) + sum(|V|^2 W) + Re sum(V diag(exp(0.3 w)) V^H C): real, and blind to each column's phase."""
    w, v = anp.linalg.eigh(a, UPLO=uplo) if lib is anp else torch.linalg.eigh(a, UPLO=uplo)
    real, exp = (anp.real, anp.exp) if lib is anp else (torch.real, torch.exp)
    c = C if lib is anp else torch.tensor(C)
    rebuilt = (v * exp(w * 0.3)[..., None, :]) @ v.conj().swapaxes(-1, -2)
    return (w ** 2).sum() + (real(v * v.conj()) * _w((3, 3), 0.0, lib)).sum() + real(rebuilt * c).sum()


@needs_torch
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_eigh_complex_hermitian_gradcheck(shape, uplo):
    """Orders 1 and 2 against finite differences, at a Hermitian input and at one that is not (eigh reads
    the UPLO triangle, the conjugate mirrored and the diagonal's real part, so FD sees the same)."""
    a = _hermitian(shape)
    skewed = a + (np.triu if uplo == "L" else np.tril)(_complex(shape), 1) + 1j * np.eye(3) * 0.4
    for x in (a, skewed):
        assert gradcheck(lambda x: _eigh_invariants(x, uplo=uplo), x, order=2)
        assert gradcheck(lambda x: anp.abs(anp.linalg.eigh(x, UPLO=uplo)[1]) ** 2, x)


@needs_torch
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_complex_matches_torch(uplo):
    """Through a Hermitisation both libraries see the same function; ours is the conjugate of torch's grad."""
    b = _hermitian((2, 3, 3)) + 0.2 * _complex((2, 3, 3))

    def f(b, lib):
        return _eigh_invariants(b + b.conj().swapaxes(-1, -2) if lib is anp else b + b.conj().transpose(-1, -2),
                                lib, uplo)

    _check_against_torch(f, b)
    (w, v), (tw, tv) = anp.linalg.eigh(b, UPLO=uplo), torch.linalg.eigh(torch.tensor(b), UPLO=uplo)
    np.testing.assert_allclose(w, tw.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.abs(v), np.abs(tv.numpy()), atol=1e-12)


def _gauge_free(x):
    """Functions of eigh's output that finite differences can see: w, |V|^2 and V diag(sin w) V^H."""
    w, v = anp.linalg.eigh(x)
    rebuilt = anp.matmul(v * anp.expand_dims(anp.sin(w), -2), anp.conj(anp.swapaxes(v, -1, -2)))
    return w, anp.real(v * anp.conj(v)), rebuilt


def test_eigh_complex_jvp_matches_finite_differences_and_the_vjp():
    a, t = _hermitian((3, 3)), _complex((3, 3))  # t is not Hermitian: the JVP reads its lower triangle too
    _, tangents = autodiff.jvp(_gauge_free, (a,), (t,))
    eps = 1e-6
    for got, plus, minus in zip(tangents, _gauge_free(a + eps * t), _gauge_free(a - eps * t)):
        np.testing.assert_allclose(got, (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-8)
    eigh = lambda x: tuple(anp.linalg.eigh(x))  # noqa: E731  (jvp and vjp count eigh's own result as one leaf)
    _, (dw, dv) = autodiff.jvp(eigh, (a,), (t,))  # <u, J t> = <J^T u, t> under the pairing Re sum(x * y)
    uw, uv = RNG.standard_normal(3), _complex((3, 3))
    (ct,) = autodiff.vjp(eigh, a)[1]((uw, uv))
    assert dw.dtype == np.float64 and dv.dtype == np.complex128
    np.testing.assert_allclose(np.sum(uw * dw) + np.real(np.sum(uv * dv)), np.real(np.sum(ct * t)), rtol=1e-10)


def test_eigh_complex_jvp_nests():
    """The JVP is written in differentiable ops: its gradient (forward over reverse) passes gradcheck."""
    a, t = _hermitian((3, 3)), _complex((3, 3))
    assert gradcheck(lambda x: autodiff.jvp(lambda y: _gauge_free(y)[1], (x,), (t,))[1], a)


@pytest.mark.parametrize("decompose", [anp.linalg.eigh, anp.linalg.svd], ids=["eigh", "svd"])
def test_a_function_returning_a_decomposition_directly(decompose):
    """A primitive with several outputs returned as it is: each output is its own leaf, as when unpacked
    (jvp used to end in a bare StopIteration and vjp to count one leaf)."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 3))
    a = a + a.T
    t = rng.standard_normal((3, 3))
    t = t + t.T
    unpacked = lambda x: tuple(decompose(x))  # noqa: E731
    (_, direct), (_, through) = autodiff.jvp(decompose, (a,), (t,)), autodiff.jvp(unpacked, (a,), (t,))
    for d, u in zip(direct, through):
        np.testing.assert_allclose(d, u, rtol=1e-12)
    eps = 1e-6
    numeric = (np.linalg.eigvalsh(a + eps * t) - np.linalg.eigvalsh(a - eps * t)) / (2 * eps)
    if decompose is anp.linalg.eigh:
        np.testing.assert_allclose(direct[0], numeric, rtol=1e-6)
    out, pullback = autodiff.vjp(decompose, a)
    cotangent = tuple(np.ones_like(o) if k == 1 - (decompose is anp.linalg.eigh) else np.zeros_like(o)
                      for k, o in enumerate(out))
    np.testing.assert_allclose(pullback(cotangent)[0], autodiff.vjp(unpacked, a)[1](cotangent)[0], rtol=1e-12)
    _, f_jvp = autodiff.linearize(decompose, a)
    np.testing.assert_allclose(f_jvp(t)[0], direct[0], rtol=1e-12)
