"""A shared gallery of awkward models: ties, partly trainable layers, functions and ints inside,
float32, complex, empty models, nested dicts of tuples of dataclasses, a tie into a non-trainable
field, parameters that are views of one buffer, one array in two arguments (a pair)."""

import dataclasses

import numpy as np

from traversal import trainable


@dataclasses.dataclass
class Dense:
    weight: np.ndarray
    bias: np.ndarray
    activation: object = np.tanh


@dataclasses.dataclass
class BatchNormLike:
    beta: np.ndarray
    gamma: np.ndarray
    running_mean: np.ndarray
    running_var: np.ndarray
    momentum: float = 0.1


@trainable.register(BatchNormLike)
def _(layer):
    return ("beta", "gamma")


def _rng():
    return np.random.default_rng(42)


def gallery():
    rng = _rng()
    m1 = np.array([1.0, 2.0, 3.0])
    dense = Dense(rng.standard_normal((3, 2)), rng.standard_normal(2))
    stats, flat, shared = rng.standard_normal(3), rng.standard_normal(8), rng.standard_normal(3)
    return {
        "tied": {"x": m1, "y": m1, "z": np.array([4.0, 5.0, 6.0])},
        "tied_layer": [dense, dense],
        "partly_trainable": {"norm": BatchNormLike(np.zeros(3), np.ones(3), np.zeros(3), np.ones(3))},
        "functions_and_ints": {"f": np.sin, "n": 3, "flag": True, "idx": np.arange(4),
                               "w": rng.standard_normal(2)},
        "float32": {"w": rng.standard_normal((2, 2)).astype(np.float32)},
        "complex": {"c": rng.standard_normal(2) + 1j * rng.standard_normal(2)},
        "empty": {},
        "nested": {"a": ({"b": Dense(rng.standard_normal((2, 2)), rng.standard_normal(2))}, 7)},
        # first met as running statistics (not trainable), then as a trainable array
        "tied_into_non_trainable": {"norm": BatchNormLike(np.zeros(3), np.ones(3), stats, np.ones(3)), "w": stats},
        "views_of_one_buffer": {"W": flat[:6].reshape(2, 3), "b": flat[6:]},
        # the model as a pair of arguments (grad(f, argnums=(0, 1))(*model)): each its own variable
        "one_array_in_two_arguments": ({"w": shared}, {"w": shared, "b": rng.standard_normal(3)}),
    }
