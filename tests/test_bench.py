"""The benchmark runner: a wrong result stops it before timing; the report writes a table, JSON and a chart."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from bench import memory, mlp, report
from bench._timing import Context, Mismatch, Row, try_torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bench(*args):
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


def test_an_injected_mismatch_fails_before_anything_is_timed():
    done = _bench("--only", "overhead", "--inject-mismatch", "per-op overhead")
    assert done.returncode == 1
    assert "BENCHMARK FAILED before timing" in done.stderr and "nothing was timed" in done.stderr
    assert "suite" not in done.stdout  # no table was printed


def test_a_real_run_prints_the_table():
    done = _bench("--only", "overhead")
    assert done.returncode == 0, done.stderr
    assert "per-op overhead" in done.stdout and "goals held" in done.stdout


def test_report_writes_json_and_a_png(tmp_path):
    rows = [Row("a suite", ours=2e-6, torch=4e-6, value=2.0, goal=2.5, goal_text="≤ 2.5 µs"),
            Row("another", ours=3e-3, torch=1e-3, value=3.0, goal=1.3, goal_text="ours/torch ≤ 1.3"),
            Row("memory", ours=12.0, unit="MB", goal_text="(reported)")]
    text = report.table(rows)
    assert "a suite" in text and "yes" in text and "NO" in text and "12.0 MB" in text
    path = report.write_json(rows, report.machine_facts(None), {"mode": "quick"}, str(tmp_path / "r.json"))
    data = json.load(open(path))
    assert data["rows"][1]["held"] is False and data["machine"]["cores"] == os.cpu_count()
    png = report.write_chart(rows, str(tmp_path / "r.png"))
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_without_torch_it_runs_ours_alone_and_says_how_to_install_it():
    code = ("import sys; sys.modules['torch'] = None\n"
            "from bench.__main__ import main\n"
            "sys.exit(main(['--only', 'overhead']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "torch is not installed" in done.stdout and "pip install" in done.stdout
    assert "per-op overhead" in done.stdout


def test_only_takes_a_comma_list_of_modules_and_names_the_choices_for_a_wrong_one(capsys):
    import pytest

    from bench import __main__ as runner
    from bench import overhead

    with pytest.raises(SystemExit):
        runner.main(["--only", "overhead,nope"])
    assert "unknown module nope; choose a comma list among overhead, mlp, total" in capsys.readouterr().err
    assert runner._modules("overhead,mlp") == [overhead, mlp] and runner._modules(" mlp , mlp") == [mlp]
    assert runner._modules("memory") == [memory]


@dataclass
class _Untimed(Context):
    """Calls each function it is asked to time once, and counts: these tests are about the checks, not speed."""

    timed: int = 0

    def time(self, fn):
        self.timed += 1
        fn()
        return 1e-3


# small_hvp shares big_hvp's code and costs a fraction of it
@pytest.mark.parametrize("suite", [mlp.small_hvp, mlp.big_jvp], ids=lambda s: s.__name__)
def test_the_forward_mode_rows_agree_with_torch_and_a_corrupted_result_stops_them_before_timing(suite):
    torch = try_torch(threads=None)
    agreed = _Untimed(torch=torch)
    rows = suite(agreed)
    assert agreed.timed >= 3 and rows[0].torch is not None and rows[0].held is not None
    for torch_or_not in (torch, None):  # the jvp row also checks J v against <grad, v> without torch
        corrupted = _Untimed(torch=torch_or_not, inject=rows[0].suite)
        if torch_or_not is None and suite is not mlp.big_jvp:
            continue
        with pytest.raises(Mismatch, match="nothing was timed"):
            suite(corrupted)
        assert corrupted.timed == 0


@pytest.fixture(scope="module")
def hvp_memory_measured(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("hvp_memory"))
    return {name: memory.measure(name, folder) for name in memory.FRAMEWORKS}


def test_the_hvp_memory_row_reports_fresh_processes_only_after_their_three_hvps_agree(hvp_memory_measured, tmp_path):
    torch = try_torch(threads=None)
    rows = memory.judge(Context(torch=torch), hvp_memory_measured)
    assert [r.unit for r in rows] == ["MB", "MB"] and rows[0].ours > 0 and rows[0].torch > 0
    assert rows[0].held is not None and rows[1].torch == hvp_memory_measured["torch.func"][0]
    assert rows[0].value == pytest.approx(rows[0].ours / rows[0].torch)  # a ratio: the chart divides by the goal
    assert os.path.exists(report.write_chart(rows, str(tmp_path / "chart.png")))
    with pytest.raises(Mismatch, match="differs from the reference"):
        memory.judge(Context(torch=torch, inject="peak extra memory"), hvp_memory_measured)
