"""Newton-CG with Hessian-vector products on L2-regularised logistic regression.

Each Newton step solves ``H p = -g`` by conjugate gradients, touching ``H`` only through
``autodiff.hvp``.  The optimum equals ``scipy.optimize.minimize(method="Newton-CG")``'s.

Run: ``python examples/newton_cg.py`` or ``python -m examples.newton_cg``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff.nn import functional as F

LAM = 0.1


def data(n=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    y = np.where(x @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return x, y


def objective(w, x, y):
    return anp.mean(F.softplus(-y * (x @ w))) + LAM / 2 * anp.sum(w * w)


def conjugate_gradient(hvp, b, tol=1e-12, max_iter=100):
    """Solve ``H p = b`` for symmetric positive definite ``H`` given only ``v -> H v``."""
    p, r = np.zeros_like(b), b.copy()
    d, rr = r.copy(), r @ r
    for _ in range(max_iter):
        if np.sqrt(rr) < tol:
            break
        hd = hvp(d)
        alpha = rr / (d @ hd)
        p, r = p + alpha * d, r - alpha * hd
        rr, rr_old = r @ r, rr
        d = r + (rr / rr_old) * d
    return p


def newton_cg(x, y, tol=1e-12, max_steps=30):
    w = np.zeros(x.shape[1])
    f = lambda w: objective(w, x, y)  # noqa: E731
    history = []
    for _ in range(max_steps):
        value, g = autodiff.value_and_grad(f)(w)
        history.append((float(value), float(np.linalg.norm(g))))
        if np.linalg.norm(g) < tol:
            break
        step = conjugate_gradient(lambda v, w=w: autodiff.hvp(f, (w,), (v,))[0], -g)
        t = 1.0
        while f(w + t * step) > value + 1e-4 * t * (g @ step):  # backtracking (Armijo)
            t /= 2
        w = w + t * step
    return w, history


def scipy_optimum(x, y):
    from scipy.optimize import minimize

    f = lambda w: float(objective(w, x, y))  # noqa: E731
    jac = autodiff.grad(lambda w: objective(w, x, y))
    hessp = lambda w, v: autodiff.hvp(lambda w: objective(w, x, y), (w,), (v,))[0]  # noqa: E731
    return minimize(f, np.zeros(x.shape[1]), jac=jac, hessp=hessp, method="Newton-CG",
                    options={"xtol": 1e-12, "maxiter": 200}).x


def main(plot=True):
    x, y = data()
    w, history = newton_cg(x, y)
    ref = scipy_optimum(x, y)
    print(f"Newton-CG converged in {len(history)} steps; gradient norm {history[-1][1]:.1e}")
    print(f"largest difference to scipy's Newton-CG optimum: {np.abs(w - ref).max():.2e}")
    if plot:
        from examples._plot import pyplot, save

        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.semilogy([h[1] for h in history], marker="o")
        ax.set_xlabel("Newton step")
        ax.set_ylabel("‖gradient‖")
        print("saved", save(fig, "newton_cg"))


if __name__ == "__main__":
    main()
