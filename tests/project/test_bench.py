"""The benchmark runner: A/B rounds and their median ratio, the NOISY flag, verdict bands, the chart, --out,
--compare, results kept out of git, and a wrong result stopping the run before anything is timed.

Nothing here measures speed: timings come from synthetic rounds or from ``--smoke`` runs."""

import functools
import json
import os
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

from bench import __main__ as runner
from bench import _fresh, _noise, _stats, _timing, chart, kernels, memory, mlp, overhead, report
from bench._row import Row, absorb, record
from bench._timing import Context, Lane, Mismatch, Rounds, calibrate, lanes, others_running, settle, try_torch
from tests.internals import kernel_threads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench(*args, code=None):
    command = [sys.executable, "-W", "error::UserWarning"] + (["-c", code] if code else ["-m", "bench"])
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


# ---- the A/B rounds --------------------------------------------------------------------------------------

def test_the_ratio_is_the_median_of_the_per_round_ratios_against_the_faster_torch_setting():
    rounds = Rounds({"ours": [1.0, 3.0, 10.0], "torch": [9.0, 9.0, 9.0], "torch@1": [2.0, 1.0, 20.0]})
    assert rounds.fastest("torch") == "torch@1"  # median 2 against 9
    row = record(Row("r", goal=1.0), rounds)
    assert row.ratio == pytest.approx(0.5)  # per round 0.5, 3, 0.5; the ratio of the medians would be 1.5
    assert (row.ours, row.torch, row.torch1, row.faster_torch) == (3.0, 9.0, 2.0, "torch@1")
    assert row.value == row.ratio and row.band[0] <= row.value <= row.band[1]


def test_a_value_can_be_one_lanes_scaled_time_or_a_ratio_to_the_floor():
    rounds = Rounds({"ours": [2e-6, 3e-6, 4e-6], "floor": [1e-6, 1e-6, 2e-6]})
    assert record(Row("t", goal=5), rounds, value="ours", scale=1e6).value == pytest.approx(3.0)
    row = record(Row("f", goal=1.15), rounds, value=("ours", "floor"))
    assert row.value == pytest.approx(2.0) and row.ratio == pytest.approx(2.0) and row.torch is None
    assert record(Row("no torch", goal=1.0), rounds).value is None  # ("ours", "torch"): torch did not run


class _FakeTorch:
    """Records the thread count each call ran with."""

    def __init__(self):
        self.threads, self.seen = 2, []

    def get_num_threads(self):
        return self.threads

    def set_num_threads(self, n):
        self.threads = n


def test_a_race_alternates_the_order_and_runs_torchs_twin_on_one_thread_then_restores_it():
    torch, calls = _FakeTorch(), []

    def lane(name):
        def fn():
            calls.append((name, torch.threads))
            time.sleep(0.001)  # longer than smoke mode's shortest batch: one call per batch
        return fn

    ctx = Context(mode="smoke", torch=torch)
    rounds = ctx.race({"ours": lane("ours"), "torch": lane("torch")})
    assert set(rounds.times) == {"ours", "torch", "torch@1"} and all(len(t) == 2 for t in rounds.times.values())
    order = [("ours", 2), ("torch", 2), ("torch", 1), ("torch", 1), ("torch", 2), ("ours", 2)]
    assert calls[-12:] == [call for call in order for _ in range(2)]  # each batch: an untimed call, a timed one
    assert torch.threads == 2
    assert rounds.noise is None or rounds.noise.wall > 0
    assert [lane.name for lane in lanes({"torch.func": print}, torch)] == ["torch.func", "torch.func@1"]
    assert [lane.name for lane in lanes({"torch": print}, None)] == ["torch"]  # no twin without torch


def test_ours_one_thread_twin_limits_numpys_blas_and_our_kernel_thread_then_restores_both():
    from bench._timing import ours_one_thread

    try:
        import threadpoolctl
    except ImportError:  # the bench leaves the twin out, and says so in its README
        assert ours_one_thread(print) is None
        return
    def numpy_blas_threads():
        return [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if "numpy" in lib["filepath"]]

    before, threads_before, seen = numpy_blas_threads(), kernel_threads(), []
    twin = ours_one_thread(lambda: seen.append((numpy_blas_threads(), kernel_threads())))
    rounds = Context(mode="smoke").race({"ours": lambda: None, twin.name: twin})
    assert twin.name == "ours@1" and set(rounds.times) == {"ours", "ours@1"}
    assert seen and all(blas == [1] * len(before) and kernels == 1 for blas, kernels in seen)
    assert numpy_blas_threads() == before and kernel_threads() == threads_before


def test_with_ours_twin_each_side_is_judged_at_its_faster_setting():
    rounds = Rounds({"ours": [4.0, 4.0, 4.0], "ours@1": [2.0, 1.0, 3.0], "torch": [8.0, 8.0, 8.0],
                     "torch@1": [4.0, 4.0, 4.0]})
    row = record(Row("r", goal=1.0), rounds)
    assert (row.ours, row.ours1, row.faster_ours, row.best_ours) == (4.0, 2.0, "ours@1", 2.0)
    assert row.ratio == pytest.approx(0.5) and row.value == pytest.approx(0.5)  # per round 0.5, 0.25, 0.75
    lines = report.table([row]).splitlines()
    assert "ours 1 thread" in lines[0] and "2 s*" in lines[2] and "4 s*" in lines[2]
    assert "ours 1 thread" not in report.table([record(Row("q"), Rounds({"ours": [1.0], "torch": [1.0]}))])


def test_calibration_does_not_take_a_slow_first_call_for_the_steady_cost():
    first = []

    def compiles_on_first_call():
        if not first:
            first.append(time.sleep(0.05))

    calls, per_call = calibrate(Lane("lazy", compiles_on_first_call), min_batch=0.005)
    assert calls > 100 and per_call < 1e-4 and calls * per_call >= 0.005


def test_a_batch_times_the_lanes_steady_state_not_its_wake_up_after_the_wait_for_other_lanes():
    last = [time.perf_counter()]

    def slow_after_a_pause():  # as a thread pool whose workers went to sleep: the first call wakes them
        if time.perf_counter() - last[0] > 0.02:
            time.sleep(0.05)
        last[0] = time.perf_counter()

    time.sleep(0.03)
    seconds, settled = _timing.batch(Lane("pooled", slow_after_a_pause), 1)
    assert settled and seconds < 0.02  # the untimed call woke it; timed alone, the call took 0.05 s


@functools.cache
def _unsorted():
    return np.random.default_rng(0).standard_normal(1_000_000)  # made once: making it holds the GIL


def _spin(seconds=0.3):
    """About 0.3 s of one core with the GIL released (a thread holding the GIL would show as waiting for it,
    not running, whenever the test's thread read its state), as a BLAS worker spins: sorts of a copy, each a
    few ms, for that long whatever the machine's speed (one sort of 8M values took 0.2 to 0.6 s)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        np.sort(_unsorted())


def test_settle_waits_for_a_spinning_thread_and_gives_up_after_its_timeout():
    import threading

    assert settle()  # nothing runs: idle at once
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            _spin()

    busy = threading.Thread(target=spin)
    busy.start()
    try:
        start = time.perf_counter()
        assert not settle(window=0.02, timeout=0.1)  # long windows: the spinner runs even on a loaded machine
        assert time.perf_counter() - start >= 0.1
        if others_running() is not None:  # with /proc: the spinner is seen running, whatever the tick
            assert all(others_running() >= 1 for _ in range(20))
    finally:
        stop.set()
        busy.join()
    assert settle()
    if others_running() is not None:
        sleeper = threading.Thread(target=stop.wait, args=(5,))
        stop.clear()
        sleeper.start()
        try:
            assert settle() and others_running() == 0  # a sleeping thread is idle
        finally:
            stop.set()
            sleeper.join()


def test_a_lane_learns_its_own_spinning_worker_and_only_other_lanes_wait_for_it():
    import threading

    go, stop, tid = threading.Event(), threading.Event(), []

    def worker():  # a BLAS-like pool of one: works when asked, then spins (a long sort, the GIL released)
        tid.append(str(threading.get_native_id()))
        while not stop.is_set():
            if go.wait(0.01):
                go.clear()
                _spin()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        lane = Lane("pooled", go.set)
        calibrate(lane, min_batch=0)
        if others_running() is None:  # no /proc: no thread states, so no own workers; every lane waits alike
            assert lane.own == frozenset()
            return
        assert tid[0] in lane.own  # it ran during the lane's batches
        go.set()
        time.sleep(0.02)
        assert others_running() >= 1 and others_running(lane.own) == 0  # spinning, but its own lane's
        assert settle(own=lane.own) and not settle(timeout=0.05)  # so only another lane waits for it
        assert settle(timeout=5.0)  # and it goes to sleep
    finally:
        stop.set()
        thread.join()


def test_a_race_takes_as_many_rounds_as_its_budget_allows_counting_the_waits_between_lanes(monkeypatch):
    monkeypatch.setitem(_timing.MODES, "smoke", _timing.Settings(rounds=9, min_rounds=3, budget=0.5, min_batch=0))
    real_settle = _timing.settle
    monkeypatch.setattr(_timing, "settle", lambda **kw: time.sleep(0.1) or real_settle(**kw))
    rounds = Context(mode="smoke").race({"ours": lambda: None, "floor": lambda: None})
    assert [len(t) for t in rounds.times.values()] == [3, 3]  # a round costs 0.2 s of waits: 0.5 s buys 2, min 3


# ---- NOISY rows --------------------------------------------------------------------------------------------

PROC_STAT = "cpu  {user} 0 {system} 90000 10 0 0 {steal} 0 0\ncpu0 1 0 1 45000 5 0 0 0 0 0\n"
SELF_STAT = "4242 (python -m (bench)) S 1 2 3 4 5 6 7 8 9 10 {utime} {stime} {cutime} 0 20 0 1"


def _reading(user, system, steal, utime, stime, cutime, wall):
    hz = 100
    busy = _noise.busy_seconds(PROC_STAT.format(user=user, system=system, steal=steal), hz)
    own = _noise.own_seconds(SELF_STAT.format(utime=utime, stime=stime, cutime=cutime), hz)
    return _noise.Reading(busy, own, wall)


def test_a_row_is_noisy_when_others_used_the_cpu_and_its_goal_is_then_not_judged():
    before = _reading(1000, 500, 0, 200, 20, 0, wall=10.0)
    # 2 s of wall time; we used 1.9 s of CPU (with a child process's 0.3 s); the machine's total rose by 1.95 s
    quiet = _noise.between(before, _reading(1175, 520, 0, 350, 30, 30, wall=12.0))
    assert quiet.others == pytest.approx(0.05) and not quiet.noisy
    # another job took 80% of a core meanwhile (some of it as steal: the hypervisor ran another tenant)
    busy = _noise.between(before, _reading(1300, 520, 30, 350, 30, 30, wall=12.0))
    assert busy.cores == pytest.approx(0.8) and busy.noisy
    assert not _noise.between(before, _reading(1300, 520, 30, 350, 30, 30, wall=12.0), load=1.0).noisy

    row = Row("a step", goal=1.0)
    record(row, Rounds({"ours": [0.5, 0.5, 0.5], "torch": [1.0, 1.0, 1.0]}, noise=busy))
    assert row.noisy and row.verdict == "noisy" and row.value == pytest.approx(0.5)
    assert absorb(Row("b"), quiet).others == pytest.approx(0.025) and _noise.between(None, before) is None
    assert "NOISY" in report.table([row]) and report.tally([row]).startswith("0 goals held, 0 missed")


def test_a_busy_machine_holds_every_pool_at_one_thread_and_times_one_call_per_lane_without_a_verdict():

    torch, busy = _FakeTorch(), _noise.Interference(others=1.0, wall=1.0)
    threads_before = kernel_threads()
    ctx = Context(mode="quick", torch=torch, adapt=True)
    ctx.observe(busy)
    try:
        assert ctx.busy and ctx.settings is _timing.BUSY and torch.threads == 1 and kernel_threads() == 1
        rounds = ctx.race({"ours": lambda: None, "torch": lambda: None})
        assert rounds.busy and all(len(t) == 1 for t in rounds.times.values())
        row = record(Row("a step", goal=10.0), rounds)
        assert row.noisy and row.verdict == "noisy"  # one round is a figure to look at, never a verdict
    finally:
        ctx.observe(_noise.Interference(others=0.0, wall=1.0))  # quiet again: the threads come back
    assert not ctx.busy and ctx.settings is _timing.MODES["quick"]
    assert torch.threads == 2 and kernel_threads() == threads_before


def test_a_context_made_by_hand_ignores_the_machines_load_so_tests_of_the_rounds_stay_deterministic():
    ctx = Context(mode="smoke")
    ctx.observe(_noise.Interference(others=2.0, wall=1.0))
    assert not ctx.busy and ctx.settings is _timing.MODES["smoke"]


def test_a_busy_machine_is_named_before_anything_runs_and_the_threads_are_given_back(monkeypatch, capsys):

    threads_before = kernel_threads()
    monkeypatch.setattr(_noise, "sample", lambda seconds=0.5: _noise.Interference(others=0.9, wall=0.5))
    assert runner.main(["--smoke", "--only", "overhead"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("BUSY: other processes are using 1.80 of a core") and "not judged" in out
    assert kernel_threads() == threads_before


def test_every_goal_is_a_ratio_measured_in_one_run_never_an_absolute_time():
    """Times change with the machine (Intel one day, AMD the next); a ratio to torch, to the numpy floor or to
    ourselves in the same run does not. A goal text that names a time unit would judge the machine."""
    import re

    for name in os.listdir(os.path.join(ROOT, "bench")):
        if name.endswith(".py"):
            source = open(os.path.join(ROOT, "bench", name), encoding="utf-8").read()
            texts = re.findall(r"goal_text=f?\"([^\"]*)\"", source)
            timed = [t for t in texts if re.search(r"\d\s*(µs|ms|s)\b", t)]
            assert not timed, f"bench/{name}: goals in absolute time: {timed}"


def test_reading_the_real_counters_of_this_machine():
    reading = _noise.read()
    if reading is None:
        pytest.skip("no /proc: the NOISY check is off on this system")
    assert reading.busy > 0 and 0 < reading.own <= reading.busy * 1.01


# ---- verdicts ------------------------------------------------------------------------------------------------

def test_a_value_within_its_band_of_the_goal_is_within_noise_not_held_or_missed():
    assert _stats.median_interval(list(range(9, 0, -1))) == (2, 8)  # 96% for 9 rounds
    value, band = _stats.summary([1.0] * 9)
    assert value == 1.0 and band == pytest.approx((1 - _stats.MARGIN, 1 + _stats.MARGIN))  # at least ±5%
    near = Row("near", value=0.92, band=(0.88, 0.96), goal=0.9)
    clear = Row("clear", value=0.7, band=(0.66, 0.74), goal=0.9)
    assert (near.verdict, clear.verdict) == ("within noise", "holds")
    assert Row("bw", value=0.6, band=(0.5, 0.65), goal=0.7, at_least=True).verdict == "missed"
    assert Row("reported", ours=1.0).verdict == ""
    assert "within noise" in report.table([near]) and "0.88 to 0.96" in report.table([near])


# ---- the report, the chart, --out and --compare ---------------------------------------------------------------

def _rows():
    return [Row("a step", ours=2e-3, torch=4e-3, torch1=5e-3, ratio=0.5, value=0.5, band=(0.45, 0.55), goal=0.9,
                goal_text="ours/torch ≤ 0.9"),
            Row("memory", ours=12.0, torch=6.0, ratio=2.0, value=2.0, band=(1.9, 2.1), goal=1.0, unit="MB"),
            Row("bandwidth", value=1.2, band=(1.1, 1.3), goal=0.7, at_least=True),
            Row("reported only", ours=3e-6, floor=1e-6, ratio=3.0, goal_text="(reported)")]


def test_the_chart_has_a_row_per_workload_with_ours_torch_the_goal_and_the_values_printed(tmp_path):
    rows = _rows()
    rows[0].previous = {"ours": 4e-3}
    rows[0].torch, rows[0].torch1 = 5e-3, 4e-3  # torch was faster with one thread

    entries = chart.layout(rows)
    assert [e.label.split("  [")[0] for e in entries] == [r.suite for r in rows]
    step, mem, bandwidth, reported = entries
    assert (step.ours, step.torch, step.previous) == (0.5, 1.0, 1.0)  # each row scaled to its longest mark
    assert step.goal == pytest.approx(0.9)  # ours would meet ours/torch ≤ 0.9 at 3.6 ms of 4 ms
    assert (step.ours_text, step.torch_text, step.verdict) == ("2 ms", "torch 4 ms (1 thread)", "holds")
    assert (mem.ours, mem.torch, mem.goal, mem.ours_text) == (1.0, 0.5, 0.5, "12.0 MB")
    assert (bandwidth.ours, bandwidth.goal, bandwidth.torch) == (1.0, pytest.approx(0.7 / 1.2), None)
    assert reported.goal is None and reported.verdict == ""
    assert reported.torch == pytest.approx(1 / 3) and reported.torch_text == "floor 1 µs"  # no torch: the floor
    png = chart.write(rows, str(tmp_path / "sub" / "chart.png"))
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_compare_shows_each_rows_change_against_an_earlier_run_including_old_format_files(tmp_path):
    old = _rows()
    old[0].value = 0.4
    path = report.write_json(old, report.machine_facts(None), {"mode": "quick"}, str(tmp_path / "old.json"))
    rows = _rows()
    assert report.attach(rows, report.load(path)) == 4
    text = report.table(rows)
    assert "before" in text.splitlines()[0] and "0.4 (+25%)" in text and "3 µs (+0%)" in text
    reference = os.path.join(report.REFERENCE, "epyc-2vcpu-2026-12-01.json")  # written by the previous bench
    matched = report.attach([Row("HVP, MLP 64-64-10", ours=1e-4, value=0.5, goal=0.8)], report.load(reference))
    assert matched == 1
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(SystemExit, match="not a results file"):
        report.load(str(bad))


def test_out_writes_the_json_and_the_chart_and_compare_reads_it_back(tmp_path, capsys):
    first, second = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    assert runner.main(["--smoke", "--only", "overhead", "--out", first]) == 0
    data = json.load(open(first))
    assert data["mode"] == "smoke" and data["machine"]["cores"] == os.cpu_count()
    assert data["rows"][0]["suite"].startswith("per-op overhead") and len(data["rows"][0]["samples"]) == 2
    assert os.path.exists(str(tmp_path / "a.png"))
    assert runner.main(["--smoke", "--only", "overhead", "--out", second, "--compare", first]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 rows matched" in out and "before" in out  # eager and jit


def test_results_go_where_git_ignores_them_and_a_partial_run_writes_nothing_by_default():
    assert os.path.dirname(os.path.join(report.RESULTS, "latest.json")) == os.path.join(ROOT, "bench", "results")
    try:
        ignored = subprocess.run(["git", "check-ignore", "-q", "bench/results/latest.json"], cwd=ROOT)
        tracked = subprocess.run(["git", "ls-files", "bench/results"], cwd=ROOT, capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("git is not installed")
    if tracked.returncode:
        pytest.skip("not a git checkout")
    assert ignored.returncode == 0 and tracked.stdout == ""


def test_a_reference_is_refused_unless_the_run_is_complete_real_and_quiet(capsys):
    assert runner.main(["--smoke", "--only", "overhead", "--save-reference", "test-refused"]) == 2
    assert "not saved as reference test-refused: --only ran part" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(report.REFERENCE, "test-refused.json"))
    with pytest.raises(SystemExit):
        runner.main(["--save-reference", "../escape"])


def test_a_reference_is_written_beside_the_results_only_for_a_quiet_complete_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report, "REFERENCE", str(tmp_path / "reference"))
    args = runner.parse(["--save-reference", "quiet-box", "--out", str(tmp_path / "latest.json")])
    rows = _rows()
    assert runner._can_save(rows, args)
    runner._write(rows, report.machine_facts(None), {"mode": "quick"}, args, reference=True)
    for name in ("latest.json", "latest.png", "reference/quiet-box.json", "reference/quiet-box.png"):
        assert (tmp_path / name).exists(), name
    assert json.load(open(tmp_path / "reference" / "quiet-box.json"))["machine"]["cpu"] == report._cpu_model()
    rows[0].noisy = True
    assert not runner._can_save(rows, args)
    assert "not saved as reference quiet-box: some rows are NOISY" in capsys.readouterr().err


# ---- whole runs, in fresh processes ---------------------------------------------------------------------

def test_an_injected_mismatch_fails_before_anything_is_timed():
    done = _bench("--smoke", "--only", "overhead", "--inject-mismatch", "per-op overhead")
    assert done.returncode == 1
    assert "BENCHMARK FAILED before timing" in done.stderr and "nothing was timed" in done.stderr
    assert "suite" not in done.stdout  # no table was printed


def test_a_smoke_run_prints_the_table_without_warnings_and_leaves_the_checkout_as_it_was():
    status = ["git", "status", "--porcelain", "--untracked-files=all"]
    before = subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout
    done = _bench("--smoke", "--only", "overhead")  # -W error::UserWarning: a warning would fail the run
    assert done.returncode == 0, done.stderr
    assert "per-op overhead" in done.stdout and "goals held" in done.stdout and "verdict" in done.stdout
    assert "[1/2] overhead.per_op_overhead" in done.stderr and "\r" not in done.stderr  # piped: plain lines
    assert report.machine_line(report.machine_facts(None)) in done.stdout  # the CPU named beside the figures
    assert subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout == before


def test_the_machine_facts_tell_apart_cpus_of_one_model_name():
    facts = report.machine_facts(None)
    kind = facts["cpu_kind"]
    if kind is None:  # no /proc/cpuinfo: nothing to tell apart by
        assert "(" not in report.machine_line(facts)
        return
    with open("/proc/cpuinfo") as f:
        flags = next(line for line in f if line.startswith("flags")).split()
    assert kind["vector"] == ("AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else
                              "AVX" if "avx" in flags else None)
    assert f"family {kind['family']}, model {kind['model']}" in report.machine_line(facts)
    kernels = facts["openblas_kernels"]
    assert (f"OpenBLAS ran its {kernels} kernels" in report.machine_line(facts)) == (kernels is not None)
    assert report.cpu_kind("vendor_id : GenuineIntel\nflags : sse2\n") == {
        "vendor": "GenuineIntel", "family": None, "model": None, "vector": None}


def test_without_matplotlib_the_table_and_json_still_come_and_it_says_how_to_install_it(tmp_path):
    out = str(tmp_path / "r.json")
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from bench.__main__ import main\n"
            f"sys.exit(main(['--smoke', '--only', 'overhead', '--out', {out!r}]))")
    done = _bench(code=code)
    assert done.returncode == 0, done.stderr
    assert "per-op overhead" in done.stdout and "matplotlib is not installed" in done.stdout
    assert "pip install" in done.stdout and "Traceback" not in done.stderr and os.path.exists(out)


def test_without_torch_it_runs_ours_alone_and_says_how_to_install_it():
    code = ("import sys; sys.modules['torch'] = None\n"
            "from bench.__main__ import main\n"
            "sys.exit(main(['--smoke', '--only', 'overhead']))")
    done = _bench(code=code)
    assert done.returncode == 0, done.stderr
    assert "torch is not installed" in done.stdout and "pip install" in done.stdout
    assert "per-op overhead" in done.stdout


def test_only_takes_a_comma_list_of_modules_and_names_the_choices_for_a_wrong_one(capsys):
    with pytest.raises(SystemExit):
        runner.main(["--only", "overhead,nope"])
    assert "unknown module nope; choose a comma list among overhead, mlp, total" in capsys.readouterr().err
    assert runner._modules("overhead,mlp") == ["overhead", "mlp"] and runner._modules(" mlp , mlp") == ["mlp"]
    assert list(runner.suites(["overhead"], "quick")) == overhead.SUITES


def test_every_module_registered_has_suites_and_full_only_ones_run_only_in_full_mode_or_when_named():
    from bench import MODULES, second_order, system

    for name in MODULES:
        assert list(runner.suites([name], "quick", named=True)), name
    assert system.numba_compile not in list(runner.suites(["system"], "quick"))
    assert system.numba_compile in list(runner.suites(["system"], "full"))
    assert not list(runner.suites(["second_order"], "quick"))  # seconds per round: not in the quick run
    assert list(runner.suites(["second_order"], "quick", named=True)) == second_order.FULL


def test_the_second_order_suite_stops_before_timing_when_a_task_disagrees_with_torch():
    from bench import second_order
    from bench._so_task import Task, allclose

    def setup(torch):
        return Task("a task", lambda: [np.ones(2)], {"torch way": lambda: [np.ones(2) + 1e-3]},
                    allclose("a task", rtol=1e-9, atol=0), goal=1.0)

    with pytest.raises(Mismatch, match="ours and torch way disagree"):
        second_order._suite(setup)(Context(mode="smoke"))


# ---- suites, checked without timing --------------------------------------------------------------------------

@dataclass
class _Untimed(Context):
    """Calls each lane once and counts: these tests are about the checks, not speed."""

    timed: int = 0

    def race(self, contenders, per=1):
        racing = lanes(contenders, self.torch)
        self.timed += len(racing)
        for lane in racing:
            lane.fn()
        return Rounds({lane.name: [1e-3, 1e-3, 1e-3] for lane in racing})


# small_hvp shares big_hvp's code and costs a fraction of it
@pytest.mark.parametrize("suite", [mlp.small_hvp, mlp.big_jvp], ids=lambda s: s.__name__)
def test_the_forward_mode_rows_agree_with_torch_and_a_corrupted_result_stops_them_before_timing(suite):
    torch = try_torch()
    agreed = _Untimed(torch=torch)
    rows = suite(agreed)
    assert agreed.timed >= 3 and rows[0].torch is not None and rows[0].verdict in ("holds", "missed", "within noise")
    for torch_or_not in (torch, None):  # the jvp row also checks J v against <grad, v> without torch
        corrupted = _Untimed(torch=torch_or_not, inject=rows[0].suite)
        if torch_or_not is None and suite is not mlp.big_jvp:
            continue
        with pytest.raises(Mismatch, match="nothing was timed"):
            suite(corrupted)
        assert corrupted.timed == 0


def test_the_hvp_rows_numpy_floor_is_the_hessian_times_v_by_finite_differences_of_the_gradient():
    params, x, onehot, v = mlp.hvp_inputs([12, 8, 7, 3], 5)
    params, v = ({k: a.astype(np.float64) for k, a in d.items()} for d in (params, v))
    x, onehot = x.astype(np.float64), onehot.astype(np.float64)
    grad = lambda p: mlp.numpy_step(p, x, onehot)  # noqa: E731  (the step's floor: the gradient by hand)
    eps = 1e-6
    plus, minus = (grad({k: params[k] + s * eps * v[k] for k in params}) for s in (1, -1))
    hv = mlp.numpy_hvp(params, x, onehot, v)
    for k in params:
        np.testing.assert_allclose(hv[k], (plus[k] - minus[k]) / (2 * eps), rtol=1e-6, atol=1e-8, err_msg=k)


def test_the_l2_suite_compares_with_torch_without_a_warning():
    pytest.importorskip("torch", reason="torch is the oracle; pip install -e '.[test]'")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # float() of a tensor that requires grad warned on every run
        rows = kernels.l2_value_and_gradient(_Untimed(torch=try_torch()))
    assert rows[0].torch is not None


# ---- peak memory in fresh processes ---------------------------------------------------------------------

def test_the_peak_is_the_high_water_mark_above_the_resident_size_before_the_step():
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("peak memory needs Linux")
    # in a fresh process, as the memory rows are: here the heap may already hold 50 MB of resident free memory
    # (earlier tests' arrays), which the step would reuse without raising the high-water mark
    code = ("import numpy as np; from bench import _fresh\n"
            "print(*_fresh._peak(lambda: np.ones(6_250_000).sum()))")  # 50 MB, freed before the step returns
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, **_fresh.MEMORY_ENV}, check=True)
    extra, result = map(float, done.stdout.split())
    assert 49e6 < extra < 60e6 and result == 6_250_000


@pytest.fixture(scope="module")
def hvp_memory_measured(tmp_path_factory):
    frameworks = ["ours", "torch"] if try_torch() is not None else ["ours"]
    return memory.measure("mlp_hvp", frameworks, 0, str(tmp_path_factory.mktemp("hvp_memory")))


def test_the_memory_rows_come_from_fresh_processes_only_after_their_results_agree(hvp_memory_measured):
    torch = try_torch()
    if torch is None:
        pytest.skip("the ratio needs torch")
    rows = memory.judge(Context(torch=torch), "peak extra memory: HVP", hvp_memory_measured, goal=1.0)
    ours, theirs = hvp_memory_measured["ours"], hvp_memory_measured["torch"]
    assert rows[0].unit == "MB" and rows[0].ours == ours[1] > 0 and rows[0].torch == theirs[1] > 0
    assert rows[0].value == pytest.approx(ours[1] / theirs[1]) and rows[0].verdict
    assert f"first step: ours {ours[0]:.1f} MB" in rows[0].note
    with pytest.raises(Mismatch, match="differs from the reference"):
        memory.judge(Context(torch=torch, inject="peak extra memory"), "peak extra memory: HVP",
                     hvp_memory_measured, goal=1.0)
