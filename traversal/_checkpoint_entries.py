"""What a checkpoint records at each leaf position of a tree, and the walk that finds the positions.

Every position gets an *entry*, a small JSON-able dict: ``array`` (stored as a
member), ``tie`` (the same array as an earlier position, stored once),
``value`` (plain data: bool, int, float, complex, str, None, written into the
metadata), ``scalar`` (a numpy scalar, stored as a 0-d member) or ``object``
(anything else, such as a function: not written, only its kind recorded and
checked on load).  The checkpoint walk opens dataclasses registered as leaves
(the optimiser's ``Leaf``) too: walks and ``grad`` must not look inside them,
but a checkpoint must keep what they hold.
"""

import copy
import dataclasses

import numpy as np

from autodiff.extend import Traced

from ._functor import children, rebuild
from ._walks import Done, Expand, execute

__all__ = ["CheckpointError", "CheckpointWalk", "entries", "describe", "encode_value", "decode_value", "check_entry"]


class CheckpointError(ValueError):
    """A checkpoint cannot be written, read or fitted to the model it is loaded into.

    >>> import numpy as np
    >>> try:
    ...     entries({"a.b": np.ones(1), "a": {"b": np.ones(1)}})
    ... except CheckpointError as e:
    ...     print(e)
    checkpoint: the key paths KeyPath('a.b') and KeyPath('a', 'b') are both written 'a.b'; rename a dict key
    so that each position has its own name
    """


def open_children(x):
    """``x``'s children, or a leaf dataclass's fields (the optimiser ``Leaf``); ``{}`` for a true leaf.

    >>> from optimisers import Leaf
    >>> open_children(Leaf(rule=None, state=3))
    {'rule': None, 'state': 3, 'frozen': False}
    """
    kids = children(x)
    if kids or not dataclasses.is_dataclass(x) or isinstance(x, type):
        return kids
    return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}


def _rebuild_opened(x, kids, results):
    if children(x):
        return rebuild(x, results)
    new = copy.copy(x)  # a dataclass registered as a leaf: same type, fields replaced
    for name, value in zip(kids, results):
        object.__setattr__(new, name, value)
    return new


class CheckpointWalk:
    """Walk into every child (leaf dataclasses included); ``leaf_fn(path, x)`` at leaves.

    With ``build=True`` nodes are rebuilt from their children's results, otherwise nothing is built.

    >>> from traversal import execute
    >>> execute(CheckpointWalk(lambda path, x: str(path), build=True), {"a": [1, 2]})
    {'a': ['a[0]', 'a[1]']}
    """

    def __init__(self, leaf_fn, build):
        self.leaf_fn, self.build = leaf_fn, build

    def visit(self, x, ys, path):
        kids = open_children(x)
        if not kids:
            return Done(self.leaf_fn(path, x))
        finish = (lambda results: _rebuild_opened(x, kids, results)) if self.build else _nothing
        return Expand(list(kids), list(kids.values()), [()] * len(kids), finish)


def _nothing(results):
    return None


_PLAIN = {bool: "bool", int: "int", float: "float", complex: "complex", str: "str", type(None): "none"}


def encode_value(x):
    """The JSON form of a plain value, tagged with its type so that it comes back exactly.

    >>> encode_value(0.1)
    {'kind': 'value', 'type': 'float', 'value': 0.1}
    >>> encode_value(2 + 1j)["value"], decode_value(encode_value(2 + 1j))
    ([2.0, 1.0], (2+1j))
    """
    value = [x.real, x.imag] if type(x) is complex else x
    return {"kind": "value", "type": _PLAIN[type(x)], "value": value}


_DECODE = {"bool": bool, "int": int, "float": float, "str": str, "none": lambda v: None,
           "complex": lambda v: complex(*v)}
_JSON = {"bool": bool, "int": int, "float": float, "str": str, "none": type(None), "complex": list}  # as written


def decode_value(entry):
    """The plain value an ``encode_value`` entry holds."""
    return _DECODE[entry["type"]](entry["value"])


def _check_value(entry):
    """Refuse a value whose JSON type is not the one ``encode_value`` writes for its tag (an "int" 1.5 would
    load as 1; a "complex" needs two floats)."""
    value, written = entry["value"], _JSON[entry["type"]]
    if type(value) is not written:
        raise TypeError(f"its {entry['type']} value is the JSON {type(value).__name__} {value!r:.60}")
    if written is list and (len(value) != 2 or any(type(v) is not float for v in value)):
        raise TypeError(f"its complex value {value!r:.60} is not two floats")


def _object_type(x):
    """What an opaque leaf is, to check on load: a function by its name, anything else by its type."""
    name = getattr(x, "__qualname__", None) or getattr(x, "__name__", None)
    if callable(x) and isinstance(name, str):
        return f"{getattr(x, '__module__', None) or type(x).__name__}.{name}"
    return f"{type(x).__module__}.{type(x).__qualname__} instance"


_SUBCLASS_FIX = {  # what to save instead of an ndarray subclass, whose extra state a plain array would drop
    np.ma.MaskedArray: "save its data and its mask as two leaves, np.ma.getdata(x) and np.ma.getmaskarray(x), "
                       "and rebuild it with np.ma.array(data, mask=mask) after load",
    np.matrix: "save np.asarray(x) and call np.asmatrix on it after load (or keep the plain array)",
}


def _subclass_fix(x, who):
    if who == "load":
        return "pass a like that holds plain arrays where the model was saved with them (np.asarray(x))"
    kind = next((cls for cls in _SUBCLASS_FIX if isinstance(x, cls)), None)
    return _SUBCLASS_FIX.get(kind, "save np.asarray(x), a plain array, and whatever else the subclass holds as "
                                   "leaves of their own")


def _entry(path, x, first, who):
    """The entry for leaf ``x`` at ``path``; ``first`` maps id(array) to the path string that stored it."""
    if isinstance(x, np.ndarray):
        if type(x) is not np.ndarray:
            raise CheckpointError(f"{who}: the array at {path} is a {type(x).__module__}.{type(x).__qualname__}, "
                                  "a subclass of ndarray, which a checkpoint would store and load as a plain "
                                  f"ndarray (losing a mask, a matrix's type); {_subclass_fix(x, who)}")
        if x.dtype.hasobject:
            raise CheckpointError(f"{who}: the array at {path} has dtype object, which only pickle can store "
                                  "(and pickle can run code on load); convert it to a numeric array")
        kind = {"kind": "array"} if id(x) not in first else {"kind": "tie", "to": first[id(x)]}
        return {**kind, "dtype": str(x.dtype), "shape": list(x.shape)}
    if type(x) in _PLAIN:
        return encode_value(x)
    if isinstance(x, np.generic):
        return {"kind": "scalar", "dtype": str(x.dtype), "shape": []}
    if isinstance(x, Traced):
        raise CheckpointError(f"{who}: the leaf at {path} is a traced value (inside grad); save the model "
                              "outside the differentiated function")
    return {"kind": "object", "type": _object_type(x)}


def entries(tree, who="save"):
    """``{path string: (KeyPath, entry, leaf)}`` for every leaf position of ``tree``, in traversal order;
    ``who`` (``save`` or ``load``) names the caller in errors.

    Every position is visited (no identity cache), so each occurrence of a tied array is seen;
    the first stores it, the later ones are ties to it.

    >>> w = np.ones(2)
    >>> [(p, e["kind"]) for p, (_, e, _) in entries({"a": w, "b": [w, np.sin]}).items()]
    [('a', 'array'), ('b[0]', 'tie'), ('b[1]', 'object')]
    """
    out, first = {}, {}

    def record(path, x):
        name = str(path)
        if name in out:
            raise CheckpointError(f"checkpoint: the key paths {out[name][0]!r} and {path!r} are both written "
                                  f"{name!r}; rename a dict key so that each position has its own name")
        out[name] = (path, _entry(path, x, first, who), x)
        if isinstance(x, np.ndarray):
            first.setdefault(id(x), name)

    execute(CheckpointWalk(record, build=False), tree)
    return out


_DESCRIBE = {
    "array": lambda e: f"a {e['dtype']} array of shape {tuple(e['shape'])}",
    "tie": lambda e: f"the same {e['dtype']} array of shape {tuple(e['shape'])} as {e['to']} (a tie)",
    "value": lambda e: f"the {e['type']} {decode_value(e)!r}",
    "scalar": lambda e: f"a numpy {e['dtype']} scalar",
    "object": lambda e: f"an opaque {e['type']}",
}


def describe(entry):
    """A short description of an entry, for error messages.

    >>> describe({"kind": "array", "dtype": "float32", "shape": [3, 2]})
    'a float32 array of shape (3, 2)'
    """
    return _DESCRIBE[entry["kind"]](entry)


_FIELDS = {"array": {"dtype": str, "shape": list}, "tie": {"to": str, "dtype": str, "shape": list},
           "value": {"type": str}, "scalar": {"dtype": str, "shape": list}, "object": {"type": str}}


def check_entry(entry):
    """Raise KeyError, TypeError or ValueError unless ``entry`` is an entry that ``save`` could write.

    >>> check_entry({"kind": "array", "dtype": "float32", "shape": [3]})
    >>> check_entry({"kind": "tie", "dtype": "float32", "shape": [3]})
    Traceback (most recent call last):
    KeyError: 'to'
    """
    for field, kind in _FIELDS[entry["kind"]].items():
        if not isinstance(entry[field], kind):
            raise TypeError(f"its {field!r} is a {type(entry[field]).__name__}, not a {kind.__name__}")
    shape = entry.get("shape", [])
    if not all(type(n) is int and n >= 0 for n in shape):
        raise TypeError(f"its shape {shape!r:.100} is not a list of ints >= 0")
    if entry["kind"] == "scalar" and shape:
        raise ValueError(f"a numpy scalar has shape [], not {shape!r:.100}")
    if entry["kind"] == "value":
        _check_value(entry)
