"""load_torch_state_dict and save_torch_state_dict: the same weights in both frameworks, either way."""

import numpy as np

from traversal import fmap, fmap_with_path, isnumeric

_RENAME = {"gamma": "weight", "beta": "bias"}


def torch_name(path):
    """The torch state-dict key for one of our key paths (``Chain.layers[i]`` is torch's ``i``).

    >>> from traversal import KeyPath
    >>> torch_name(KeyPath("layer1", 0, "downsample", "layers", 1, "gamma"))
    'layer1.0.downsample.1.weight'
    """
    keys = [str(k) for k in path if k != "layers"]
    if not keys:
        raise ValueError(f"torch_name: the key path {path} has no torch name (torch drops 'layers' keys)")
    keys[-1] = _RENAME.get(keys[-1], keys[-1])
    return ".".join(keys)


def load_torch_state_dict(model, state_dict):
    """A copy of ``model`` with every float array taken from ``state_dict`` (torch tensors or arrays).

    Names map as :func:`torch_name` says; shapes must match exactly.  A key
    the model lacks (other than ``num_batches_tracked``) or a missing key
    raises, naming it.  A tie (one array at several positions) takes every
    one of its torch keys, as torch's ``state_dict()`` lists a tied parameter
    under each name; they must hold equal values, and the loaded model keeps the tie.

    >>> from layers import Chain, Dense, Embedding
    >>> emb = Embedding.init(4, 3)
    >>> tied = Chain([emb, Dense(emb.weight, np.zeros(4, np.float32))])
    >>> back = load_torch_state_dict(tied, save_torch_state_dict(tied))
    >>> back.layers[0].weight is back.layers[1].weight
    True
    """
    fn, values, used = "load_torch_state_dict", {}, set()
    for name, path, leaf in _arrays(model, fn):
        if name not in state_dict:
            raise KeyError(f"{fn}: the model's {path} expects torch key {name!r}, which the state dict lacks")
        value = _numpy(state_dict[name])
        if value.shape != leaf.shape:
            raise ValueError(f"{fn}: {name} has shape {value.shape} in torch but {leaf.shape} at {path}")
        first, kept = values.setdefault(id(leaf), (name, value))
        if first != name and not np.array_equal(value, kept):
            raise ValueError(f"{fn}: torch keys {first!r} and {name!r} hold different values, but the model ties "
                             f"them (one array at both places); make them equal, or untie the model")
        used.add(name)
    extra = [k for k in state_dict if k not in used and not k.endswith("num_batches_tracked")]
    if extra:
        raise KeyError(f"{fn}: torch keys with no place in the model: {extra[:5]}")

    def take(leaf):  # the identity cache gives every position of a tie the same new array
        return values[id(leaf)][1].astype(leaf.dtype) if isnumeric(leaf) else leaf

    return fmap(take, model, exclude=_position)


def save_torch_state_dict(model):
    """A torch state dict of ``model``: the reverse of :func:`load_torch_state_dict`.

    A dict ``{torch name: tensor}`` in traversal order (for torchvision-style models, the order
    of torch's own ``state_dict()``), every float array copied into a CPU tensor of its dtype,
    non-trainable buffers included.  Tied positions share one tensor, as in torch.  Every
    ``running_var`` gets its torch sibling ``num_batches_tracked``, 0: our BatchNorm has a fixed
    momentum, and torch reads the count only when ``momentum=None``.  Two arrays that would get one
    torch name (``gamma`` and ``weight`` side by side) raise.  Needs torch.

    >>> from layers import Dense
    >>> {k: tuple(v.shape) for k, v in save_torch_state_dict([Dense.init(3, 2)]).items()}
    {'0.weight': (2, 3), '0.bias': (2,)}
    """
    import torch

    state, tensors = {}, {}
    for name, _, leaf in _arrays(model, "save_torch_state_dict"):
        if id(leaf) not in tensors:  # _arrays keeps every leaf alive, so ids stay unique
            tensors[id(leaf)] = torch.from_numpy(np.array(leaf))
        state[name] = tensors[id(leaf)]
        if name.endswith("running_var"):
            state[name[: -len("running_var")] + "num_batches_tracked"] = torch.tensor(0)
    return state


def _arrays(model, fn):
    """``[(torch name, key path, array)]`` for every array position of ``model``, each position of a tie too."""
    if not _has_children(model):
        raise TypeError(f"{fn}: the model is a {type(model).__name__} with no children, so its arrays have no "
                        "torch names; pass a layer, a Chain, or a dict such as {'weight': array}")
    found = []

    def note(path, leaf):
        if isnumeric(leaf):
            found.append((path, leaf))
        return leaf

    fmap_with_path(note, model, exclude=_position, cache=False)
    found, seen = [(torch_name(path), path, leaf) for path, leaf in found], {}
    for name, path, _ in found:
        if name in seen:
            raise ValueError(f"{fn}: {seen[name]} and {path} both become torch key {name!r} (torch names drop "
                             "'layers' and write gamma/beta as weight/bias); rename one of them")
        seen[name] = path
    return found


def _position(x):
    return isnumeric(x) or not _has_children(x)


def _has_children(x):
    from traversal import children

    return bool(children(x))


def _numpy(value):
    detach = getattr(value, "detach", None)
    return np.array(detach().cpu().numpy() if detach else value)
