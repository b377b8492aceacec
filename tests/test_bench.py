"""The benchmark runner: a wrong result stops it before timing; the report writes a table, JSON and a chart."""

import json
import os
import subprocess
import sys

from bench import report
from bench._timing import Row

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
    from bench import mlp, overhead

    with pytest.raises(SystemExit):
        runner.main(["--only", "overhead,nope"])
    assert "unknown module nope; choose a comma list among overhead, mlp, total" in capsys.readouterr().err
    assert runner._modules("overhead,mlp") == [overhead, mlp] and runner._modules(" mlp , mlp") == [mlp]
