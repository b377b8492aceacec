"""``python -m bench.accelerations``: its A/B rounds, its table of switches, and a smoke run.

Nothing here measures speed: the rounds are scripted, and the smoke run's figures are not read."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from bench import accelerations

ROOT = pathlib.Path(__file__).resolve().parents[2]


class _Scripted:
    """A stand-in for a child process: answers each workload with the next of its scripted times."""

    def __init__(self, name, times, log):
        self.name, self.times, self.log = name, list(times), log

    def time(self, workload):
        self.log.append(self.name)
        return self.times.pop(0)


def test_rounds_alternate_which_process_goes_first_and_give_off_over_on():
    log = []
    on, off = _Scripted("on", [1.0, 2.0, 4.0], log), _Scripted("off", [3.0, 3.0, 2.0], log)
    assert accelerations.ratios(on, off, "mlp_step", 3) == [3.0, 1.5, 0.5]
    assert log == ["on", "off", "off", "on", "on", "off"]


@pytest.fixture(scope="module")
def switched_off():
    """``{name: on?}`` of every acceleration in a fresh process with all of the table's names switched off."""
    names = ",".join(n for n in accelerations.ACCELERATIONS if n != "all")
    code = ("import json, autodiff, layers, optimisers, traversal\n"
            "print(json.dumps({n: a.on for n, a in autodiff.accelerations().items()}))")
    env = {**os.environ, "AUTODIFF_ACCEL_OFF": names, "AUTODIFF_REFERENCE": ""}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", [n for n, env in accelerations.ACCELERATIONS.items() if env and n != "all"])
def test_every_switch_in_the_table_turns_its_acceleration_off(name, switched_off):
    assert accelerations.ACCELERATIONS[name] == {"AUTODIFF_ACCEL_OFF": name}
    assert switched_off[name] is False, f"{name}: AUTODIFF_ACCEL_OFF={name} leaves it on; the row would measure nothing"


def test_unknown_names_are_refused_with_the_choices():
    with pytest.raises(SystemExit):
        accelerations.parse(["--only", "layouts,warp_drive"])


def test_a_smoke_run_prints_a_row_per_acceleration_and_workload():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "bench.accelerations", "--smoke", "--only", "layouts,record",
                           "--workloads", "total"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["acceleration", "workload", "off/on"]
    assert any(line.startswith("layouts") and "optimisers171" in line and "of the time" in line for line in lines)
    assert any(line.startswith("record") and "optimisers171" in line and "of the time" in line for line in lines)
