"""``python -m bench``: every benchmark beside PyTorch, checked before timed, as a table, JSON and a chart.

Options: ``--full`` (longer timings), ``--only NAMES`` (a comma list of modules among overhead, mlp,
total, kernels, resnet, system, checkpoint, memory: ``--only overhead,mlp``), ``--contention`` (rerun the
kernel suites with the other core kept busy), ``--inject-mismatch SUITE`` (a self-test: corrupt one result;
the run must stop before timing).
"""

import argparse
import subprocess
import sys
import time

from . import checkpoint, kernels, memory, mlp, overhead, report, resnet, system, total
from ._timing import Context, Mismatch, Row, try_torch

MODULES = {"overhead": overhead, "mlp": mlp, "total": total, "kernels": kernels, "resnet": resnet,
           "system": system, "checkpoint": checkpoint, "memory": memory}


def _progress(k, n, name):
    done = int(20 * k / n)
    sys.stderr.write(f"\r[{'#' * done}{'.' * (20 - done)}] {k}/{n} {name[:60]:<60}")
    sys.stderr.flush()


def run_suites(ctx, suites):
    rows = []
    for k, suite in enumerate(suites):
        _progress(k, len(suites), suite.__name__)
        rows.extend(suite(ctx))
    _progress(len(suites), len(suites), "done")
    sys.stderr.write("\n")
    return rows


def contention(ctx):
    """The kernel suites again with one core kept busy by a helper process: slowdown against quiet."""
    quiet = {r.suite: r.ours for r in run_suites(ctx, [kernels.global_norm, kernels.l2_value_and_gradient])}
    helper = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        loaded = run_suites(ctx, [kernels.global_norm, kernels.l2_value_and_gradient])
    finally:
        helper.kill()
        helper.wait()
    return [Row(f"{r.suite} with one core busy", ours=r.ours, value=r.ours / quiet[r.suite], goal=3.0,
                goal_text="≤ 3× quiet", note=f"slowdown {r.ours / quiet[r.suite]:.2f}×") for r in loaded]


def _spread(spreads):
    """How noisy the timings were: the typical and the worst median-over-best ratio."""
    if not spreads:
        return "n/a"
    ordered = sorted(spreads)
    return f"{ordered[len(ordered) // 2]:.2f} typically, up to {ordered[-1]:.2f}"


def _modules(text):
    """``--only overhead,mlp``: the named modules in the order given, each once."""
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in MODULES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown module {', '.join(unknown) or repr(text)}; choose a comma list among {', '.join(MODULES)}"
        )
    return [MODULES[n] for n in names]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="longer, steadier timings")
    parser.add_argument("--only", type=_modules, metavar="NAMES",
                        help=f"run these modules' suites, a comma list among {', '.join(MODULES)}")
    parser.add_argument("--contention", action="store_true", help="rerun the kernels with one core busy")
    parser.add_argument("--inject-mismatch", default="", metavar="SUITE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    torch = try_torch(threads=None)
    if torch is None:
        print("torch is not installed: running ours alone, with the numpy floor where there is one. "
              "For the comparison: pip install -e '.[bench]' (it pins torch==2.13.0, the CPU build).")
    ctx = Context(quick=not args.full, torch=torch, inject=args.inject_mismatch, repeats=25 if args.full else 15)
    modules = args.only or list(MODULES.values())
    suites = [s for m in modules for s in m.SUITES]
    start = time.perf_counter()
    try:
        rows = run_suites(ctx, suites)
        if args.contention:
            rows += contention(ctx)
    except Mismatch as e:
        print(f"\nBENCHMARK FAILED before timing: {e}", file=sys.stderr)
        return 1
    print(report.table(rows))
    extra = {"mode": "full" if args.full else "quick", "seconds": round(time.perf_counter() - start, 1),
             "median_over_best": _spread(ctx.spreads)}
    print(f"times are the best of {ctx.repeats} runs; the runs' medians were {extra['median_over_best']} "
          "× the best (machine noise)")
    if not args.only:
        print("wrote", report.write_json(rows, report.machine_facts(torch), extra))
        print("wrote", report.write_chart(rows))
    missed = [r.suite for r in rows if r.held is False]
    print(f"{len([r for r in rows if r.held])} goals held, {len(missed)} missed; "
          f"{extra['seconds']} s in {extra['mode']} mode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
