"""The README as a tested document: every fenced Python block runs, in order, in one namespace, as a user's
session would, on the project's own models (``layers.MLP``, ``resnet18``, a tied language model)."""

import os
import re

import numpy as np
import pytest

import layers
from traversal import total

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()


def python_blocks(text):
    """The fenced ```python blocks of ``text``, in order, dedented (a block may sit inside a list item)."""
    blocks = []
    for indent, body in re.findall(r"^( *)```python\n(.*?)^\1```", text, re.S | re.M):
        blocks.append("\n".join(line[len(indent):] for line in body.splitlines()))
    return blocks


@pytest.fixture(scope="module")
def session():
    """The namespace after running every block; a failing block is named by its number and first line."""
    namespace = {"__name__": "__readme__"}
    for k, block in enumerate(python_blocks(README)):
        try:
            exec(compile(block, f"README.md, python block {k + 1}", "exec"), namespace)
        except Exception as e:
            pytest.fail(f"README python block {k + 1} ({block.splitlines()[0]!r}) raised {type(e).__name__}: {e}")
    return namespace


def test_the_readme_has_blocks_on_the_projects_own_models(session):
    assert len(python_blocks(README)) >= 3
    model = session["model"]
    assert isinstance(model, layers.Chain) and isinstance(model.layers[1], layers.BatchNorm)
    assert isinstance(session["net"], layers.ResNet)
    tied = session["tied"]
    assert tied.layers[0].weight is tied.layers[2].weight


def test_every_block_runs_and_its_claims_hold(session):
    model, tv = session["model"], session["tv"]
    assert isinstance(session["n_params"], int)
    assert session["n_params"] == sum(p.size for p in tv.trainables(model))
    half = session["half"]
    assert all(p.dtype == np.float16 for p in tv.trainables(half))
    assert half.layer1[0].conv1.stride == session["net"].layer1[0].conv1.stride


def test_the_first_programs_gradient_has_none_exactly_off_the_trainables(session):
    """design.md 1: the gradient's array leaves are exactly the model's trainable arrays, in order."""
    tv, grads, model = session["tv"], session["grads"], session["model"]
    leaves = [g for g in tv.trainables(grads)]
    assert [g.shape for g in leaves] == [p.shape for p in tv.trainables(model)]


def test_the_readme_is_a_manual_not_a_diary():
    assert len(README.splitlines()) <= 300
    assert not re.search(r"\b\d+(\.\d+)? ?(ms|µs|us)\b", README), "timings live in bench/RESULTS.md"
    for page in sorted(os.listdir(os.path.join(ROOT, "docs"))):
        if page.endswith(".md"):
            assert f"docs/{page}" in README, f"the manual's table does not link docs/{page}"


def test_the_resnet_parameter_count_equals_torchs():
    torch_reference = pytest.importorskip("layers.torch_reference", reason="torch is the oracle")
    theirs = sum(p.numel() for p in torch_reference.ResNet18(10).parameters())
    assert total(np.size, layers.resnet18(10)) == theirs


def test_links_stay_inside_the_repository_and_the_guides_are_linked():
    links = re.findall(r"\]\(([^)#]+)[^)]*\)", README)
    outside = [link for link in links if not link.startswith("http") and
               not os.path.abspath(os.path.join(ROOT, link)).startswith(ROOT + os.sep)]
    assert not outside, f"README links outside the repository: {outside}"
    for guide in ("docs/pullbacks.md", "bench/RESULTS.md"):
        assert guide in links and os.path.exists(os.path.join(ROOT, guide))


def test_no_project_internal_jargon():
    for phrase in ("seed model", "Optimisers#171", "#171 model", "this session", "its own issue", "shared/design"):
        assert phrase not in README, phrase


def test_the_parameter_count_is_np_size_and_the_readme_says_why_not_len():
    assert "total(np.size, model)" in README and "Julia's `length" in README
    assert not re.search(r"total\(len, model\)[^\n]*parameter count", README)


def test_ci_runs_exactly_the_readmes_test_command():
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read().strip().splitlines()[-1]
    commands = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert ci == commands[1], f".ci/run runs {ci!r}, the README says {commands[1]!r}"
