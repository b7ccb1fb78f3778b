"""The Python examples of the documentation run: every ```python block with ``>>>`` prompts
in README.md, python/README.md and the book (docs/) is a doctest, run from the repository's
root (where the examples' paths start), against the installed package."""

import doctest
import os
import re

import pytest

from conftest import REPO

PAGES = sorted(
    [REPO / "README.md", REPO / "python" / "README.md"] + list((REPO / "docs").rglob("*.md"))
)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(page):
    return [b for b in BLOCK.findall(page.read_text()) if ">>>" in b]


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: str(p.relative_to(REPO)))
def test_python_examples_of_the_docs_run(page, monkeypatch):
    monkeypatch.chdir(REPO)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    globs = {}  # one namespace per page: its blocks build on each other
    for i, b in enumerate(blocks(page)):
        test = parser.get_doctest(b, globs, f"{page.name} block {i + 1}", str(page), 0)
        runner.run(test, clear_globs=False)
        globs = test.globs
    r = runner.summarize(verbose=False)
    assert r.attempted > 0
    assert r.failed == 0, f"{r.failed} of {r.attempted} examples of {page} failed (above)"


def test_the_pages_have_examples():
    assert sum(len(blocks(p)) for p in PAGES) >= 2
