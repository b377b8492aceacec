"""The guides in ``docs/`` as tested documents: every fenced Python block of a page runs, in order, in one
namespace per page, as a reader's session would. (Blocks written as ``>>>`` sessions are doctests, which pytest
runs through ``--doctest-glob``; this runs the others.)"""

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")


def python_blocks(text):
    """The fenced ```python blocks of ``text``, in order, dedented (a block may sit inside a list item)."""
    blocks = []
    for indent, body in re.findall(r"^( *)```python\n(.*?)^\1```", text, re.S | re.M):
        blocks.append("\n".join(line[len(indent):] for line in body.splitlines()))
    return blocks


def script_blocks(text):
    """The blocks a reader would paste into Python: those that are not ``>>>`` sessions."""
    return [b for b in python_blocks(text) if not b.lstrip().startswith(">>>")]


def pages():
    return sorted(name for name in os.listdir(DOCS) if name.endswith(".md"))


def read(name):
    with open(os.path.join(DOCS, name), encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("name", [n for n in pages() if script_blocks(read(n))])
def test_every_block_of_the_page_runs_in_order(name):
    namespace = {"__name__": f"__docs_{name[:-3]}__"}
    for k, block in enumerate(script_blocks(read(name))):
        try:
            exec(compile(block, f"docs/{name}, python block {k + 1}", "exec"), namespace)
        except Exception as e:
            pytest.fail(f"docs/{name} python block {k + 1} ({block.splitlines()[0]!r}) raised "
                        f"{type(e).__name__}: {e}")


def test_every_page_is_linked_from_the_readme():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    missing = [name for name in pages() if f"docs/{name}" not in readme]
    assert not missing, f"pages the README's table of contents does not link: {missing}"


def prose(text):
    """``text`` without its fenced blocks and inline code, where ``a[0](b)`` is code, not a link."""
    text = re.sub(r"^( *)```.*?^\1```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def test_links_between_pages_point_at_files_that_exist():
    for name in pages():
        for link in re.findall(r"\]\(([^)#:]+)[^)]*\)", prose(read(name))):
            target = os.path.normpath(os.path.join(DOCS, link))
            assert os.path.exists(target), f"docs/{name} links to {link}, which does not exist"
