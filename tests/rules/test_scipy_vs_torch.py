"""autodiff.scipy against PyTorch on identical inputs: values, gradients, and second derivatives.

Each case compares ``f``, the gradient of ``sum(w * f)`` and the gradient of ``<that gradient, v>``
(a Hessian-vector product) with torch's double backward.  Values are also checked against scipy.
Functions torch lacks (logistic, multivariate_t, sqrtm, logm, betainc) are covered by gradcheck in
the op table and by scipy values in tests/rules/test_scipy.py.
"""

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.signal as sg
import scipy.special as ss
import scipy.stats as sst

import autodiff
import autodiff.numpy as anp
import autodiff.scipy.linalg as la
import autodiff.scipy.signal as sig
import autodiff.scipy.special as sp
import autodiff.scipy.stats as st

torch = pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
td = torch.distributions
tsp = torch.special

rng = np.random.default_rng(23)
X = rng.standard_normal((2, 3))
POS = np.abs(rng.standard_normal((2, 3))) + 0.5
UNIT = 0.05 + 0.9 / (1 + np.exp(-rng.standard_normal((2, 3))))
SQ = rng.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = SQ @ SQ.T
RHS = rng.standard_normal((3, 2))
MEAN = rng.standard_normal(3)
PTS = rng.standard_normal((4, 3))
SIMPLEX = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])
COUNTS = np.array([0, 2, 5])  # integers: data, not differentiated
BITS = np.array([0, 1, 1])


def _mvn(x, m, c):
    return td.MultivariateNormal(m, covariance_matrix=(c + c.T) / 2).log_prob(x)


def _lu_packed(a):
    return torch.linalg.lu_factor(a)[0]


SPECIAL = {
    "gammaln": ((POS * 3,), sp.gammaln, torch.lgamma, ss.gammaln),
    "digamma": ((POS,), sp.digamma, torch.digamma, ss.digamma),
    "polygamma 2": ((POS,), lambda x: sp.polygamma(2, x), lambda x: torch.polygamma(2, x),
                    lambda x: ss.polygamma(2, x)),
    "erf": ((X,), sp.erf, torch.erf, ss.erf),
    "erfc": ((X,), sp.erfc, torch.erfc, ss.erfc),
    "erfinv": ((UNIT * 1.8 - 0.9,), sp.erfinv, torch.erfinv, ss.erfinv),
    "ndtr": ((X,), sp.ndtr, tsp.ndtr, ss.ndtr),
    "ndtri": ((UNIT,), sp.ndtri, tsp.ndtri, ss.ndtri),
    "log_ndtr": ((X * 3,), sp.log_ndtr, tsp.log_ndtr, ss.log_ndtr),
    "expit": ((X,), sp.expit, torch.sigmoid, ss.expit),
    "logit": ((UNIT,), sp.logit, torch.logit, ss.logit),
    "logsumexp axis": ((X,), lambda x: sp.logsumexp(x, axis=1), lambda x: torch.logsumexp(x, 1),
                       lambda x: ss.logsumexp(x, axis=1)),
    "logsumexp keepdims": ((X,), lambda x: sp.logsumexp(x, axis=0, keepdims=True),
                           lambda x: torch.logsumexp(x, 0, keepdim=True),
                           lambda x: ss.logsumexp(x, axis=0, keepdims=True)),
    "xlogy": ((X, POS), sp.xlogy, tsp.xlogy, ss.xlogy),
    "xlog1py": ((X, POS), sp.xlog1py, tsp.xlog1py, ss.xlog1py),
    "entr": ((POS,), sp.entr, tsp.entr, ss.entr),
    "betaln": ((POS, POS.T.reshape(2, 3)), sp.betaln,
               lambda a, b: torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b), ss.betaln),
    "i0": ((X,), sp.i0, tsp.i0, ss.i0),
    "i1": ((X,), sp.i1, tsp.i1, ss.i1),
    "i0e": ((X,), sp.i0e, tsp.i0e, ss.i0e),
    "i1e": ((X,), sp.i1e, tsp.i1e, ss.i1e),
    "gammainc in x": ((POS,), lambda x: sp.gammainc(1.5, x), lambda x: tsp.gammainc(torch.tensor(1.5), x),
                      lambda x: ss.gammainc(1.5, x)),
}

STATS = {
    "norm.logpdf": ((X, POS[0], POS), st.norm.logpdf, lambda x, m, s: td.Normal(m, s).log_prob(x),
                    sst.norm.logpdf),
    "norm.cdf": ((X, MEAN[:3], POS), st.norm.cdf, lambda x, m, s: td.Normal(m, s).cdf(x), sst.norm.cdf),
    "norm.ppf": ((UNIT, MEAN[:3], POS), st.norm.ppf, lambda q, m, s: td.Normal(m, s).icdf(q), sst.norm.ppf),
    "t.logpdf": ((X, POS * 3, MEAN[:3], POS), st.t.logpdf, lambda x, df, m, s: td.StudentT(df, m, s).log_prob(x),
                 sst.t.logpdf),
    "cauchy.logpdf": ((X, MEAN[:3], POS), st.cauchy.logpdf, lambda x, m, s: td.Cauchy(m, s).log_prob(x),
                      sst.cauchy.logpdf),
    "cauchy.cdf": ((X, MEAN[:3], POS), st.cauchy.cdf, lambda x, m, s: td.Cauchy(m, s).cdf(x), sst.cauchy.cdf),
    "laplace.logpdf": ((X, MEAN[:3] + 3, POS), st.laplace.logpdf, lambda x, m, s: td.Laplace(m, s).log_prob(x),
                       sst.laplace.logpdf),
    "laplace.cdf": ((X, MEAN[:3] + 3, POS), st.laplace.cdf, lambda x, m, s: td.Laplace(m, s).cdf(x),
                    sst.laplace.cdf),
    "gamma.logpdf": ((POS, POS * 2), st.gamma.logpdf, lambda x, a: td.Gamma(a, 1.0).log_prob(x), sst.gamma.logpdf),
    "gamma.logpdf scale": ((POS, POS * 2, 0.0, POS.T.reshape(2, 3)), st.gamma.logpdf,
                           lambda x, a, loc, s: td.Gamma(a, 1 / s).log_prob(x), sst.gamma.logpdf),
    "beta.logpdf": ((UNIT, POS, POS * 2), st.beta.logpdf, lambda x, a, b: td.Beta(a, b).log_prob(x),
                    sst.beta.logpdf),
    "expon.logpdf": ((POS, 0.0, POS * 2), st.expon.logpdf,
                     lambda x, loc, s: td.Exponential(1 / s).log_prob(x), sst.expon.logpdf),
    "expon.cdf": ((POS, 0.0, POS * 2), st.expon.cdf, lambda x, loc, s: td.Exponential(1 / s).cdf(x), sst.expon.cdf),
    "poisson.logpmf": ((COUNTS, POS[0]), st.poisson.logpmf, lambda k, mu: td.Poisson(mu).log_prob(k.double()),
                       sst.poisson.logpmf),
    "bernoulli.logpmf": ((BITS, UNIT[0]), st.bernoulli.logpmf,
                         lambda k, p: td.Bernoulli(probs=p).log_prob(k.double()), sst.bernoulli.logpmf),
    "binom.logpmf": ((COUNTS, 6, UNIT[0]), st.binom.logpmf,
                     lambda k, n, p: td.Binomial(n, probs=p).log_prob(k.double()), sst.binom.logpmf),
    "dirichlet.logpdf": ((SIMPLEX, POS[0] * 2), st.dirichlet.logpdf,
                         lambda x, a: td.Dirichlet(a).log_prob(x.T), sst.dirichlet.logpdf),
    "multivariate_normal.logpdf": ((PTS, MEAN, SPD), st.multivariate_normal.logpdf, _mvn,
                                   sst.multivariate_normal.logpdf),
}

LINALG = {
    "solve_triangular lower": ((np.tril(SQ), RHS), lambda a, b: la.solve_triangular(a, b, lower=True),
                               lambda a, b: torch.linalg.solve_triangular(torch.tril(a), b, upper=False),
                               lambda a, b: sl.solve_triangular(a, b, lower=True)),
    "solve_triangular upper trans": ((SQ, RHS), lambda a, b: la.solve_triangular(a, b, trans="T"),
                                     lambda a, b: torch.linalg.solve_triangular(torch.triu(a).T, b, upper=False),
                                     lambda a, b: sl.solve_triangular(a, b, trans="T")),
    "solve_triangular unit": ((SQ, RHS), lambda a, b: la.solve_triangular(a, b, lower=True, unit_diagonal=True),
                              lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
                              lambda a, b: sl.solve_triangular(a, b, lower=True, unit_diagonal=True)),
    "cholesky upper": ((SPD,), la.cholesky, lambda a: torch.linalg.cholesky(a, upper=True), sl.cholesky),
    "cho_solve": ((SPD, RHS), lambda a, b: la.cho_solve(la.cho_factor(a), b),
                  lambda a, b: torch.cholesky_solve(b, torch.linalg.cholesky(a)),
                  lambda a, b: sl.cho_solve(sl.cho_factor(a), b)),
    "lu_factor": ((SQ[::-1].copy(),), lambda a: la.lu_factor(a)[0], _lu_packed, lambda a: sl.lu_factor(a)[0]),
    "lu_solve": ((SQ, RHS), lambda a, b: la.lu_solve(la.lu_factor(a), b),
                 lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b),
                 lambda a, b: sl.lu_solve(sl.lu_factor(a), b)),
    "expm": ((SQ * 0.3,), la.expm, torch.linalg.matrix_exp, sl.expm),
    "block_diag": ((SQ, RHS), la.block_diag, torch.block_diag, sl.block_diag),
}


SIG_1D, KERNEL_1D = rng.standard_normal(7), rng.standard_normal(3)
SIG_2D, KERNEL_2D = rng.standard_normal((5, 6)), rng.standard_normal((2, 3))


def _torch_correlate(a, v, full=False):
    """torch's conv1d/conv2d is a cross-correlation; ``full`` pads by the kernel size minus one."""
    conv = torch.nn.functional.conv1d if a.dim() == 1 else torch.nn.functional.conv2d
    padding = tuple(n - 1 for n in v.shape) if full else 0
    return conv(a[None, None], v[None, None], padding=padding)[0, 0]


SIGNAL = {
    "correlate 1-D valid": ((SIG_1D, KERNEL_1D), lambda a, v: sig.correlate(a, v, "valid"), _torch_correlate,
                            lambda a, v: sg.correlate(a, v, "valid")),
    "convolve 1-D full": ((SIG_1D, KERNEL_1D), sig.convolve, lambda a, v: _torch_correlate(a, v.flip(0), True),
                          sg.convolve),
    "correlate 2-D full": ((SIG_2D, KERNEL_2D), sig.correlate2d, lambda a, v: _torch_correlate(a, v, True),
                           sg.correlate2d),
    "convolve 2-D valid": ((SIG_2D, KERNEL_2D), lambda a, v: sig.convolve2d(a, v, "valid"),
                           lambda a, v: _torch_correlate(a, v.flip(0, 1)), lambda a, v: sg.convolve2d(a, v, "valid")),
}


def _float_positions(args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f")


def _torch_args(args):
    floats = _float_positions(args)
    return [torch.tensor(a, requires_grad=i in floats) if isinstance(a, np.ndarray) else a for i, a in enumerate(args)]


def _torch_second(t_dir, inputs):
    """torch's second derivative; a zero one (a linear function) is reported as zeros, not an error."""
    if not t_dir.requires_grad:
        return [torch.zeros_like(x) for x in inputs]
    grads = torch.autograd.grad(t_dir, inputs, allow_unused=True)
    return [torch.zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def _compare(args, ours, theirs, reference):
    argnums = _float_positions(args)
    out = ours(*args)
    np.testing.assert_allclose(out, reference(*args), rtol=1e-9, atol=1e-12)
    w = np.random.default_rng(1).standard_normal(np.shape(out))
    vs = [np.random.default_rng(2 + i).standard_normal(np.shape(args[i])) for i in argnums]

    def weighted(*xs):
        return anp.sum(ours(*xs) * w)

    def directional(*xs):
        gs = autodiff.grad(weighted, argnums=argnums)(*xs)
        return sum(anp.sum(g * v) for g, v in zip(gs, vs))

    first = autodiff.grad(weighted, argnums=argnums)(*args)
    second = autodiff.grad(directional, argnums=argnums)(*args)
    ts = _torch_args(args)
    t_out = theirs(*ts)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-9, atol=1e-12)
    t_first = torch.autograd.grad((t_out * torch.tensor(w)).sum(), [ts[i] for i in argnums], create_graph=True)
    t_dir = sum((g * torch.tensor(v)).sum() for g, v in zip(t_first, vs))
    t_second = _torch_second(t_dir, [ts[i] for i in argnums])
    for mine, t in zip(first, t_first):
        np.testing.assert_allclose(mine, t.detach().numpy(), rtol=1e-8, atol=1e-10)
    for mine, t in zip(second, t_second):
        np.testing.assert_allclose(mine, t.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_matches_torch(name):
    _compare(*SPECIAL[name])


@pytest.mark.parametrize("name", list(STATS))
def test_stats_matches_torch_distributions(name):
    _compare(*STATS[name])


@pytest.mark.parametrize("name", list(LINALG))
def test_linalg_matches_torch(name):
    _compare(*LINALG[name])


@pytest.mark.parametrize("name", list(SIGNAL))
def test_signal_matches_torch_conv(name):
    _compare(*SIGNAL[name])
