"""Finite differences, the referee of :func:`autodiff.compare`: where a derivative exists, its value; where it
does not, the two one-sided derivatives, so that a kink is reported as one ("left -1, right 1") and never as
the number a symmetric difference happens to give there.

Steps are relative: ``h = 1e-6 * max(1, |x_i|)`` for first derivatives (``1e-4`` for ``H v``), so ``x**3``
at 1e3 is differentiated as accurately as at 1.  Every difference is taken at ``h`` and ``h / 4``; one that
does not settle between the two has no limit there (NaN), or grows without bound (``inf`` with its sign).

Per element, the left and right derivatives come from second-order one-sided differences
(``(-3 f(0) + 4 f(h) - f(2h)) / 2h``), exact on each linear piece of a kink.  When they agree, the derivative
is the central difference; when they differ, there is no derivative: the gradient holds NaN there, and
``left`` and ``right`` hold the two sides.  A complex leaf ``z = x + iy`` is moved along ``x`` and along
``y``; its entry is ``du/dx - i du/dy`` with ``u = Re f``, autodiff's and JAX's convention (torch's
``z.grad`` is the conjugate).
"""

import numpy as np

STEP = 1e-6
SECOND_STEP = 1e-4
_FINER = 4.0
_WIDER = (1.0, 10.0, 100.0, 1000.0)  # step multipliers tried in turn where rounding swamps the smallest
_SETTLED = 1e-3  # two estimates within this relative distance have settled
_EPS = np.finfo(float).eps


def referee(g, xs, direction):
    """``(value, gradient, left, right, H v, noise)`` of ``Re sum(g(*xs))``: the value, then lists with one numpy
    array per leaf (``H v`` ``None`` when ``direction`` is); ``noise`` holds the rounding error of each gradient
    entry and, with ``H v``, of each ``H v`` entry (``(gradient noise, H v noise)``)."""
    xs = [_float64(x) for x in xs]
    out = g(*xs)
    f0 = _real(out)
    columns = [_leaf_derivatives(g, xs, k, f0) for k in range(len(xs))]
    grad, left, right, noise = (list(c) for c in zip(*columns)) if columns else ([], [], [], [])
    hv, hv_noise = None, None
    if direction is not None:
        hv, hv_noise = (list(c) for c in zip(*[_hessian_times(g, xs, direction, k, f0) for k in range(len(xs))]))
    return np.asarray(out), grad, left, right, hv, (noise, hv_noise)


def _float64(x):
    """float32 data in double precision: a step of 1e-6 is below float32's resolution."""
    return x.astype(np.result_type(x.dtype, np.float64)) if isinstance(x, np.ndarray) else x


def _real(out):
    return float(np.sum(np.real(np.asarray(out))))


def _leaf_derivatives(g, xs, k, f0):
    """The gradient, left and right derivatives and rounding noise of leaf ``k``, element by element."""
    x = np.asarray(xs[k])
    parts = (1.0, 1j) if x.dtype.kind == "c" else (1.0,)
    shape, dtype = x.shape, np.result_type(x.dtype, float)
    grad, left, right = (np.zeros(shape, dtype) for _ in range(3))
    noise = np.zeros(shape)
    for i in np.ndindex(shape):
        h = STEP * max(1.0, abs(x[i]))
        for unit in parts:
            line = _Line(g, xs, k, i, unit, f0)
            d, lo, hi, step = _one_direction(line, h)
            weight = np.conj(unit)  # du/dx - i du/dy: the imaginary direction enters conjugated
            grad[i] += weight * d
            left[i] += weight * lo
            right[i] += weight * hi
            noise[i] = max(noise[i], _noise(f0, step))
    return grad, left, right, noise


def referee_jvp(g, xs, tangent):
    """``(J v, left, right, noise)``: the derivative of ``Re sum(g)`` along ``tangent`` (one array per leaf),
    NaN where the one-sided derivatives along it differ (both then given)."""
    xs = [_float64(x) for x in xs]
    f0 = _real(g(*xs))
    scale = max([1.0] + [float(np.max(np.abs(np.asarray(x)), initial=0.0)) for x in xs])
    line = _Along(g, xs, tangent, f0)
    d, left, right, step = _one_direction(line, STEP * scale)
    return d, left, right, _noise(f0, step)


class _Along:
    """``t -> Re sum(g(xs + t * tangent))``: f along a direction."""

    def __init__(self, g, xs, tangent, f0):
        self.g, self.xs, self.tangent = g, xs, tangent
        self.seen = {0.0: f0}

    def __call__(self, t):
        if t not in self.seen:
            moved = [x + t * np.asarray(v) if isinstance(x, np.ndarray) else x + t * float(v)
                     for x, v in zip(self.xs, self.tangent)]
            self.seen[t] = _real(self.g(*moved))
        return self.seen[t]


class _Line:
    """``t -> Re sum(g(xs with leaf k's element i moved by t * unit))``: f along one coordinate."""

    def __init__(self, g, xs, k, i, unit, f0):
        self.g, self.xs, self.k, self.i, self.unit = g, xs, k, i, unit
        self.seen = {0.0: f0}  # the central and one-sided differences share their points

    def __call__(self, t):
        if t not in self.seen:
            self.seen[t] = _real(self.g(*_moved(self.xs, {self.k: (self.i, t * self.unit)})))
        return self.seen[t]


def _moved(xs, shifts):
    """``xs`` with ``shifts[k] = (index, delta)`` added; a Python scalar stays a Python scalar."""
    out = list(xs)
    for k, (i, delta) in shifts.items():
        if isinstance(xs[k], np.ndarray):
            moved = xs[k].astype(np.result_type(xs[k], delta), copy=True)
            moved[i] += delta
            out[k] = moved
        else:
            out[k] = xs[k] + delta
    return out


def _one_direction(f, h):
    """``(derivative, left, right, step)`` along one line: the central difference where both sides agree, NaN
    (with the sides) where they do not.  Where rounding swamps the smallest step (``|f|`` much larger than its
    change along this coordinate) wider steps are tried in turn."""
    for step in (h * w for w in _WIDER):
        central, left, right = _sides(f, step)
        if np.isfinite(central) or (np.isfinite(left) and np.isfinite(right)):
            return _derivative(central, left, right, f(0), step), left, right, step
    central, left, right = _sides(f, h)
    return _derivative(central, left, right, f(0), h), left, right, h


def _sides(f, h):
    """The central, left and right differences at ``h``, each settled against ``h / 4``; a quotient within the
    rounding noise of ``f`` is 0 (else noise, growing as the step shrinks, would look like an infinite slope)."""
    def quotients(formula):
        return [_below_noise(formula(s), _noise(f(0), s)) for s in (h, h / _FINER)]

    central = _settle(*quotients(lambda s: (f(s) - f(-s)) / (2 * s)))
    left = _settle(*quotients(lambda s: (3 * f(0) - 4 * f(-s) + f(-2 * s)) / (2 * s)))
    right = _settle(*quotients(lambda s: (-3 * f(0) + 4 * f(s) - f(2 * s)) / (2 * s)))
    return central, left, right


def _derivative(central, left, right, f0, h):
    noise = _noise(f0, h)
    if np.isfinite(left) and np.isfinite(right) and _agree(left, right, noise):
        return _below_noise(central if np.isfinite(central) else (left + right) / 2, noise)
    if left == right:  # both +inf, or both -inf: cbrt at 0
        return left
    if np.isnan(left) and np.isnan(right):
        return central
    return np.nan


def _noise(f0, h):
    """The rounding error of a difference quotient of ``f`` at step ``h``."""
    return 100 * _EPS * abs(f0) / h


def _agree(a, b, noise):
    return abs(a - b) <= 1e-4 * max(abs(a), abs(b)) + 10 * noise


def _settle(coarse, fine):
    """``fine`` when the two estimates agree; ``+-inf`` when they grow without bound; NaN otherwise."""
    if np.isclose(coarse, fine, rtol=_SETTLED, atol=0.0):
        return fine
    if np.isfinite(coarse) and np.isfinite(fine) and abs(fine) > 1.5 * abs(coarse) and np.sign(fine) == np.sign(
            coarse):
        return np.inf * np.sign(fine)
    return np.nan


def _hessian_times(g, xs, direction, k, f0):
    """``(H v, noise)`` for leaf ``k`` from mixed second differences at two relative steps; NaN where they do not
    settle (the second derivative has no limit there, e.g. the Hessian of a norm at 0)."""
    x = np.asarray(xs[k], float)
    out, noise = np.empty(x.shape), np.empty(x.shape)
    scale_v = max([1.0] + [float(np.max(np.abs(np.asarray(a)), initial=0.0)) for a in xs])
    for i in np.ndindex(x.shape):
        scale_e = max(1.0, abs(x[i]))
        for wider in _WIDER[:3]:
            he, hv = SECOND_STEP * wider * scale_e, SECOND_STEP * wider * scale_v
            estimates = [_mixed(g, xs, direction, k, i, he * s, hv * s) for s in (1.0, 1.0 / _FINER)]
            noise[i] = 100 * _EPS * abs(f0) / (he * hv / _FINER ** 2)
            out[i] = _below_noise(_settle_second(*estimates), noise[i])
            if np.isfinite(out[i]):
                break
    return out, noise


def _below_noise(estimate, noise):
    """0 for an estimate within the rounding noise of the differences: the referee cannot tell it from 0."""
    return 0.0 if abs(estimate) <= noise else estimate


def _settle_second(coarse, fine):
    return fine if np.isclose(coarse, fine, rtol=_SETTLED, atol=1e-6) else np.nan


def _mixed(g, xs, direction, k, i, he, hv):
    total = 0.0
    for sign_e, sign_v in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        moved = [x + sign_v * hv * np.asarray(v) if isinstance(x, np.ndarray) else x + sign_v * hv * float(v)
                 for x, v in zip(xs, direction)]
        total += sign_e * sign_v * _real(g(*_moved(moved, {k: (i, sign_e * he)})))
    return total / (4 * he * hv)
