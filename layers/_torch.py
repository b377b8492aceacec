"""load_torch_state_dict and save_torch_state_dict: the same weights in both frameworks, either way."""

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


def save_torch_state_dict(model):
    """A torch state dict of ``model``: the reverse of :func:`load_torch_state_dict`.

    A dict ``{torch name: tensor}`` in traversal order (for torchvision-style models, the order
    of torch's own ``state_dict()``), every float array copied into a CPU tensor of its dtype,
    non-trainable buffers included.  Tied positions share one tensor, as in torch.  Every
    ``running_var`` gets its torch sibling ``num_batches_tracked``, 0: our BatchNorm has a fixed
    momentum, and torch reads the count only when ``momentum=None``.  Needs torch.

    >>> from layers import Dense
    >>> {k: tuple(v.shape) for k, v in save_torch_state_dict([Dense.init(3, 2)]).items()}
    {'0.weight': (2, 3), '0.bias': (2,)}
    """
    import torch

    state, tensors = {}, {}

    def put(path, leaf):
        if isnumeric(leaf):
            name = torch_name(path)
            if id(leaf) not in tensors:
                tensors[id(leaf)] = (leaf, torch.from_numpy(np.array(leaf)))  # keep leaf alive: ids stay unique
            state[name] = tensors[id(leaf)][1]
            if name.endswith("running_var"):
                state[name[: -len("running_var")] + "num_batches_tracked"] = torch.tensor(0)
        return leaf

    fmap_with_path(put, model, exclude=lambda x: isnumeric(x) or not _has_children(x), cache=False)
    return state


def _has_children(x):
    from traversal import children

    return bool(children(x))


def _numpy(value):
    detach = getattr(value, "detach", None)
    return np.array(detach().cpu().numpy() if detach else value)
