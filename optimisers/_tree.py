"""setup and update: optimiser state as a tree mirroring the model, walked with the model and its gradient.

A tied array has one state leaf (the identity cache keyed on the model gives
both positions the same ``Leaf``), its update is applied once, and the new
model keeps the tie.  A ``None`` gradient means no step and no state advance.
"""

import math
from dataclasses import dataclass, replace

import numpy as np

import autodiff
import autodiff.numpy as anp
from autodiff import Tangent
from autodiff._hooks import hooks, slot
from autodiff.extend import Traced, is_inexact
from traversal import (
    NOPRUNE,
    CachedWalk,
    DefaultWalk,
    Done,
    ExcludeWalk,
    Expand,
    IdentityCache,
    KeyPath,
    children,
    execute,
    fleaves,
    isnumeric,
    rebuild,
    register_leaf,
    split,
    total,
    trainable,
)

from ._fit import misfit
from ._rules import OptimiserChain, check_rule


@register_leaf
@dataclass
class Leaf:
    """The optimiser state of one array: its rule, the rule's state, and whether it is frozen."""

    rule: object
    state: object
    frozen: bool = False

    # what autodiff.jit says when a step passes a state tree: a Leaf is a leaf, whose rule state changes every step
    __jit_hint__ = ("it is optimiser state: jit the gradient (autodiff.jit(autodiff.grad(loss))) and call "
                    "optimisers.update on its result outside the jitted function")


class _StateWalk:
    """Like TrainableWalk, but non-trainable children become ``None`` in the state tree."""

    def visit(self, x, ys, path):
        kids = children(x)
        allowed = trainable(x)
        keys, xs, kid_ys = split(x, ys, path, [k for k in kids if k in allowed])
        return Expand(keys, xs, kid_ys, lambda results: _state_node(x, kids, keys, results))


def _state_node(x, kids, keys, results):
    if not kids:
        return None
    new = dict.fromkeys(kids)
    new.update(zip(keys, results))
    return rebuild(x, new)


def setup(rule, model):
    """The state tree for optimising ``model`` with ``rule``: a ``Leaf`` per trainable array, tied arrays sharing one.

    >>> from optimisers import Adam
    >>> w = np.ones(2)
    >>> state = setup(Adam(), {"a": w, "b": w, "n": 3})
    >>> state["a"] is state["b"], state["n"]
    (True, None)
    """
    check_rule(rule, "optimisers.setup", "setup(Adam(), model)")
    make = ExcludeWalk(_StateWalk(), lambda path, x: Leaf(rule, rule.init(x)) if isnumeric(x) else None,
                       lambda x: isnumeric(x) or not children(x))
    return execute(CachedWalk(make, IdentityCache(), NOPRUNE), model)


def update(state, model, grads):
    """One optimiser step: ``(new_state, new_model)``; neither input is modified.

    ``grads`` mirrors ``model`` (``None`` = no gradient there), as ``autodiff.grad``
    gives it; a tree of another structure is refused, naming the key path, and so is a gradient,
    a state array or an array hyperparameter that does not fit its parameter's shape
    (``optimisers/_fit.py``).  A complex parameter steps as torch.optim steps it, along the
    conjugate of its gradient (``_rules.py``).  A tied array
    is stepped once, with the sum of the entries at its trainable positions
    (``grad`` puts the whole gradient at the first, design.md section 3).

    The step is differentiable: the gradients, the state or the model may be
    traced (an inner loop under ``autodiff.grad``, as in MAML), and the new
    state and model are then traced too.  Each value decides for itself, so a
    plain step computes what it computed before and pays one type check per
    array (on large plain arrays the common rules run as one-pass kernels with
    the same results, ``optimisers/_fused.py``).

    >>> from optimisers import Descent
    >>> model = {"w": np.array([1.0, 2.0])}
    >>> state = setup(Descent(0.5), model)
    >>> state, model = update(state, model, {"w": np.array([2.0, 2.0])})
    >>> model["w"]
    array([0., 1.])
    """
    return hooks.updater(state, model, grads)


def _update(state, model, grads):
    """The reference step: collect the steps with their key paths, run the rules, rebuild both trees with
    traversal's walks."""
    steps = _collect(state, model, grads)
    _run_rules(steps)
    return _rebuild(state, model, steps)


class _Step:
    __slots__ = ("x", "leaf", "dx", "states", "path")

    def __init__(self, x, leaf, dx, path):
        self.x, self.leaf, self.dx, self.path = x, leaf, dx, path  # path: None in the accelerated walk
        self.states = list(leaf.state) if isinstance(leaf.rule, OptimiserChain) else [leaf.state]


def _collect(state, model, grads):
    """The (array, leaf, gradient) steps, each tied array once with its entries summed, in traversal order.

    Every trainable position is visited (no identity cache), so a hand-made gradient with entries at
    several positions of a tie adds them, as ``total(f, model, grads)`` does.  A cycle in the model, mirrored
    by one in the gradient, is refused by traversal's executor.
    """
    steps = {}
    execute(_StepWalk(steps), model, state, grads, name="optimisers.update")
    return {k: step for k, step in steps.items() if step is not None}


class _StepWalk:
    """Walk the model's trainable children with the state and the gradient (``ys``), entering each parameter
    with a gradient into ``steps``; below a ``None`` or zero gradient there is nothing to do."""

    def __init__(self, steps):
        self.steps = steps

    def visit(self, x, ys, path):
        leaf, dx = ys
        if type(x) is Leaf:
            raise _swapped()
        if dx is None or isinstance(dx, autodiff.ZeroTangent):
            return Done(None)
        if isnumeric(x):
            _add_step(self.steps, path, x, leaf, dx)
            return Done(None)
        kids, allowed = children(x), trainable(x)
        keys = [k for k in kids if k in allowed]
        kid_ys = zip(_children_at("state", leaf, keys, path, x), _children_at("grads", dx, keys, path, x))
        return Expand(keys, [kids[k] for k in keys], list(kid_ys), _nothing)


def _nothing(results):
    return None


def _add_step(steps, path, x, leaf, dx):
    if not (leaf is None or type(leaf) is Leaf):
        if isnumeric(leaf):
            raise _swapped()
        raise TypeError(f"optimisers.update: the state has a {type(leaf).__name__} at {_where(path)}, where "
                        "the model has a parameter; build the state with setup(rule, model)")
    problem = None if leaf is None or leaf.frozen else misfit(leaf, x)
    if problem:
        raise ValueError(f"optimisers.update: the state at {_where(path)} does not fit its parameter: {problem}")
    add_step(steps, x, leaf, _checked(path, x, dx), path)


def add_step(steps, x, leaf, dx, path=None):
    """Enter the checked gradient ``dx`` of the array ``x`` (``None`` for a step not taken: no state, frozen).

    A complex parameter steps along the conjugate of its gradient: ``grad`` gives ``dL/dRe - i dL/dIm``
    (docs/complex.md), whose conjugate is the direction of steepest ascent, the ``.grad`` torch.optim steps along.
    """
    if dx.dtype.kind == "c":
        dx = np.conj(dx)
    if id(x) in steps:  # another position of a tie: its entries add up; the first position's Leaf rules
        if steps[id(x)] is not None:
            steps[id(x)].dx = steps[id(x)].dx + dx
    else:
        steps[id(x)] = _Step(x, leaf, dx, path) if leaf is not None and not leaf.frozen else None


def _checked(path, x, dx):
    if not isinstance(dx, (np.ndarray, np.generic, float, int, Traced)):
        raise TypeError(f"optimisers.update: the gradient at {_where(path)} is a {type(dx).__name__}, but the "
                        f"model has an array of shape {x.shape} there; pass the structural gradient of the model")
    if np.shape(dx) != x.shape:
        raise ValueError(f"optimisers.update: the gradient at {_where(path)} has shape {np.shape(dx)}, but the "
                         f"parameter has shape {x.shape}; pass a gradient of the parameter's shape")
    return _as_array(dx, x.dtype)  # a traced gradient (MAML, unrolled optimisation) is cast, never converted


def _as_array(v, dtype):
    """``v`` as an array of ``dtype``: numpy gives a scalar for arithmetic on 0-d arrays, which is no
    parameter (``isnumeric``), so a 0-d parameter and its state are made 0-d arrays again.  A plain ``v`` is
    not copied when it already is one; a traced ``v`` is cast when its dtype differs or it is 0-d (it may be
    held as a scalar).  Only its shape and dtype are read, never its data: under ``autodiff.jit`` the cast is
    an equation of the program (MAML's inner steps compile)."""
    if type(v) is not Traced:
        return np.asarray(v, dtype)
    return v if v.dtype == dtype and v.shape != () else anp.astype(v, dtype)


def _state_as_arrays(state):
    """A rule's new state, its inexact numpy scalars (from a 0-d parameter) made 0-d arrays again (a traced 0-d
    value cast, as :func:`_as_array` does); tuples walked."""
    if type(state) is tuple:
        return tuple(_state_as_arrays(s) for s in state)
    if type(state) is Traced:
        return _as_array(state, state.dtype) if is_inexact(state.dtype) else state
    return np.asarray(state) if isinstance(state, np.generic) and is_inexact(state.dtype) else state


def _children_at(which, node, keys, path, x):
    """``node``'s children at ``keys`` (all ``None`` when ``node`` is); ``node`` must mirror ``x``."""
    if node is None or not keys:
        return [None] * len(keys)
    kids = {} if type(node) is Leaf else children(node)
    if kids.keys() != children(x).keys() or (type(node) is Tangent and node.primal_type is not type(x)):
        raise _mismatch(which, node, kids, path, x)
    return [kids[k] for k in keys]


def _mismatch(which, node, kids, path, x):
    fix = ("pass the structural gradient of the model, from autodiff.grad (None where there is no gradient)"
           if which == "grads" else "build the state with setup(rule, model)")
    return ValueError(f"optimisers.update: {which} does not mirror the model at {_where(path)}: the model has "
                      f"{_describe(x, children(x))} there, {which} {_describe(node, kids)}; {fix}")


def _describe(node, kids):
    name = f"Tangent[{node.primal_type.__name__}]" if type(node) is Tangent else type(node).__name__
    return f"a {name} with children {list(kids)}" if kids else f"a {name}"


def _swapped():
    return TypeError("optimisers.update: the arguments look swapped: the model holds optimiser Leaf objects "
                     "(or the state holds parameters). Call update(state, model, grads), with state from "
                     "setup(rule, model)")


def _where(path):
    return str(KeyPath(*path))


def _run_rules(steps):
    """Apply each rule stage to every step; a global rule (ClipNorm) sees all gradients at its stage."""
    if not steps:
        return
    chains = {id(s): _rules(s.leaf.rule) for s in steps.values()}
    depth = max(len(c) for c in chains.values())
    for k in range(depth):
        stage = [(s, chains[id(s)][k]) for s in steps.values() if k < len(chains[id(s)])]
        if any(rule.is_global for _, rule in stage):
            _global_stage(stage)
            continue
        for s, rule in stage:
            state, dx = rule.apply(s.states[k], s.x, s.dx)
            s.states[k], s.dx = _state_as_arrays(state), _step_of(rule, s, dx)


class StepShapeError(ValueError):
    """A rule's ``apply`` returned a step of another shape than its parameter's (a custom rule's mistake)."""


def _step_of(rule, s, dx):
    """``dx`` as an array of the parameter's dtype, refused unless of its shape: ``x - dx`` would broadcast."""
    dx = _as_array(dx, s.x.dtype)
    if dx.shape != s.x.shape:
        where = "a parameter" if s.path is None else f"the parameter at {_where(s.path)}"
        raise StepShapeError(f"optimisers.update: {type(rule).__name__}.apply returned a step of shape {dx.shape} "
                             f"for {where} of shape {s.x.shape}; a rule's step must have its parameter's shape "
                             "(check the rule's apply, and that its state and hyperparameters fit)")
    return dx


def _rules(rule):
    return rule.rules if isinstance(rule, OptimiserChain) else (rule,)


def _global_stage(stage):
    rules = {type(rule) for _, rule in stage}
    if len(rules) != 1 or len(stage) == 0:
        raise ValueError("optimisers.update: a global rule such as ClipNorm must sit at the same position "
                         "of the rule chain of every parameter")
    rule = stage[0][1]
    squares = total(autodiff.sumsq, [s.dx for s, _ in stage])
    norm = math.sqrt(squares) if type(squares) is not Traced else anp.sqrt(squares)  # traced: differentiable
    factor = rule.factor(norm)
    for s, _ in stage:
        s.dx = _as_array(s.dx * factor, s.dx.dtype)


def _rebuild(state, model, steps):
    """The new state and model: each stepped array and its ``Leaf`` replaced, every container rebuilt once."""
    exclude = lambda x: isnumeric(x) or not children(x)  # noqa: E731
    # every position of a stepped array gets the new one, a non-trainable position of a tie too: it stays tied
    new_model = execute(CachedWalk(ExcludeWalk(DefaultWalk(), lambda path, x: new_array(steps, x), exclude),
                                   IdentityCache(), NOPRUNE), model)
    from traversal import fmap

    new_state = fmap(lambda leaf, x: new_leaf(steps, leaf, x), state, model, exclude=_is_state_leaf)
    return new_state, new_model


slot("updater", _update, "optimisers.update over a model, its state and gradient (the accelerated twin: one "
     "explicit-stack walk)")


def new_array(steps, x):
    """``x`` after its step, or ``x`` itself when it took none."""
    s = steps.get(id(x))
    return x if s is None else _as_array(x - s.dx, x.dtype)


def new_leaf(steps, leaf, x):
    """The ``Leaf`` of the array ``x`` with its rule's new state, or ``leaf`` itself when ``x`` took no step."""
    s = steps.get(id(x))
    if s is None or not isinstance(leaf, Leaf):
        return leaf
    states = tuple(s.states) if isinstance(leaf.rule, OptimiserChain) else s.states[0]
    return replace(leaf, state=states)


def _map_leaves(f, state):
    from traversal import fmap

    return fmap(lambda leaf: f(leaf) if isinstance(leaf, Leaf) else leaf, state, exclude=_is_state_leaf)


def _is_state_leaf(x):
    return isinstance(x, Leaf) or not children(x)


def _state_leaves(state):
    """The ``Leaf`` objects of a state tree (or subtree)."""
    return [leaf for leaf in fleaves(state, exclude=_is_state_leaf) if isinstance(leaf, Leaf)]


def freeze(state, *paths):
    """Freeze the whole state tree, or the subtrees at ``paths``: their arrays stop changing.

    A path is a ``KeyPath``, one key, or a printed key path (``"layers[0].weight"``).  A tied array has one
    ``Leaf`` at all its positions, so freezing it at any position freezes it everywhere (the tie is kept).

    >>> from optimisers import Descent
    >>> from traversal import KeyPath
    >>> state = freeze(setup(Descent(), {"enc": [np.ones(1)], "dec": np.ones(1)}), KeyPath("enc"))
    >>> state["enc"][0].frozen, state["dec"].frozen
    (True, False)
    """
    return _at(state, paths, lambda leaf: replace(leaf, frozen=True))


def thaw(state, *paths):
    """Undo :func:`freeze` on the whole tree or the subtrees at ``paths`` (a tied array at all its positions)."""
    return _at(state, paths, lambda leaf: replace(leaf, frozen=False))


def adjust(state, *paths, **hyper):
    """Change hyperparameters (``lr=...``, ``weight_decay=...``) of every rule in the tree or at ``paths``.

    A name that no rule there has is refused (a typo would otherwise change nothing), and so is a value the rule
    does not allow (``lr=-1``).  A tied array is adjusted at all its positions, whichever one the path names.

    >>> from optimisers import Adam
    >>> adjust(setup(Adam(), {"w": np.ones(1)}), lr=0.5)["w"].rule.lr
    0.5
    """
    adjusted = {}  # id(rule) -> the adjusted rule, made (and so checked) before any leaf changes

    def check(sub, where):
        _check_hyperparameters(sub, where, hyper)
        for leaf in _state_leaves(sub):
            adjusted[id(leaf.rule)] = leaf.rule.adjust(**hyper)  # an invalid value raises its ValueError here

    return _at(state, paths, lambda leaf: replace(leaf, rule=adjusted[id(leaf.rule)]), check)


def _check_hyperparameters(state, where, hyper):
    rules = [leaf.rule for leaf in _state_leaves(state)]
    names = set().union(*(rule.hyperparameters() for rule in rules))
    unknown = [k for k in hyper if k not in names]
    if rules and unknown:
        raise ValueError(f"optimisers.adjust: no rule {where} has a field {unknown[0]!r}; the fields there "
                         f"are {sorted(names)}; pass one of those names, e.g. adjust(state, lr=0.01)")


def _at(state, paths, change, check=None):
    """``change(leaf)`` applied to every ``Leaf`` of the whole tree, or of the subtree at each path (a KeyPath, a
    key, or a printed key path such as ``"layers[0].weight"``); ``check(subtree, where)`` may refuse first.

    The chosen leaves are changed wherever they sit in the tree, so the one ``Leaf`` of a tied array stays
    one object at all its positions, whichever position the path names."""
    from traversal import getkeypath

    if not paths:
        subtrees = [(state, "in the state")]
    else:
        subtrees = [(getkeypath(state, p), f"at {p}") for p in (_as_keypath(state, path) for path in paths)]
    chosen = set()
    for sub, where in subtrees:
        if check is not None:
            check(sub, where)
        chosen.update(id(leaf) for leaf in _state_leaves(sub))
    return _map_leaves(lambda leaf: change(leaf) if id(leaf) in chosen else leaf, state)


def _as_keypath(state, path):
    """A KeyPath (or tuple of keys), one key, or a printed key path; a string that is itself a key of
    ``state`` means that key."""
    from traversal import haskeypath

    if isinstance(path, tuple):
        return KeyPath(*path)
    if isinstance(path, str) and not haskeypath(state, KeyPath(path)):
        return KeyPath.parse(path)
    return KeyPath(path)
