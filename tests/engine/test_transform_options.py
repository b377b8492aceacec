"""The transform options JAX has and we lacked (issue 37): hessian(has_aux=True), hessian/jacfwd/jacrev
(holomorphic=True), linearize(has_aux=True) and negative argnums, each with JAX's documented contract.

Oracles: central finite differences of ``f`` itself (for a holomorphic ``f`` a real step gives the complex
derivative, so no convention of ours is assumed), torch on the same inputs, and, for negative ``argnums``, the
same transform with the positive number it counts to (JAX reads ``-1`` as the last argument, as an index).
"""

import numpy as np
import pytest

import autodiff
import autodiff.numpy as anp
from autodiff import (
    ggnvp,
    grad,
    hessian,
    holomorphic_grad,
    hvp,
    hvp_operator,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linearize,
    value_and_grad,
    vjp,
)

Z = np.array([0.3 + 0.2j, -0.5 + 1.0j, 1.1 - 0.4j])
X = np.array([0.4, -0.7, 1.3])


def holomorphic_map(z):
    return anp.sin(z) * z[::-1] + anp.exp(z) ** 2


def holomorphic_scalar(z):
    return anp.sum(anp.sin(z) * z[::-1]) + z[0] * z[1] ** 2


def _fd_jacobian(f, z, h=1e-6):
    """Column k: (f(z + h e_k) - f(z - h e_k)) / 2h, a real step (for holomorphic f, the complex derivative)."""
    return np.stack([(f(z + h * e) - f(z - h * e)) / (2 * h) for e in np.eye(len(z))], axis=-1)


def _fd_hessian(f, z, h=1e-4):
    e = np.eye(len(z))
    return np.array([[(f(z + h * e[i] + h * e[j]) - f(z + h * e[i] - h * e[j]) - f(z - h * e[i] + h * e[j])
                       + f(z - h * e[i] - h * e[j])) / (4 * h * h) for j in range(len(z))] for i in range(len(z))])


# --- holomorphic=True -------------------------------------------------------------------------------------


@pytest.mark.parametrize("transform", [jacfwd, jacrev, jacobian])
def test_holomorphic_jacobians_are_the_complex_derivative(transform):
    got = transform(holomorphic_map, holomorphic=True)(Z)
    assert got.dtype == np.complex128 and got.shape == (3, 3)
    np.testing.assert_allclose(got, _fd_jacobian(holomorphic_map, Z), rtol=1e-8, atol=1e-8)


def test_holomorphic_jacobian_is_not_the_conjugate_convention():
    """For f(z) = z**2 the derivative is 2z, not its conjugate (the real-loss gradient's convention)."""
    got = jacfwd(lambda z: z ** 2, holomorphic=True)(Z)
    np.testing.assert_allclose(np.diag(got), np.diag(_fd_jacobian(lambda z: z ** 2, Z)), rtol=1e-8)
    assert not np.allclose(np.diag(got), np.conj(np.diag(got)))


def test_holomorphic_jacobians_of_structured_arguments_and_argnums():
    f = lambda a, p: {"y": a * p["w"] ** 2, "s": anp.sum(anp.exp(p["w"]))}  # noqa: E731
    a, p = 2.0 + 1.0j, {"w": Z}
    fwd = jacfwd(f, argnums=1, holomorphic=True)(a, p)
    rev = jacrev(f, argnums=1, holomorphic=True)(a, p)
    for key, fd in (("y", _fd_jacobian(lambda w: a * w ** 2, Z)),
                    ("s", _fd_jacobian(lambda w: np.sum(np.exp(w)), Z))):
        np.testing.assert_allclose(fwd[key]["w"], fd, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(rev[key]["w"], fd, rtol=1e-8, atol=1e-8)


def test_holomorphic_hessian_is_the_matrix_of_second_complex_derivatives():
    got = hessian(holomorphic_scalar, holomorphic=True)(Z)
    np.testing.assert_allclose(got, _fd_hessian(holomorphic_scalar, Z), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, jacrev(holomorphic_grad(holomorphic_scalar), holomorphic=True)(Z), rtol=1e-13)


def test_holomorphic_hessian_nests_under_grad():
    """d/dx Re(sum(H(x + 0.5j))) against finite differences (and its second derivative), so the options compose."""

    def loss(x):
        return anp.real(anp.sum(hessian(holomorphic_scalar, holomorphic=True)(x + 0.5j)))

    autodiff.gradcheck(loss, X, order=1)
    autodiff.gradcheck(loss, X, order=2)


def test_holomorphic_jacobians_under_vmap_match_a_loop():
    zs = np.stack([Z, 2 * Z, Z[::-1]])
    for transform in (jacfwd, jacrev):
        j = transform(holomorphic_map, holomorphic=True)
        np.testing.assert_allclose(autodiff.vmap(j)(zs), np.stack([j(z) for z in zs]), rtol=1e-13)


@pytest.mark.parametrize("name, call", [
    ("jacfwd", lambda: jacfwd(holomorphic_map, holomorphic=True)(X)),
    ("jacobian", lambda: jacrev(holomorphic_map, holomorphic=True)(X)),
    ("hessian", lambda: hessian(holomorphic_scalar, holomorphic=True)(X)),
])
def test_holomorphic_with_a_real_input_raises_naming_the_fix(name, call):
    with pytest.raises(TypeError, match=rf"^{name}\(\.\.\., holomorphic=True\): arg 0 has dtype float64, but a "
                                        r"holomorphic derivative needs complex inputs; pass it as complex "
                                        r"\(x\.astype\(complex\), or x \+ 0j\)"):
        call()


@pytest.mark.parametrize("name, call", [
    ("jacfwd", lambda: jacfwd(anp.abs, holomorphic=True)(Z)),
    ("jacobian", lambda: jacrev(anp.abs, holomorphic=True)(Z)),
    ("hessian", lambda: hessian(lambda z: anp.sum(anp.abs(z) ** 2), holomorphic=True)(Z)),
])
def test_holomorphic_with_a_real_output_raises_naming_the_fix(name, call):
    with pytest.raises(TypeError, match=rf"^{name}\(\.\.\., holomorphic=True\): .* has dtype float64, but a "
                                        r"holomorphic function has complex outputs; drop holomorphic=True"):
        call()


def test_without_holomorphic_the_refusals_point_to_it():
    for call in (lambda: jacfwd(holomorphic_map)(Z), lambda: hessian(holomorphic_scalar)(Z),
                 lambda: jacrev(holomorphic_map)(Z)):
        with pytest.raises(TypeError, match=r"holomorphic=True"):
            call()


# --- has_aux on hessian and linearize ------------------------------------------------------------------------


def _loss_and_aux(w, x):
    y = anp.tanh(x @ w)
    return anp.sum(y ** 2) + anp.sum(w ** 4), {"y": y, "note": "kept"}


W = np.array([0.5, -1.0])
DATA = np.array([[1.0, 2.0], [0.5, 0.0], [1.0, 1.0]])


def test_hessian_has_aux_returns_the_hessian_and_aux():
    torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    h, aux = hessian(_loss_and_aux, has_aux=True)(W, DATA)
    want = torch.autograd.functional.hessian(
        lambda w: torch.sum(torch.tanh(torch.tensor(DATA) @ w) ** 2) + torch.sum(w ** 4), torch.tensor(W))
    np.testing.assert_allclose(h, want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(aux["y"], np.tanh(DATA @ W), rtol=1e-15)
    assert aux["note"] == "kept" and type(aux["y"]) is np.ndarray  # plain values, no tangents


def test_hessian_has_aux_with_a_tuple_argnums_and_holomorphic():
    h, aux = hessian(_loss_and_aux, argnums=(0, 1), has_aux=True)(W, DATA)
    np.testing.assert_allclose(h[0][0], hessian(lambda w, x: _loss_and_aux(w, x)[0])(W, DATA), rtol=1e-14)
    np.testing.assert_allclose(h[0][1], hessian(lambda w, x: _loss_and_aux(w, x)[0], argnums=(0, 1))(W, DATA)[0][1],
                               rtol=1e-14)
    hz, auxz = hessian(lambda z: (holomorphic_scalar(z), z[0]), has_aux=True, holomorphic=True)(Z)
    np.testing.assert_allclose(hz, hessian(holomorphic_scalar, holomorphic=True)(Z), rtol=1e-15)
    assert auxz == Z[0]


def test_hessian_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match=r"^hessian\(\.\.\., has_aux=True\): the function must return a pair"):
        hessian(lambda w: anp.sum(w ** 3), has_aux=True)(W)


def test_linearize_has_aux_returns_out_f_jvp_and_aux():
    v = np.array([1.0, 0.5])
    out, f_jvp, aux = linearize(_loss_and_aux, W, DATA, has_aux=True)
    want_out, want_t = jvp(lambda w, x: _loss_and_aux(w, x)[0], (W, DATA), (v, np.zeros_like(DATA)))
    np.testing.assert_allclose(out, want_out, rtol=1e-15)
    np.testing.assert_allclose(f_jvp(v, np.zeros_like(DATA)), want_t, rtol=1e-14)
    np.testing.assert_allclose(aux["y"], np.tanh(DATA @ W), rtol=1e-15)
    assert aux["note"] == "kept" and type(aux["y"]) is np.ndarray
    (g_w, _) = f_jvp.transpose(1.0)
    np.testing.assert_allclose(g_w, grad(lambda w: _loss_and_aux(w, DATA)[0])(W), rtol=1e-14)


def test_the_has_aux_options_nest_and_batch():
    """vmap of hessian(has_aux) against a loop; hessian(has_aux) and linearize(has_aux) under grad against finite
    differences (orders 1 and 2), aux carried through as a value that is differentiated too."""
    f = lambda w: (anp.sum(anp.tanh(w) ** 3), anp.sum(w))  # noqa: E731
    ws = np.array([[0.5, -1.0], [0.2, 0.3], [1.0, 2.0]])
    h, aux = autodiff.vmap(hessian(f, has_aux=True))(ws)
    loop = [hessian(f, has_aux=True)(w) for w in ws]
    np.testing.assert_allclose(h, np.stack([hw for hw, _ in loop]), rtol=1e-14)
    np.testing.assert_allclose(aux, [a for _, a in loop], rtol=1e-15)
    assert autodiff.gradcheck(lambda w: anp.sum(hessian(f, has_aux=True)(w)[0]), ws[0])

    def through_linearize(w):
        _, f_jvp, aux = linearize(f, w, has_aux=True)
        return f_jvp(np.ones(2)) * aux

    assert autodiff.gradcheck(through_linearize, ws[0], order=1)
    assert autodiff.gradcheck(through_linearize, ws[0], order=2)


def test_linearize_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match=r"^linearize\(\.\.\., has_aux=True\): the function must return a pair"):
        linearize(anp.sin, W, has_aux=True)


# --- negative argnums ------------------------------------------------------------------------------------------


def _net(w, b, x):
    return anp.tanh(x @ w + b)


def _loss(w, b, x):
    return anp.sum(_net(w, b, x) ** 2)


ARGS = (np.array([[0.5, -1.0], [0.25, 0.75]]), np.array([0.1, -0.2]), np.array([[1.0, 2.0], [0.5, 0.0]]))
DIRS = (np.ones((2, 2)), np.array([1.0, -1.0]), np.full((2, 2), 0.5))

TRANSFORMS = {
    "grad": lambda n: grad(_loss, argnums=n)(*ARGS),
    "value_and_grad": lambda n: value_and_grad(_loss, argnums=n)(*ARGS)[1],
    "jacobian": lambda n: jacobian(_net, argnums=n)(*ARGS),
    "jacfwd": lambda n: jacfwd(_net, argnums=n)(*ARGS),
    "hessian": lambda n: hessian(_loss, argnums=n)(*ARGS),
    "jvp": lambda n: jvp(_net, ARGS, _directions(n), argnums=n)[1],
    "hvp": lambda n: hvp(_loss, ARGS, _directions(n), argnums=n),
    "hvp_operator": lambda n: hvp_operator(_loss, *ARGS, argnums=n)(_directions(n)),
    "ggnvp": lambda n: ggnvp(_net, lambda y: anp.sum(y ** 2), ARGS, _directions(n), argnums=n),
    "holomorphic_grad": lambda n: holomorphic_grad(lambda *a: anp.sum(_net(*a)), argnums=n)(
        *[a.astype(complex) for a in ARGS]),
}


def _directions(n):
    pick = lambda k: DIRS[k] if -3 <= k < 3 else DIRS[0]  # noqa: E731  (out of range: refused before it is read)
    return tuple(pick(k) for k in n) if isinstance(n, tuple) else pick(n)


NAMED = {"value_and_grad": "grad"}  # value_and_grad is grad's road: its messages say grad


def _assert_same(a, b):
    if isinstance(a, (tuple, list, dict)):
        items = a.items() if isinstance(a, dict) else enumerate(a)
        for k, v in items:
            _assert_same(v, b[k])
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", list(TRANSFORMS))
@pytest.mark.parametrize("negative, positive", [(-1, 2), (-3, 0), ((0, -1), (0, 2)), ((-2, -3), (1, 0))])
def test_negative_argnums_count_from_the_end(name, negative, positive):
    _assert_same(TRANSFORMS[name](negative), TRANSFORMS[name](positive))


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_an_argnums_naming_one_argument_twice_through_a_negative_number_raises(name):
    with pytest.raises(ValueError, match=rf"^{NAMED.get(name, name)}: argnums=\(2, -1\) names argument 2 twice"):
        TRANSFORMS[name]((2, -1))


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_a_negative_argnums_past_the_first_argument_raises(name):
    with pytest.raises(ValueError, match=rf"^{NAMED.get(name, name)}: argnums=-4 is out of range for a call with 3 "
                                         r"positional "
                                         r"argument\(s\); use integers from 0 to 2 \(or from -3"):
        TRANSFORMS[name](-4)


def test_vjp_has_no_argnums_and_differentiates_every_primal():
    """JAX's vjp takes no argnums either: nothing to count from the end there."""
    _, pullback = vjp(_loss, *ARGS)
    _assert_same(pullback(1.0), grad(_loss, argnums=(-3, -2, -1))(*ARGS))
