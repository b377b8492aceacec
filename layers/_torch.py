"""load_torch_state_dict: the same weights in both frameworks, for parity tests and benchmarks."""

import numpy as np

from traversal import fmap_with_path, isnumeric

_RENAME = {"gamma": "weight", "beta": "bias"}


def torch_name(path):
    """The torch state-dict key for one of our key paths (``Chain.layers[i]`` is torch's ``i``).

    >>> from traversal import KeyPath
    >>> torch_name(KeyPath("layer1", 0, "downsample", "layers", 1, "gamma"))
    'layer1.0.downsample.1.weight'
    """
    keys = [str(k) for k in path if k != "layers"]
    keys[-1] = _RENAME.get(keys[-1], keys[-1])
    return ".".join(keys)


def load_torch_state_dict(model, state_dict):
    """A copy of ``model`` with every float array taken from ``state_dict`` (torch tensors or arrays).

    Names map as :func:`torch_name` says; shapes must match exactly.  A key
    the model lacks (other than ``num_batches_tracked``) or a missing key
    raises, naming it.
    """
    used = set()

    def take(path, leaf):
        if not isnumeric(leaf):
            return leaf
        name = torch_name(path)
        if name not in state_dict:
            raise KeyError(f"load_torch_state_dict: the model's {path} expects torch key {name!r}, "
                           "which the state dict lacks")
        value = _numpy(state_dict[name])
        if value.shape != leaf.shape:
            raise ValueError(f"load_torch_state_dict: {name} has shape {value.shape} in torch but "
                             f"{leaf.shape} at {path}")
        used.add(name)
        return value.astype(leaf.dtype)

    new = fmap_with_path(take, model, exclude=lambda x: isnumeric(x) or not _has_children(x))
    extra = [k for k in state_dict if k not in used and not k.endswith("num_batches_tracked")]
    if extra:
        raise KeyError(f"load_torch_state_dict: torch keys with no place in the model: {extra[:5]}")
    return new


def _has_children(x):
    from traversal import children

    return bool(children(x))


def _numpy(value):
    detach = getattr(value, "detach", None)
    return np.array(detach().cpu().numpy() if detach else value)
