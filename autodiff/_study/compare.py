"""compare: one function's gradient (and Hessian-vector product) in autodiff, PyTorch, JAX and HIPS autograd,
side by side, with finite differences as the referee.

It converts arrays, not code.  ``f`` is either numpy-style, ``f(xp, *args)`` with ``xp`` each system's numpy
(see ``_compare_namespaces``: ``xp.nn.relu`` everywhere, torch's calls adapted to numpy's), or a dict with one
function of ``*args`` per system (``"autodiff"``, ``"torch"``, ``"jax"``, ``"autograd"``, optionally
``"numpy"``: autodiff's runs on plain arrays otherwise).  The arguments may be nested (dicts, tuples, lists,
dataclasses); each float or complex leaf is a variable, and every system's gradient comes back in the
arguments' structure.  Only installed systems run; a missing one is listed with how to install it (the
``[compare]`` extra installs JAX and autograd).  The pieces: ``_compare_arguments`` (structures),
``_compare_systems`` (the runners), ``_compare_fd`` (the referee), ``_compare_export`` (text, Markdown, LaTeX,
dict), ``_compare_semantics`` (a table over many cases).
"""

import numpy as np

from .compare_arguments import Arguments, check, direction_of
from .compare_export import format_value, to_dict, to_latex, to_markdown, to_text
from .compare_fd import referee, referee_jvp
from .compare_namespaces import namespace
from .compare_systems import INSTALL, load, run, run_jvp

SYSTEMS = ("torch", "jax", "autograd")
REFEREE = "finite differences"


class Result:
    """One system's answer: ``value``, ``grad``, ``hvp`` and ``jvp`` (``None`` unless asked for), each gradient
    one entry per argument in that argument's structure (``jvp`` is one number, the derivative of ``sum(f)``
    along the direction, by forward mode); for finite differences also ``left`` and ``right``, the one-sided
    derivatives (the gradient is NaN where they differ: no derivative there), and ``jvp_sides`` along the
    direction."""

    def __init__(self, arguments, value, grad, hvp=None, left=None, right=None):
        self.value = value
        self.flat_grad, self.flat_hvp, self.flat_left, self.flat_right = grad, hvp, left, right
        self.grad, self.hvp = arguments.structure(grad), arguments.structure(hvp)
        self.left, self.right = arguments.structure(left), arguments.structure(right)
        self.jvp, self.jvp_sides = None, None


def compare(f, *args, against=None, hvp=False, jvp=False, ties=True):
    """The gradient of ``f`` at ``args`` in autodiff and in each installed system of ``against`` (by default
    torch, JAX and autograd, or for a dict of functions the systems it has entries for), with finite
    differences as the referee; ``hvp=True`` (direction ones) or ``hvp=v`` (one direction per argument, in its
    structure, or a bare one for a single argument) adds ``H v``; ``jvp=True`` or ``jvp=v`` (the same way)
    adds ``J v`` by each system's *forward* mode, as the derivative of ``sum(f)`` along ``v`` (where reverse
    and forward mode part, as ``where`` does at a NaN, the two columns say so).  One numpy array at several
    positions of an argument (a tied weight) is one variable, as design.md section 3 says: every column gives
    the sum of its uses at its first position and ``None`` at the others, and a note says what each system
    does with a tie of its own; ``ties=False`` makes each position its own variable.  Returns a
    :class:`Comparison`, whose text is the table (``to_markdown()``, ``to_latex()`` and ``to_dict()`` export
    it).

    >>> import numpy as np
    >>> c = compare(lambda xp, x: xp.sum(xp.abs(x)), np.array([0.0, -2.0]), against=("torch",))
    >>> print(c)  # doctest: +NORMALIZE_WHITESPACE
    compare at x0 = [0.0, -2.0]
    system              value  gradient     vs FD
    autodiff            2.0    [0.0, -1.0]  = elsewhere; a convention at the kink
    torch               2.0    [0.0, -1.0]  = elsewhere; a convention at the kink
    finite differences  2.0    [nan, -1.0]  (referee)
    x0[0] = 0.0: no derivative here: left -1.0, right 1.0
    """
    against = _systems(f) if against is None else tuple(against)
    functions = _functions(f, against)
    arguments = Arguments(args, ties)
    check(arguments, hvp, "hvp")
    check(arguments, jvp, "jvp")
    direction, tangent = direction_of(hvp, arguments, "hvp"), direction_of(jvp, arguments, "jvp")
    results, missing = {}, {}
    with np.errstate(all="ignore"):  # kinks are what this is for: 1/0 and 0/0 are answers here, not accidents
        for name in ("autodiff", *against):
            module = load(name)
            if module is None:
                missing[name] = f"not installed: {INSTALL[name]}"
                continue
            try:
                results[name] = _run(name, module, _on_leaves(arguments, functions[name]), arguments, direction,
                                     tangent)
            except Exception as e:  # noqa: BLE001  (the system's own failure is its answer: said, not raised)
                missing[name] = f"raised {type(e).__name__}: {e}"
        g = _on_leaves(arguments, functions["numpy"])
        value, grad, left, right, hv, noise = referee(g, arguments.values, direction)
        results[REFEREE] = Result(arguments, value, grad, hv, left, right)
        if tangent is not None:
            jv, jv_left, jv_right, jv_noise = referee_jvp(g, arguments.values, tangent)
            results[REFEREE].jvp, results[REFEREE].jvp_sides = jv, (jv_left, jv_right)
            noise = (*noise, jv_noise)
    return Comparison(arguments, results, missing, noise)


def _run(name, module, g, arguments, direction, tangent):
    result = Result(arguments, *run(name, module, g, arguments.values, direction))
    if tangent is not None:
        result.jvp = run_jvp(name, module, g, arguments.values, tangent)
    return result


def _systems(f):
    return tuple(name for name in SYSTEMS if name in f) if isinstance(f, dict) else SYSTEMS


def _functions(f, against):
    """One function of ``*args`` per system, from a dict or from a numpy-style ``f(xp, *args)``."""
    unknown = [name for name in against if name not in SYSTEMS]
    if unknown:
        raise ValueError(f"compare: against={against!r} names {unknown}; the systems are {sorted(SYSTEMS)}")
    if isinstance(f, dict):
        lacking = [name for name in ("autodiff", *against) if name not in f]
        if lacking:
            raise ValueError(f"compare: the dict of functions has no entry for {lacking}; give one function of "
                             "*args per system, or one numpy-style f(xp, *args)")
        return {**f, "numpy": f.get("numpy", f["autodiff"])}
    return {name: _with_namespace(f, name) for name in ("autodiff", "numpy", *against)}


def _with_namespace(f, system):
    def run_in(*args):
        return f(namespace(system), *args)

    return run_in


def _on_leaves(arguments, fn):
    def g(*xs):
        return arguments.call(fn, xs)

    return g


class Comparison:
    """What :func:`compare` found: ``results[system]`` (a :class:`Result`), ``missing[system]`` (why it did not
    run), :meth:`verdict` per system, :meth:`notes` (kinks, conjugate conventions), and the table as text,
    Markdown (:meth:`to_markdown`), LaTeX (:meth:`to_latex`) or plain data (:meth:`to_dict`).

    >>> c = compare(lambda xp, x: xp.abs(x), 0.0, against=("torch",))
    >>> print(c.to_markdown())
    compare at x0 = 0.0
    <BLANKLINE>
    | system | value | gradient | vs FD |
    |---|---|---|---|
    | autodiff | 0.0 | 0.0 | a convention (no derivative here) |
    | torch | 0.0 | 0.0 | a convention (no derivative here) |
    | finite differences | 0.0 | nan | (referee) |
    <BLANKLINE>
    - x0 = 0.0: no derivative here: left -1.0, right 1.0
    >>> c.to_dict()["systems"]["finite differences"]["left"], c.verdict("torch")
    ({'x0': -1.0}, 'a convention (no derivative here)')
    """

    def __init__(self, arguments, results, missing, noise=(None, None)):
        self.arguments, self.results, self.missing = arguments, results, missing
        self.args = arguments.args
        self._noise = noise

    def __str__(self):
        return to_text(self)

    __repr__ = __str__

    def to_markdown(self):
        """The table as GitHub Markdown, notes as a list below it."""
        return to_markdown(self)

    def to_latex(self):
        """The table as a LaTeX ``tabular`` (no packages needed), notes as a list below it."""
        return to_latex(self)

    def to_dict(self):
        """Plain data: the point, and per system its value, gradient and ``H v`` by leaf name, and verdict."""
        return to_dict(self)

    def verdict(self, name):
        """``=`` when ``name`` agrees with finite differences (gradient, and ``H v`` if asked for), ``= up to
        conjugation`` for a complex gradient in the other convention, ``a convention`` where the referee finds
        no derivative (any value there is a choice), else what differs."""
        if name == REFEREE:
            return "(referee)"
        grad = self._states(self.results[name].flat_grad, "gradient")
        hv = set() if self.results[name].flat_hvp is None else self._states(self.results[name].flat_hvp, "Hv")
        jv = set() if self.results[name].jvp is None else self._jvp_states(self.results[name].jvp)
        differ = [what for what, states in (("gradient", grad), ("Hv", hv), ("Jv", jv)) if "differs" in states]
        if differ:
            return "differs: " + ", ".join(differ)
        states = grad | hv | jv
        if "kink" in states:
            return "a convention (no derivative here)" if "=" not in states else "= elsewhere; a convention at the kink"
        return "= up to conjugation" if "conj" in states else "="

    def kinks(self):
        """``[(leaf name, index, x, left, right)]`` where the referee found no derivative."""
        fd, out = self.results[REFEREE], []
        for name, x, kink, left, right in zip(self.arguments.names, self.arguments.values,
                                              self._no_derivative("gradient"), fd.flat_left, fd.flat_right):
            out += [(name, i, np.asarray(x)[i], left[i], right[i]) for i in np.ndindex(kink.shape) if kink[i]]
        return out

    def notes(self):
        """Lines under the table: each kink with its one-sided derivatives, where ``H v`` has no limit, and
        the complex conventions (which columns differ only by conjugation)."""
        lines = [f"{_entry(name, i)} = {format_value(x)}: no derivative here: left {format_value(left)}, right "
                 f"{format_value(right)}" for name, i, x, left, right in self.kinks()]
        if self.results[REFEREE].flat_hvp is not None:
            lines += [f"{_entry(name, i)}: H v has no limit here (the second differences do not settle)"
                      for name, mask in zip(self.arguments.names, self._no_derivative("Hv"))
                      for i in np.ndindex(mask.shape) if mask[i]]
        if self.jvp_kink() is not None:
            left, right = self.jvp_kink()
            lines.append(f"J v: no derivative along v here: left {format_value(left)}, right {format_value(right)}")
        return lines + self._ties() + self._conventions()

    def _ties(self):
        return [f"{' = '.join(names)}: one array, one variable (design.md section 3): each column is the sum of "
                f"its {len(names)} uses, at {names[0]} (None at {', '.join(names[1:])}), as autodiff's grad gives "
                "it; natively, torch's tensor used at both (a tied Parameter) is one variable whose .grad is this "
                "sum, read from either position (they are one object), while JAX's and autograd's gradients of a "
                "pytree give each position its own partial derivative (compare(..., ties=False) shows those)"
                for names in self.arguments.ties]

    def _conventions(self):
        if not any(np.iscomplexobj(v) for v in [self.results[REFEREE].value, *self.arguments.values]):
            return []
        ours = [n for n in self.results if self._states(self.results[n].flat_grad, "gradient") <= {"=", "kink"}]
        theirs = [n for n in self.results if _only_conjugate(self._states(self.results[n].flat_grad, "gradient"))]
        if not theirs:
            return ["complex z = x + iy, u = Re f: finite differences show du/dx - i du/dy (autodiff's and JAX's "
                    "convention; torch's z.grad is its conjugate)"]
        verb = "differs" if len(theirs) == 1 else "differ"
        return [f"{_listed(theirs)} {verb} from {_listed(ours)} only by conjugation: du/dx + i du/dy against "
                "du/dx - i du/dy (complex z = x + iy, u = Re f)"]

    def _states(self, flat, what):
        """Which of ``=``, ``conj``, ``differs`` and ``kink`` (the referee finds no derivative: any value there
        is a convention) occur in ``flat``, one system's gradient or ``H v``, against the referee's."""
        reference = self.results[REFEREE].flat_grad if what == "gradient" else self.results[REFEREE].flat_hvp
        noise = self._noise[0] if what == "gradient" else self._noise[1]
        scale, states = _scale(reference), set()
        for a, b, n, kink in zip(flat, reference, noise, self._no_derivative(what)):
            a, b = np.asarray(a), np.asarray(b)
            same, conj = _near(a, b, n, scale), _near(a, np.conj(b), n, scale)
            for state, where in (("kink", kink & ~same), ("=", same), ("conj", conj & ~same & ~kink),
                                 ("differs", ~same & ~conj & ~kink)):
                if where.any():
                    states.add(state)
        return states

    def _jvp_states(self, jv):
        """``{"="}``, ``{"kink"}`` (no derivative along the direction: any value is a convention) or
        ``{"differs"}`` for one system's ``J v`` against the referee's."""
        fd = self.results[REFEREE]
        if self.jvp_kink():
            return {"kink"}
        scale = abs(fd.jvp) if np.isfinite(fd.jvp) else 0.0
        return {"="} if _near(np.asarray(jv), np.asarray(fd.jvp), self._noise[2], scale).all() else {"differs"}

    def jvp_kink(self):
        """``(left, right)`` along the ``jvp`` direction where they differ (no derivative there), else ``None``."""
        fd = self.results[REFEREE]
        if fd.jvp_sides is None or not np.isnan(fd.jvp) or all(np.isnan(fd.jvp_sides)):
            return None
        return fd.jvp_sides

    def _no_derivative(self, what):
        """Per leaf, where the referee finds no derivative: one-sided derivatives that differ (a kink), or
        second differences that do not settle."""
        fd = self.results[REFEREE]
        if what == "Hv":
            return [np.isnan(h) for h in fd.flat_hvp]
        return [np.isnan(g) & ~(np.isnan(left) & np.isnan(right))
                for g, left, right in zip(fd.flat_grad, fd.flat_left, fd.flat_right)]


def _entry(name, index):
    return name + "".join(f"[{j}]" for j in index)


def _listed(names):
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def _only_conjugate(states):
    return "conj" in states and states <= {"=", "conj", "kink"}


def _scale(flat):
    """The largest finite entry of a gradient: tolerances are relative to it, never absolute."""
    finite = [np.abs(a[np.isfinite(a)]) for a in map(np.asarray, flat)]
    return max((float(a.max()) for a in finite if a.size), default=0.0)


def _near(a, b, noise, scale):
    """Elementwise agreement within a relative tolerance (of each entry and of the gradient's scale) plus the
    referee's rounding noise; NaN matches NaN, an infinity the same infinity."""
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= 1e-4 * np.maximum(np.abs(a), np.abs(b)) + 1e-6 * scale + 10 * noise
    return close | (np.isnan(a) & np.isnan(b)) | (a == b)
