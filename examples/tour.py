"""A short tour of the engine: run ``python examples/tour.py``."""

import os
import sys

if not __package__:  # run as a script (python examples/NAME.py): import this checkout's packages
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from collections import namedtuple

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff import grad, hessian, hvp, jvp


def rosenbrock(x):
    return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def main(plot=True):
    print("grad(sin)(0.5)           =", grad(anp.sin)(0.5), " (cos 0.5 =", np.cos(0.5), ")")
    d4 = grad(grad(grad(grad(anp.sin))))
    print("4th derivative of sin    =", d4(0.5), " (sin 0.5 =", np.sin(0.5), ")")
    print("closed-over variable     =", grad(lambda x: x * grad(lambda y: x * y)(x))(1.0), "(must be 2)")

    x = np.array([1.2, 0.7, -0.3])
    print("hessian(rosenbrock)(x)   =\n", hessian(rosenbrock)(x))
    print("hvp with ones            =", hvp(rosenbrock, (x,), (np.ones(3),))[0])
    print("jvp with ones            =", float(jvp(rosenbrock, (x,), (np.ones(3),))[1]))

    Layer = namedtuple("Layer", ["weight", "bias", "activation"])
    shared = np.array([[1.0, -1.0], [0.5, 2.0]])
    model = {"encoder": Layer(shared, np.zeros(2), "tanh"), "decoder": Layer(shared, np.ones(2), "id"),
             "steps": 3}

    def loss(m):
        h = anp.tanh(np.ones(2) @ m["encoder"].weight + m["encoder"].bias)
        return anp.sum((h @ m["decoder"].weight + m["decoder"].bias) ** 2)

    g = grad(loss)(model)
    print("gradient of a tied model (the tie's total sits at its first occurrence):")
    print("  encoder:", g["encoder"])
    print("  decoder:", g["decoder"])
    print("  steps:  ", g["steps"])
    print("gradcheck(order=2)       =", autodiff.gradcheck(loss, model, order=2))
    if plot:
        plot_derivatives()


def elementwise_derivative(f):
    """x -> f'(x) elementwise: the gradient of sum(f(x)) for an elementwise f (itself differentiable again)."""
    return grad(lambda x: anp.sum(f(x)))


def plot_derivatives():
    from examples._plot import pyplot, save

    xs, f = np.linspace(-np.pi, np.pi, 200), anp.sin
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for order in range(5):
        ax.plot(xs, f(xs), linestyle="--" if order == 4 else "-", label=["sin", "1st", "2nd", "3rd", "4th"][order])
        f = elementwise_derivative(f)
    ax.set_xlabel("x")
    ax.legend(title="nested grad of sin", fontsize=8)
    print("saved", save(fig, "tour"))


if __name__ == "__main__":
    main()
