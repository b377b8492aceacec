"""``python -m bench``: every benchmark beside PyTorch, checked before timed, as a table, JSON and a chart.

Options: ``--full`` (more rounds, and the full-only suites), ``--only NAMES`` (a comma list of modules among
those in ``bench.MODULES``: ``--only overhead,mlp``), ``--out PATH`` (where the JSON goes, the chart beside
it; default ``bench/results/latest.json``, ignored by git), ``--compare OLD.json`` (each row's change against
an earlier run), ``--save-reference NAME`` (also write ``bench/reference/NAME.json`` and ``.png``, to be
committed on purpose: refused for a partial, smoke or NOISY run), ``--contention`` (rerun the kernel suites
with the other core kept busy), ``--smoke`` (two short rounds: checks that everything runs, figures
meaningless), ``--inject-mismatch SUITE`` (a self-test: corrupt one result; the run must stop before timing).
"""

import argparse
import importlib
import os
import re
import subprocess
import sys
import time

from . import MODULES, _noise, chart, kernels, report
from ._row import Row
from ._stats import summary
from ._timing import Context, Mismatch, try_torch

QUICK_BUDGET = 60  # seconds the quick run should take on the project's quiet 2-core machine


class Progress:
    """A tqdm bar on a terminal; one plain line per suite when stderr is piped, so logs stay clean."""

    def __init__(self, total):
        self.total, self.count, self.bar = total, 0, None
        if sys.stderr.isatty():
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, file=sys.stderr, unit="suite", dynamic_ncols=True, leave=False)
            except ImportError:
                pass

    def start(self, name):
        self.count += 1
        if self.bar is not None:
            self.bar.set_postfix_str(name)
        else:
            print(f"[{self.count}/{self.total}] {name}", file=sys.stderr, flush=True)

    def done(self):
        if self.bar is not None:
            self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def suites(names, mode, named=False):
    """The suite functions of the named modules, in order (with ``FULL`` ones in full mode, or when ``named``
    with ``--only``)."""
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        yield from module.SUITES
        if mode == "full" or named:
            yield from getattr(module, "FULL", [])


def run_suites(ctx, chosen):
    """``(rows, {suite name: seconds})``."""
    rows, seconds, progress = [], {}, Progress(len(chosen))
    try:
        for suite in chosen:
            name = f"{suite.__module__.rsplit('.', 1)[-1]}.{suite.__name__}"
            progress.start(name)
            start = time.perf_counter()
            rows.extend(suite(ctx))
            seconds[name] = round(time.perf_counter() - start, 2)
            progress.done()
    finally:
        progress.close()
    return rows, seconds


def contention(ctx):
    """The kernel suites again with one core kept busy by a helper process: slowdown against quiet."""
    chosen = [kernels.global_norm, kernels.l2_value_and_gradient]
    quiet = {r.suite: r.ours for r in run_suites(ctx, chosen)[0]}
    helper = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    ctx.load = 1.0  # the helper's core is expected load, not noise
    try:
        time.sleep(0.5)
        loaded = run_suites(ctx, chosen)[0]
    finally:
        ctx.load = 0.0
        helper.kill()
        helper.wait()
    rows = []
    for r in loaded:
        value, band = summary([r.ours / quiet[r.suite]])
        rows.append(Row(f"{r.suite} with one core busy", ours=r.ours, value=value, band=band, goal=3.0,
                        goal_text="≤ 3× quiet", note=f"slowdown {value:.2f}×", others=r.others, noisy=r.noisy))
    return rows


def _modules(text):
    """``--only overhead,mlp``: the named modules in the order given, each once."""
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in MODULES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown module {', '.join(unknown) or repr(text)}; choose a comma list among {', '.join(MODULES)}"
        )
    return names


def _reference_name(text):
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", text):
        raise argparse.ArgumentTypeError(f"{text!r}: a reference name is letters, digits, '.', '_' and '-', "
                                         "such as epyc-2vcpu-2026-12-05")
    return text


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true", help="more rounds, and the suites kept for --full")
    mode.add_argument("--smoke", action="store_true", help="two short rounds: check it runs (figures meaningless)")
    parser.add_argument("--only", type=_modules, metavar="NAMES",
                        help=f"run these modules' suites, a comma list among {', '.join(MODULES)}")
    parser.add_argument("--out", metavar="PATH", help="write the JSON here and the chart beside it (.png)")
    parser.add_argument("--compare", metavar="OLD.json", help="show each row's change against an earlier run")
    parser.add_argument("--save-reference", type=_reference_name, metavar="NAME",
                        help="also write bench/reference/NAME.json and .png (a complete, quiet run only)")
    parser.add_argument("--contention", action="store_true", help="rerun the kernels with one core busy")
    parser.add_argument("--inject-mismatch", default="", metavar="SUITE", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    previous = report.load(args.compare) if args.compare else None
    torch = try_torch()
    if torch is None:
        print("torch is not installed: running ours alone, with the numpy floor where there is one. "
              "For the comparison: pip install -e '.[bench]' (it pins torch==2.13.0, the CPU build).")
    mode = "smoke" if args.smoke else "full" if args.full else "quick"
    ctx = Context(mode=mode, torch=torch, inject=args.inject_mismatch, adapt=True)
    _busy_before(ctx)
    start = time.perf_counter()
    try:
        rows, seconds = run_suites(ctx, list(suites(args.only or MODULES, mode, named=bool(args.only))))
        if args.contention:
            rows += contention(ctx)
    except Mismatch as e:
        print(f"\nBENCHMARK FAILED before timing: {e}", file=sys.stderr)
        return 1
    finally:
        ctx.release()
    if previous is not None:
        print(f"compared with {args.compare}: {report.attach(rows, previous)} of {len(rows)} rows matched by name")
    print(report.table(rows))
    extra = {"mode": mode, "seconds": round(time.perf_counter() - start, 1), "suite_seconds": seconds,
             "unsettled_batches": sum(ctx.unsettled), "only": args.only, "convolutions": _convolutions()}
    print(f"convolutions (float32): {extra['convolutions']}")
    _explain(rows, extra)
    reference = args.save_reference and _can_save(rows, args)
    facts = report.machine_facts(torch)
    print(report.machine_line(facts))  # quote it beside the figures: one model name covers machines unlike
    _write(rows, facts, extra, args, reference)
    print(f"{report.tally(rows)}; {extra['seconds']} s in {mode} mode")
    _over_budget(extra, args)
    return 2 if args.save_reference and not reference else 0


def _convolutions():
    """Which backend ran the float32 convolutions (``layers._onednn.describe()``)."""
    import layers

    return layers._onednn.describe()


def _busy_before(ctx):
    """Say up front when other processes keep the CPU busy: what such a run can and cannot tell."""
    before = _noise.sample()
    if before is None:
        return
    ctx.observe(before)
    if ctx.busy:
        print(f"BUSY: other processes are using {before.cores:.2f} of a core (NOISY above "
              f"{_noise.THRESHOLD:.0%}). Rows measured while they run are NOISY and not judged, and their races "
              "are cut to a few rounds without waiting for idle threads, so the run still ends on time. "
              "Rerun on a quiet machine for verdicts.", flush=True)


def _explain(rows, extra):
    ours = "ours (at its faster setting, starred, where it also ran at one thread)" if any(
        r.ours1 is not None for r in rows) else "ours"
    print(f"ours/ref: the median over A/B rounds of {ours} / the faster torch setting (starred), or / the floor; "
          f"bands: the median's 95% interval, at least ±5% (bench/README.md); "
          f"{extra['unsettled_batches']} batches started before the threads had gone idle")
    watched = [r.others for r in rows if r.others is not None]
    if _noise.read() is None:
        print("the NOISY check is off: this system has no /proc to read other processes' CPU time from")
    elif watched:
        print(f"other processes used at most {max(watched):.0%} of a core during a row "
              f"(NOISY above {_noise.THRESHOLD:.0%} plus {_noise.SLACK} s)")
    if any(r.noisy for r in rows):
        print("NOISY rows: other processes used more than 10% of a core while they ran; their goals are not "
              "judged. Rerun on a quiet machine.")


def _write(rows, facts, extra, args, reference):
    """The JSON and chart to ``--out``, or to bench/results/ after a complete run; and the reference."""
    path = args.out or (None if args.only or args.smoke else os.path.join(report.RESULTS, "latest.json"))
    targets = [path] if path else []
    if reference:
        targets.append(os.path.join(report.REFERENCE, f"{args.save_reference}.json"))
    for target in targets:
        print("wrote", report.write_json(rows, facts, extra, target))
        _chart(rows, os.path.splitext(target)[0] + ".png")


def _chart(rows, path):
    try:
        print("wrote", chart.write(rows, path))
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("matplotlib"):
            raise
        print("no chart: matplotlib is not installed (pip install matplotlib, or pip install -e '.[bench]'); "
              "the table above and the JSON have every figure")


def _can_save(rows, args):
    """A reference run must be complete, timed for real, and quiet; says why not otherwise."""
    why = ("--only ran part of the suites" if args.only else "--smoke figures are meaningless" if args.smoke
           else "some rows are NOISY" if any(r.noisy for r in rows) else "")
    if why:
        print(f"not saved as reference {args.save_reference}: {why}", file=sys.stderr)
    return not why


def _over_budget(extra, args):
    if extra["mode"] == "quick" and not args.only and extra["seconds"] > QUICK_BUDGET:
        slowest = sorted(extra["suite_seconds"].items(), key=lambda kv: -kv[1])[:3]
        print(f"this quick run took {extra['seconds']} s, over its {QUICK_BUDGET} s budget on a quiet 2-core "
              f"machine; slowest suites: {', '.join(f'{k} {v} s' for k, v in slowest)}")


if __name__ == "__main__":
    sys.exit(main())
