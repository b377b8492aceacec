"""The results: a table on the terminal, a JSON file with the machine's facts, and (``bench/chart.py``) a chart.

They go to ``bench/results/latest.json`` and ``latest.png`` (ignored by git), or where ``--out`` says; a
reference run kept on purpose goes to ``bench/reference/NAME.json`` and ``.png`` (``--save-reference``).
``--compare OLD.json`` reads an earlier run and shows each row's change against it.
"""

import dataclasses
import datetime
import json
import os
import platform

import numpy as np

from ._timing import ONE_THREAD

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
REFERENCE = os.path.join(HERE, "reference")
VERDICTS = {"holds": "holds", "missed": "MISSED", "within noise": "within noise", "noisy": "NOISY", "": ""}


def amount(value, unit="s"):
    """``value`` seconds (or megabytes) in a short human unit.

    >>> amount(3.1e-6), amount(0.0425), amount(12.34, "MB"), amount(None)
    ('3.1 µs', '42.5 ms', '12.3 MB', '—')
    """
    if value is None:
        return "—"
    if unit == "MB":
        return f"{value:.1f} MB"
    for scale, name in ((1e-6, "µs"), (1e-3, "ms"), (1.0, "s")):
        if abs(value) < scale * 1000:
            return f"{value / scale:.3g} {name}"
    return f"{value:.3g} s"


def _cell(row, which):
    """A lane's time at one setting (``"ours"``, ``"ours@1"``, ``"torch"``, ``"torch@1"``), starred when its
    one-thread twin ran too and this is the faster of the two (the one ratios are taken with)."""
    lane = which.removesuffix(ONE_THREAD)
    value, one = getattr(row, lane + ("1" if which != lane else "")), getattr(row, lane + "1")
    faster = row.faster_ours if lane == "ours" else row.faster_torch
    return amount(value, row.unit) + ("*" if value is not None and one is not None and faster == which else "")


def _goal(row):
    if row.goal is None or row.value is None:
        return row.goal_text
    if not row.band:
        return f"{row.goal_text} (is {row.value:.3g})"
    return f"{row.goal_text} (is {row.value:.3g}, {row.band[0]:.3g} to {row.band[1]:.3g})"


def change(row):
    """The row against the same row of an earlier run: ``"0.92 (-3%)"``, or ``""`` without one."""
    old = row.previous
    if not old:
        return ""
    key = "value" if row.value is not None and old.get("value") is not None else "ours"
    now, then = getattr(row, key), old.get(key)
    if now is None or then is None:
        return "—"
    shown = amount(then, row.unit) if key == "ours" else f"{then:.3g}"
    return f"{shown} ({(now - then) / then:+.0%})" if then else shown


def table(rows):
    compare = any(r.previous is not None for r in rows)
    twins = any(r.ours1 is not None for r in rows)  # a suite raced ours at one thread too
    timed = ["ours"] + ["ours" + ONE_THREAD] * twins + ["torch", "torch" + ONE_THREAD]
    head = ["suite", "ours"] + ["ours 1 thread"] * twins + ["torch", "torch 1 thread", "floor", "ours/ref", "goal",
                                                             "verdict"]
    lines = [[r.suite, *[_cell(r, which) for which in timed], amount(r.floor, r.unit),
              f"{r.ratio:.2f}" if r.ratio is not None else "—", _goal(r), VERDICTS[r.verdict]] for r in rows]
    if compare:
        head.append("before")
        for line, row in zip(lines, rows):
            line.append(change(row))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    fmt = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(line) for line in lines])


def tally(rows):
    """How many goals held, were missed, were within noise and were NOISY, as one line."""
    counts = {v: sum(r.verdict == v for r in rows) for v in ("holds", "missed", "within noise", "noisy")}
    return (f"{counts['holds']} goals held, {counts['missed']} missed, {counts['within noise']} within noise, "
            f"{counts['noisy']} NOISY (not judged: other processes used the CPU meanwhile)")


def machine_facts(torch):
    facts = {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cpu": _cpu_model(), "cpu_kind": cpu_kind(), "cores": os.cpu_count(), "platform": platform.platform(),
        "python": platform.python_version(), "numpy": np.__version__, "numpy_blas": _numpy_blas(),
        "openblas_kernels": openblas_kernels(),
        "env": {k: v for k, v in os.environ.items()
                if k.startswith(("OPENBLAS", "OMP_", "MKL_", "NUMBA_", "AUTODIFF_", "GOTO", "BLIS", "KMP_"))},
    }
    try:
        import numba

        facts["numba"] = numba.__version__
    except ImportError:
        facts["numba"] = None
    if torch is not None:
        facts["torch"] = torch.__version__
        facts["torch_threads"] = torch.get_num_threads()
        facts["torch_config"] = torch.__config__.show()
    return facts


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        return platform.processor() or None


def cpu_kind(cpuinfo=None):
    """What tells apart two machines that ``lscpu`` names alike ("AMD EPYC" is a Zen 3 or a Zen 5 VM here): the
    first processor's vendor, family and model, and its widest vector extension, from ``cpuinfo`` (the text of
    ``/proc/cpuinfo``, read when not given); ``None`` where there is no such file.

    >>> cpu_kind("vendor_id : AuthenticAMD\\ncpu family : 26\\nmodel : 2\\nflags : fpu avx2 avx512f\\n\\nprocessor : 1")
    {'vendor': 'AuthenticAMD', 'family': 26, 'model': 2, 'vector': 'AVX-512'}
    """
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return None
    lines = cpuinfo.split("\n\n", 1)[0].splitlines()
    fields = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in lines)}
    flags = set(fields.get("flags", "").split())
    vector = next((name for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX")) if flag in flags),
                  None)
    family, model = (int(fields[k]) if fields.get(k, "").isdigit() else None for k in ("cpu family", "model"))
    return {"vendor": fields.get("vendor_id"), "family": family, "model": model, "vector": vector}


def openblas_kernels():
    """The kernels numpy's OpenBLAS runs (its core type: the CPU's own, or ``OPENBLAS_CORETYPE``'s), as
    threadpoolctl reads them; ``None`` without threadpoolctl or OpenBLAS."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return next((pool.get("architecture") for pool in threadpool_info() if pool.get("internal_api") == "openblas"),
                None)


def machine_line(facts):
    """One line naming the machine beside the figures: the CPU, what sets it apart, its cores, and the kernels
    numpy's OpenBLAS ran.

    >>> print(machine_line({"cpu": "AMD EPYC", "cores": 2, "openblas_kernels": "Haswell",
    ...                     "cpu_kind": {"vendor": "AuthenticAMD", "family": 26, "model": 2, "vector": "AVX-512"},
    ...                     "env": {"OPENBLAS_CORETYPE": "Haswell"}}))
    machine: AMD EPYC (family 26, model 2, AVX-512), 2 cores; numpy's OpenBLAS ran its Haswell kernels
    (OPENBLAS_CORETYPE=Haswell)
    """
    kind = facts.get("cpu_kind") or {}
    detail = ", ".join(f"{k} {kind[k]}" for k in ("family", "model") if kind.get(k) is not None)
    detail = ", ".join(filter(None, (detail, kind.get("vector"))))
    line = f"machine: {facts.get('cpu') or 'unknown CPU'}{f' ({detail})' if detail else ''}, {facts.get('cores')} cores"
    kernels = facts.get("openblas_kernels")
    if kernels:
        pinned = facts.get("env", {}).get("OPENBLAS_CORETYPE")
        line += f"; numpy's OpenBLAS ran its {kernels} kernels" + (f" (OPENBLAS_CORETYPE={pinned})" if pinned else "")
    return line


def _numpy_blas():
    try:
        config = np.show_config(mode="dicts")
        return config.get("Build Dependencies", {}).get("blas", {})
    except Exception:  # older numpy: no machine-readable config
        return {}


def row_dict(row):
    data = {f.name: getattr(row, f.name) for f in dataclasses.fields(row) if f.name != "previous"}
    return {**data, "verdict": row.verdict, "faster_torch": row.faster_torch, "faster_ours": row.faster_ours}


def write_json(rows, facts, extra, path=None):
    path = path or os.path.join(RESULTS, "latest.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    data = {"machine": facts, **extra, "rows": [row_dict(r) for r in rows]}
    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=str)
    return path


def load(path):
    """An earlier run's rows, ``{suite: row as a dict}``; runs written by older versions of the bench load too."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"python -m bench: cannot read --compare {path}: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise SystemExit(f"python -m bench: --compare {path} is not a results file of python -m bench "
                         "(expected a JSON object with a 'rows' list)")
    return {r["suite"]: r for r in data["rows"] if isinstance(r, dict) and "suite" in r}


def attach(rows, previous):
    """Give each row its namesake from ``previous`` (:func:`load`'s result); the number of rows matched."""
    for row in rows:
        row.previous = previous.get(row.suite)
    return sum(row.previous is not None for row in rows)
