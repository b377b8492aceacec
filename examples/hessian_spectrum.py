"""The Hessian spectrum of a small MLP's loss: the top eigenvalue by Lanczos on ``hvp`` equals
``numpy.linalg.eigvalsh`` of the dense Hessian built with ``autodiff.hessian``.

Run: ``python examples/hessian_spectrum.py`` or ``python -m examples.hessian_spectrum``.
"""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import autodiff
from layers import MLP
from layers.losses import mse
from traversal import destructure


def problem(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((32, 3))
    y = np.tanh(x @ rng.standard_normal((3, 1)))
    model = MLP([3, 8, 1], dtype=np.float64, seed=seed)
    flat, rebuild = destructure(model)
    return flat, (lambda v: mse(rebuild(v)(x), y))


def lanczos_top(hvp, n, steps=20, seed=0):
    """The largest eigenvalue of a symmetric operator from ``steps`` Lanczos iterations (fully reorthogonalised)."""
    q = np.random.default_rng(seed).standard_normal(n)
    basis = [q / np.linalg.norm(q)]
    alphas, betas = [], []
    for k in range(min(steps, n)):
        w = hvp(basis[k])
        alphas.append(basis[k] @ w)
        for b in basis:  # full reorthogonalisation keeps the small problem exact
            w = w - (b @ w) * b
        beta = np.linalg.norm(w)
        if beta < 1e-12 or k == min(steps, n) - 1:
            break
        betas.append(beta)
        basis.append(w / beta)
    tridiagonal = np.diag(alphas) + np.diag(betas[: len(alphas) - 1], 1) + np.diag(betas[: len(alphas) - 1], -1)
    return np.linalg.eigvalsh(tridiagonal)[-1]


def spectra(seed=0):
    flat, loss = problem(seed)
    dense = autodiff.hessian(loss)(flat)
    exact = np.linalg.eigvalsh(dense)
    top = lanczos_top(lambda v: autodiff.hvp(loss, (flat,), (v,))[0], flat.size)
    return exact, top


def main(plot=True):
    exact, top = spectra()
    print(f"{exact.size} parameters; top Hessian eigenvalue by Lanczos on hvp: {top:.10f}")
    print(f"numpy.linalg.eigvalsh of the dense Hessian:                  {exact[-1]:.10f}")
    if plot:
        from examples._plot import pyplot, save

        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(exact[::-1], marker=".", linestyle="none")
        ax.axhline(top, color="red", linewidth=0.8, label="Lanczos top eigenvalue")
        ax.set_xlabel("index")
        ax.set_ylabel("Hessian eigenvalue")
        ax.legend()
        print("saved", save(fig, "hessian_spectrum"))


if __name__ == "__main__":
    main()
