"""Products with a direction in forward mode: ``jvp`` (``J v``), ``linearize`` and ``hvp`` (``H v``).

``jvp`` pushes the direction forward in the same pass as the primal (no
tape); ``hvp`` records one tape, reverse over forward (the gradient of the
directional derivative) or forward over reverse (the ``jvp`` of ``grad``); ``linearize`` records the forward once and
pushes each new direction along that record.  Primals are a tuple of
positional arguments, or one bare argument (a model, an array) with its
tangent.  Tangents mirror the primals and are checked leaf by leaf:
structure, shape and dtype, and one direction per tied array
(:mod:`autodiff._directions`).
"""

from ._arguments import is_differentiable, zeros_like_primal
from ._arguments import materialise as materialise_ct
from ._calls import checked_aux, on_arguments, split_aux
from ._directions import Variables, as_arguments, chosen_arguments
from ._forward import dual, open_pushforward
from ._hooks import hooks
from ._jvp_rules import jvp_rule_of
from ._output_checks import scalar_valued
from ._parameter_vector import flat_direction
from ._protection import release
from ._tangents import ZeroTangent
from ._traced import Traced, new_inputs, open_tape, value_of
from ._transforms import grad, unwrap_outputs
from ._trees import rebuild_node, transform
from ._vjp import protect_results, seeds_of, split_tuple_outputs


def jvp(f, primals, tangents, argnums=None, has_aux=False):
    """Forward-mode product ``J v`` in one forward pass; returns ``(out, J v)`` (``(out, J v, aux)`` with ``has_aux``).

    ``tangents`` mirrors ``primals`` (``None`` for a zero subtree); ``jvp(f,
    m, v)`` is ``jvp(f, (m,), (v,))``.  Nothing is recorded: each primitive
    computes its output and its output tangent (its JVP rule, or the
    linearisation of its pullback) and the chain keeps only what is live.
    ``J v`` mirrors ``out``: zeros where the output does not depend on the
    direction, ``None`` at non-float leaves.

    A flat vector over ``traversal.destructure``'s parameter vector is a direction
    too, for one bare argument (as for :func:`hvp`).  ``argnums`` and ``has_aux``
    mean what they mean for :func:`grad`:
    ``argnums=1`` moves only ``primals[1]`` (its bare tangent given), a tuple
    moves the arguments it names (one tangent each), and the other primals are
    held, as a closure over them would hold them; ``None`` (the default) moves
    every primal.  With ``has_aux`` ``f`` returns ``(out, aux)`` and ``aux``
    comes back as it is, without tangents.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> out, tangent = jvp(anp.sin, (0.0,), (3.0,))
    >>> float(out), float(tangent)
    (0.0, 3.0)
    >>> jvp(lambda p: p["w"] * p["s"], {"w": np.ones(2), "s": 2.0}, {"w": np.ones(2), "s": None})[1]
    array([2., 2.])
    >>> jvp(lambda w, x: (w * x, x), (np.ones(2), 3.0), np.array([1.0, 2.0]), argnums=0, has_aux=True)
    (array([3., 3.]), array([3., 6.]), 3.0)
    """
    args, nums, primals, tangents, bare = chosen_arguments("jvp", primals, tangents, argnums)
    variables = Variables(primals)
    directions = read_directions("jvp", variables, tangents, bare)[0]
    f = on_arguments(f, args, nums)
    with open_pushforward() as level:
        out, aux = split_aux(f(*variables.substitute(_duals(variables.leaves, directions, level))), has_aux, "jvp")
        out = split_tuple_outputs(out)
    out, tangent = primal_and_tangent(out, level)
    return (out, tangent, primal_only(aux, level)) if has_aux else (out, tangent)


def _duals(leaves, directions, level):
    return [x if d is None else dual(x, level, d) for x, d in zip(leaves, directions)]


def primal_and_tangent(out, level):
    """``(out without level's duals, their tangents in out's structure)``: zeros where none flowed."""
    tangents = []

    def primal(path, leaf):
        if type(leaf) is Traced and leaf.tape is level:
            tangents.append(materialise(leaf.tangent, leaf.value))
            return leaf.value
        tangents.append(zeros_like_primal(leaf) if is_differentiable(leaf) else None)
        return leaf

    out = transform(out, primal, rebuild_node)
    given = iter(tangents)
    return out, transform(out, lambda path, leaf: next(given), rebuild_node)


def primal_only(tree, level):
    """``tree`` with ``level``'s duals replaced by their primals (an ``aux`` leaves a jvp without tangents)."""
    return transform(tree, lambda path, leaf: leaf.value if type(leaf) is Traced and leaf.tape is level else leaf,
                     rebuild_node)


def materialise(t, primal):
    """A dense tangent for ``primal``: a symbolic zero becomes zeros of its shape and dtype."""
    if type(t) is ZeroTangent:
        v = value_of(primal)
        return tuple(zeros_like_primal(p) for p in v) if type(v) is tuple else zeros_like_primal(v)
    if type(t) is tuple:
        return tuple(materialise(ti, p) for ti, p in zip(t, value_of(primal)))
    return t


def hvp(f, primals, tangents, argnums=None, has_aux=False, mode="reverse_over_forward"):
    """Hessian-vector product ``H v``, in the structure of the primals.

    A tuple of primals gives a tuple, one gradient-shaped result per primal
    (``None`` where the gradient does not depend on the primals); a bare
    primal gives one: ``hvp(f, m, v)`` is ``hvp(f, (m,), (v,))[0]``.
    ``argnums`` and ``has_aux`` are :func:`jvp`'s (``(H v, aux)`` with
    ``has_aux``): an int ``argnums`` gives the bare ``H v`` of that argument,
    the others held.  To apply one Hessian to many vectors, record it once
    with :func:`autodiff.hvp_operator`.  For one bare argument the tangent
    may also be a flat vector over ``traversal.destructure``'s parameter
    vector (its trainable float arrays end to end); ``H v`` is then flat too.

    ``mode`` picks how, both with one tape:

    - ``"reverse_over_forward"`` (the default): the gradient of the
      directional derivative ``x -> <grad f(x), v>``, pushed forward along
      ``v`` while the tape records.  Every product it computes is read.
    - ``"forward_over_reverse"``: the ``jvp`` of ``grad(f)``, the gradient's
      tape recorded over dual values.  It also computes the gradient itself,
      which ``hvp`` then drops: with no compiler to remove them, those
      products (one per weight matrix of an MLP) make it about 20% slower on
      a big MLP.  JAX recommends it because XLA removes them.

    >>> import numpy as np
    >>> hvp(lambda x: (x ** 3).sum(), (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))
    (array([ 6., 12.]),)
    >>> hvp(lambda p: (p["a"] ** 3).sum(), {"a": np.array([1.0, 2.0])}, {"a": np.ones(2)})
    {'a': array([ 6., 12.])}
    >>> hvp(lambda x, c: (c * x ** 3).sum(), (np.array([1.0, 2.0]), 2.0), np.ones(2), argnums=0)
    array([12., 24.])
    >>> hvp(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]), np.ones(2), mode="forward_over_reverse")
    array([ 6., 12.])
    >>> hvp(lambda p: (p["a"] ** 3).sum() * p["b"][0], {"a": np.ones(2), "b": np.ones(1)}, np.ones(3))
    array([9., 9., 6.])
    """
    args, nums, primals, tangents, bare = chosen_arguments("hvp", primals, tangents, argnums)
    variables = Variables(primals)
    directions, flat = read_directions("hvp", variables, tangents, bare)
    f = scalar_valued(checked_aux(on_arguments(f, args, nums), has_aux, "hvp"), has_aux, "hvp")
    modes = {"reverse_over_forward": _reverse_over_forward, "forward_over_reverse": _forward_over_reverse}
    if mode not in modes:
        raise ValueError(f"hvp: mode must be one of {sorted(modes)}, not {mode!r}")
    result, aux = modes[mode](f, variables, directions, has_aux)
    result = flat.gather(result) if flat else result[0] if bare else result
    return (result, aux) if has_aux else result


def read_directions(name, variables, tangents, bare):
    """``(one direction per variable, the ParameterVector if the tangent was flat else None)``: a structured
    tangent checked leaf by leaf, or a flat vector over ``traversal.destructure``'s parameter vector."""
    flat = flat_direction(name, variables, tangents, bare)
    if flat is not None:
        return flat.split(tangents[0]), flat
    return variables.directions(name, tangents, bare), None


def _forward_over_reverse(f, variables, directions, has_aux):
    """``(H v, aux)``: the tangent of ``grad(f)``, recorded once over dual values."""
    gradient = grad(f, tuple(range(len(variables.primals))), has_aux)
    with open_pushforward() as level:
        grads = gradient(*variables.substitute(_duals(variables.leaves, directions, level)))
    grads, aux = grads if has_aux else (grads, None)
    return transform(grads, lambda path, g: _gradient_tangent(path, g, level), _collapse), primal_only(aux, level)


def _reverse_over_forward(f, variables, directions, has_aux):
    """``(H v, aux)``: the gradient of ``<grad f, v>``, which is ``f``'s tangent along ``v``."""

    def along(*traced):
        with open_pushforward() as level:  # grad traced one value per variable: each becomes a dual along v
            duals = variables.replace_in(traced, lambda v, x: x if directions[v] is None else dual(x, level,
                                                                                                  directions[v]))
            out, aux = split_aux(f(*duals), has_aux, "hvp")
        tangent = out.tangent if type(out) is Traced and out.tape is level else ZeroTangent()
        primal = out.value if type(out) is Traced and out.tape is level else out  # the pushforward has closed
        slope = materialise(tangent, value_of(primal)) if type(tangent) is not ZeroTangent else 0.0 * primal
        return (slope, primal_only(aux, level)) if has_aux else slope

    grads = grad(along, tuple(range(len(variables.primals))), has_aux)(*variables.primals)
    grads, aux = grads if has_aux else (grads, None)
    return grads, aux


def _gradient_tangent(path, g, level):
    """The tangent of one gradient leaf: ``None`` where the gradient does not move (a bare argument: zeros)."""
    if type(g) is Traced and g.tape is level:
        return materialise(g.tangent, g.value)
    if g is None or len(path) > 1:
        return None
    return zeros_like_primal(g)


def _collapse(path, x, node, keys, results):
    """Rebuild a container; one whose every result is ``None`` collapses to ``None`` (as in ``grad``)."""
    if path and all(r is None for r in results):
        return None
    return node.rebuild(x, results)


def linearize(f, *primals, has_aux=False):
    """``(out, f_jvp)``: ``f_jvp(*tangents)`` is ``J v`` at ``primals``, for as many ``v`` as you like.

    The forward runs once and is recorded (each op's output and arguments,
    as ``vjp`` records them); each call of ``f_jvp`` pushes its tangents along
    that record through the JVP rules, without running ``f`` again.  Tangents
    mirror the primals, checked as in :func:`jvp`.  With ``has_aux``, ``f``
    returns ``(out, aux)`` and ``linearize`` returns ``(out, f_jvp, aux)``, as
    JAX's does; ``aux`` carries no tangents.

    While ``f_jvp`` lives, every array its record reads stays read-only
    (design.md section 10), as for a ``vjp`` pullback: the primals, the
    constants ``f`` used, and ``out`` (and ``aux``) themselves, which the rules
    of ``exp``, ``tanh``, ``sqrt`` and others read as their ``ans``.  Copy
    ``out`` to change it; once ``f_jvp`` is garbage-collected every array is
    writable again.

    >>> import numpy as np
    >>> import autodiff.numpy as anp
    >>> f = lambda x: anp.sin(x) * x
    >>> x = np.array([0.0, 1.0])
    >>> out, f_jvp = linearize(f, x)
    >>> f_jvp(np.array([1.0, 0.0]))
    array([0., 0.])
    >>> bool(np.allclose(f_jvp(np.array([0.0, 2.0])), jvp(f, x, np.array([0.0, 2.0]))[1]))
    True
    >>> out.flags.writeable, x.flags.writeable
    (False, False)
    >>> del f_jvp
    >>> out.flags.writeable, x.flags.writeable
    (True, True)
    >>> out, f_jvp, aux = linearize(lambda x: (anp.exp(x), "note"), x, has_aux=True)
    >>> aux
    'note'
    """
    variables = Variables(tuple(primals))
    with open_tape() as tape:
        tape.keeps_all = True  # push_along runs JVP rules on the entries: they read what they read
        inputs = new_inputs(tape, variables.leaves)
        out, aux = split_aux(f(*variables.substitute(inputs)), has_aux, "linearize")
        out = split_tuple_outputs(out)
    value, outputs = unwrap_outputs(out, tape)
    f_jvp = Linearized(tape, variables, inputs, value, outputs)  # made first: it releases the tape, come what may
    aux = protect_results(tape, outputs, aux, has_aux)  # the rules of exp, tanh, sqrt... read their output
    return (value, f_jvp, aux) if has_aux else (value, f_jvp)


class Linearized:
    """``f_jvp`` of :func:`linearize`: tangents of the primals -> ``J v`` in the output's structure."""

    def __init__(self, tape, variables, inputs, out, outputs):
        self._tape, self._variables, self._inputs = tape, variables, inputs
        self._out, self._outputs = out, outputs

    @property
    def variables(self):
        """The primals' variables (:class:`autodiff._directions.Variables`) the record moves."""
        return self._variables

    def __del__(self):
        release(self._tape)  # the arrays the record protected are the caller's again

    def __call__(self, *tangents):
        _, tangents, _ = as_arguments("linearize", self._variables.primals, tangents)
        return self.push(self._variables.directions("linearize", tangents, False))

    def push(self, directions):
        """``J v`` in the output's structure, for one direction per variable (``None`` for zero)."""
        pushed = push_along(self._tape, {x.index: d for x, d in zip(self._inputs, directions) if d is not None})
        given = iter(self._outputs)

        def leaf_fn(path, leaf):
            _, index, value = next(given)
            t = pushed[index] if index is not None else None
            if t is None:
                return zeros_like_primal(value) if is_differentiable(value) else None
            return materialise(t, value)

        return transform(self._out, leaf_fn, rebuild_node)

    def transpose(self, ct):
        """``Jᵀ ct``: one gradient per primal, as ``vjp(f, *primals)``'s pullback gives, from one backward pass
        over the same record (no second run of ``f``).  It may be called many times.

        >>> import numpy as np
        >>> import autodiff.numpy as anp
        >>> out, f_jvp = linearize(lambda x: anp.sin(x) * x, np.array([0.0, 1.0]))
        >>> g, = f_jvp.transpose(np.ones(2))
        >>> bool(np.allclose(g, np.sin([0.0, 1.0]) + np.cos([0.0, 1.0]) * np.array([0.0, 1.0])))
        True
        """
        return self._variables.as_gradient(self.pull(ct))

    def pull(self, ct):
        """``Jᵀ ct`` per variable (``None`` where no cotangent arrived), from one backward pass over the record."""
        cts = hooks.backward(self._tape, seeds_of(ct, self._outputs, "linearize transpose"))
        return [materialise_ct(cts[x.index], x.value, bare=False) for x in self._inputs]


def push_along(tape, seeds):
    """Tangents of every entry of ``tape``, pushed forward from ``seeds`` ({input index: tangent})."""
    tangents = [None] * len(tape.entries)
    for index, t in seeds.items():
        tangents[index] = t
    for i, (prim, parents, argnums, ans, args, kwargs) in enumerate(tape.entries):
        if prim is None:
            continue
        given = [(n, tangents[p]) for n, p in zip(argnums, parents)
                 if tangents[p] is not None and type(tangents[p]) is not ZeroTangent]
        if given:
            nums, ts = zip(*given)
            tangents[i] = jvp_rule_of(prim)(list(ts), list(nums), ans, list(args), kwargs)
    return tangents
