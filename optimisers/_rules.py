"""Optimisation rules, each a small dataclass: ``init(x)`` gives its state for one array and
``apply(state, x, dx)`` gives ``(new_state, step)``; the array becomes ``x - step``.

Each matches ``torch.optim`` (or the formula in its docstring) step for step.  Rules are written with
arithmetic and numpy functions that autodiff routes for traced values (``np.sqrt``, ``np.sign``,
``np.clip``), so one rule steps a plain model and, under a derivative, a traced one (MAML, unrolled
optimisation): a custom rule written the same way is differentiable too.

``dx`` is the direction to step against: the gradient for a real parameter, and its conjugate for a complex one
(``update`` conjugates it: ``grad`` gives ``dL/dRe - i dL/dIm``, docs/complex.md, and torch.optim steps along the
conjugate, its ``.grad``).  So the rules that are linear in ``dx`` step a complex parameter as torch does with no
code of their own; Adam's second moment and ClipGrad's clamp take the real and imaginary parts apart, as torch's
Adam does (``view_as_real``).  Every array in a rule's state has its parameter's shape (or is 0-d), and an array
hyperparameter broadcasts into the parameter's shape: ``update`` checks both (``_fit.py``).
"""

import numbers
from dataclasses import MISSING, dataclass, fields, replace

import numpy as np

import autodiff.numpy as anp
from autodiff.extend import Traced

__all__ = ["Descent", "Momentum", "Nesterov", "Adam", "AdamW", "WeightDecay", "SignDecay", "ClipGrad",
           "ClipNorm", "OptimiserChain"]


# The allowed range of each hyperparameter, as torch.optim checks it: (test, what is allowed).
_NONNEGATIVE = (lambda v: v >= 0, ">= 0")
_UNIT = (lambda v: 0 <= v < 1, "in [0, 1)")


def _check_hyperparameter(rule, name, value, limit):
    """Refuse a plain number outside ``limit`` (NaN too); a traced or array value is left alone (MAML)."""
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"optimisers.{type(rule).__name__}: {name}={value!r} is not a number; {name} must be "
                        f"a number {limit[1]}; pass e.g. {_example(rule, name)}")
    if type(value) is Traced or not isinstance(value, numbers.Real):
        return
    allowed, text = limit
    if not allowed(value):
        raise ValueError(f"optimisers.{type(rule).__name__}: {name}={value!r} is invalid; {name} must be "
                         f"{text}; pass e.g. {_example(rule, name)}")


def _example(rule, name):
    default = next(f.default for f in fields(rule) if f.name == name)
    return f"{type(rule).__name__}({name}={default!r})" if default is not MISSING else f"a {name} that fits"


def _componentwise(f, *zs):
    """``f(*zs)``; for complex ``zs``, ``f`` of their real parts plus ``1j`` times ``f`` of their imaginary parts.

    A rule that is not linear in the gradient (Adam's second moment, a clamp) treats a complex parameter as the
    pair of real arrays it is, as torch.optim does (``torch.view_as_real``).
    """
    if not any(getattr(z, "dtype", None) is not None and z.dtype.kind == "c" for z in zs):
        return f(*zs)
    return f(*(np.real(z) for z in zs)) + 1j * f(*(np.imag(z) for z in zs))


def is_array(v):
    """Whether ``v`` is an array (plain or traced), as opposed to a number."""
    return isinstance(v, np.ndarray) or type(v) is Traced


def is_rule(x):
    """Whether ``x`` is a rule instance: a ``Rule``, or an object with ``init`` and ``apply`` methods."""
    if isinstance(x, type):
        return False
    return isinstance(x, Rule) or (callable(getattr(x, "init", None)) and callable(getattr(x, "apply", None)))


def check_rule(x, where, example):
    """Refuse a non-rule (a class, ``None``, a string, a function) with a TypeError naming it and the fix."""
    if is_rule(x):
        return
    if isinstance(x, type):
        raise TypeError(f"{where}: got the class {x.__name__}, not a rule; pass an instance, "
                        f"e.g. {example.replace('Adam()', x.__name__ + '()')}")
    raise TypeError(f"{where}: got {x!r:.60} (of type {type(x).__name__}), which is not an optimiser rule; pass a rule "
                    f"instance such as Adam() or Descent(0.1), e.g. {example}")


class Rule:
    """Shared behaviour: ``adjust`` replaces hyperparameters that exist on the rule, and every rule checks its
    hyperparameters when made (``adjust`` makes a new rule, so it checks too).

    ``limits`` maps a field to its allowed range; a plain number outside it raises ValueError naming the rule,
    the field, the value and the fix.  A traced value (a hyperparameter under ``autodiff.grad``) is not checked.
    """

    is_global = False
    limits = {}

    def __post_init__(self):
        for name, limit in self.limits.items():
            _check_hyperparameter(self, name, getattr(self, name), limit)
        # the array-valued hyperparameters: update checks each against every parameter it steps (_fit.py), so
        # they are found once, here, rather than at every step
        arrays = tuple(f.name for f in fields(self) if is_array(getattr(self, f.name)))
        object.__setattr__(self, "_array_fields", arrays)

    def init(self, x):
        """The per-array state: none, unless a rule keeps some."""
        return None

    def hyperparameters(self):
        """The names ``adjust`` can change."""
        return {f.name for f in fields(self)}

    def adjust(self, **hyper):
        names = self.hyperparameters()
        return replace(self, **{k: v for k, v in hyper.items() if k in names})


@dataclass(frozen=True)
class Descent(Rule):
    """``step = lr * dx`` (torch.optim.SGD). ``lr >= 0`` (0 makes no step)."""

    lr: float = 0.1
    limits = {"lr": _NONNEGATIVE}

    def apply(self, state, x, dx):
        return None, dx * self.lr


@dataclass(frozen=True)
class Momentum(Rule):
    """``v = rho v + dx``, ``step = lr v`` (torch.optim.SGD with momentum). ``lr >= 0``, ``rho >= 0``."""

    lr: float = 0.01
    rho: float = 0.9
    limits = {"lr": _NONNEGATIVE, "rho": _NONNEGATIVE}

    def init(self, x):
        return np.zeros_like(x)

    def apply(self, v, x, dx):
        v = self.rho * v + dx
        return v, self.lr * v


@dataclass(frozen=True)
class Nesterov(Momentum):
    """``v = rho v + dx``, ``step = lr (dx + rho v)`` (torch.optim.SGD with nesterov=True)."""

    def apply(self, v, x, dx):
        v = self.rho * v + dx
        return v, self.lr * (dx + self.rho * v)


@dataclass(frozen=True)
class Adam(Rule):
    """Adam with bias correction (torch.optim.Adam). ``lr >= 0``, ``beta1`` and ``beta2`` in ``[0, 1)``,
    ``eps >= 0`` (0 is allowed, as in torch).  A complex parameter's second moment and step are taken for its real
    and imaginary parts apart (``v`` holds ``Re(dx)**2 + 1j * Im(dx)**2``), as torch's Adam views it as real."""

    lr: float = 0.001
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    limits = {"lr": _NONNEGATIVE, "beta1": _UNIT, "beta2": _UNIT, "eps": _NONNEGATIVE}

    def init(self, x):
        return np.zeros_like(x), np.zeros_like(x), 0

    def apply(self, state, x, dx):
        m, v, t = state
        t += 1
        m = self.beta1 * m + (1 - self.beta1) * dx
        v = self.beta2 * v + _componentwise(lambda g: (1 - self.beta2) * g * g, dx)
        m_hat = m / (1 - self.beta1 ** t)
        v_hat = v / (1 - self.beta2 ** t)
        return (m, v, t), _componentwise(lambda m, v: self.lr * m / (np.sqrt(v) + self.eps), m_hat, v_hat)


@dataclass(frozen=True)
class AdamW(Rule):
    """Adam plus decoupled weight decay ``lr * weight_decay * x`` (torch.optim.AdamW). Limits as Adam's,
    and ``weight_decay >= 0``."""

    lr: float = 0.001
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.01
    limits = {**Adam.limits, "weight_decay": _NONNEGATIVE}

    def init(self, x):
        return Adam(self.lr, self.beta1, self.beta2, self.eps).init(x)

    def apply(self, state, x, dx):
        state, step = Adam(self.lr, self.beta1, self.beta2, self.eps).apply(state, x, dx)
        return state, step + self.lr * self.weight_decay * x


@dataclass(frozen=True)
class WeightDecay(Rule):
    """``dx + weight_decay * x`` (the weight_decay of torch.optim.SGD, in a chain before Descent).
    ``weight_decay >= 0``."""

    weight_decay: float = 5e-4
    limits = {"weight_decay": _NONNEGATIVE}

    def apply(self, state, x, dx):
        return None, dx + self.weight_decay * x


@dataclass(frozen=True)
class SignDecay(Rule):
    """``dx + lam * sign(x)``: the L1 penalty's subgradient (Optimisers.jl's SignDecay). ``lam >= 0``."""

    lam: float = 1e-3
    limits = {"lam": _NONNEGATIVE}

    def apply(self, state, x, dx):
        return None, dx + self.lam * np.sign(x)


@dataclass(frozen=True)
class ClipGrad(Rule):
    """Clamp each gradient entry to ``[-delta, delta]`` (torch.nn.utils.clip_grad_value_).

    ``delta >= 0``: 0 zeroes the gradient (a well-defined clamp); a negative delta would flip its sign.  A complex
    gradient's real and imaginary parts are clamped apart (torch's clamp refuses complex tensors; this is its clamp
    of ``view_as_real``, the view its Adam steps)."""

    delta: float = 10.0
    limits = {"delta": _NONNEGATIVE}

    def apply(self, state, x, dx):
        return None, _componentwise(lambda g: np.clip(g, -self.delta, self.delta), dx)


@dataclass(frozen=True)
class ClipNorm(Rule):
    """Rescale all gradients together when their global 2-norm exceeds ``omega``
    (torch.nn.utils.clip_grad_norm_: factor ``omega / (norm + 1e-6)``, at most 1).
    The norm is ``sqrt(total(sumsq of dx))``, so a tied array counts once.

    ``omega >= 0``: 0 zeroes the gradients, as torch's formula does for ``max_norm=0``; a negative omega would
    reverse them.  A NaN anywhere makes every gradient NaN, and an infinite entry zeroes the finite ones, as in
    torch (a complex entry counts ``|dx|**2``)."""

    omega: float = 10.0
    is_global = True
    limits = {"omega": _NONNEGATIVE}

    def factor(self, norm):
        if type(norm) is Traced:  # under grad or vmap: no Python branch, which a batched norm cannot take
            return anp.minimum(1.0, self.omega / (norm + 1e-6))
        factor = self.omega / (norm + 1e-6)
        return 1.0 if factor >= 1.0 else factor  # a NaN norm gives a NaN factor, as in torch; min(1.0, nan) is 1.0


@dataclass(frozen=True)
class OptimiserChain(Rule):
    """Apply ``rules`` in order, each to the step the previous one produced.

    A chain inside a chain is flattened into it (as Optimisers.jl nests them), so it steps as the flat chain:

    >>> OptimiserChain(OptimiserChain(WeightDecay(), ClipGrad()), Descent()).rules
    (WeightDecay(weight_decay=0.0005), ClipGrad(delta=10.0), Descent(lr=0.1))
    """

    rules: tuple = ()

    def __init__(self, *rules):
        for rule in rules:
            check_rule(rule, "optimisers.OptimiserChain", "OptimiserChain(ClipNorm(1.0), Adam())")
        flat = (r for rule in rules for r in (rule.rules if isinstance(rule, OptimiserChain) else (rule,)))
        object.__setattr__(self, "rules", tuple(flat))

    def init(self, x):
        return tuple(rule.init(x) for rule in self.rules)

    def hyperparameters(self):
        return set().union(*(rule.hyperparameters() for rule in self.rules))

    def adjust(self, **hyper):
        return OptimiserChain(*(rule.adjust(**hyper) for rule in self.rules))
