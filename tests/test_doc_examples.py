"""Every ```python block of README.md and docs/*.md runs, warning-free.

The blocks of one file are executed in order in one namespace, in a temporary
working directory of their own (doctest style: a later block may use the names
an earlier block of the same file defined). Any warning raised while a block
runs fails it: a :class:`~pp_decomp.components.diagnostics.DiagnosticsWarning` means the
example's fit did not converge, a third-party warning means the example leaks
noise to its readers. A block that is not meant to run (a shell command, an
excerpt) must be fenced as ```bash, ```console or ```text, not ```python.
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pp_decomp.components.diagnostics import DiagnosticsWarning

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON_INFO = re.compile(r"^(\{code-block\}\s*)?(python3?|py)\b", re.IGNORECASE)
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def fenced_blocks(text: str) -> list[tuple[str, str, int]]:
    """Every fenced block of a markdown text: ``(info string, code, first line number)``."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, fence, info = len(m["indent"]), m["fence"], m["info"].strip()
        start, body = i + 1, []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close["fence"].startswith(fence) and not close["info"].strip():
                break
            text_line = lines[i]
            cut = len(text_line) - len(text_line.lstrip())
            body.append(text_line[min(indent, cut) :])
            i += 1
        blocks.append((info, "\n".join(body) + "\n", start + 1))
        i += 1
    return blocks


def python_blocks(path: Path) -> list[tuple[str, int]]:
    """The ```python blocks of ``path``: ``(code, first line number)``."""
    return [
        (code, line)
        for info, code, line in fenced_blocks(path.read_text(encoding="utf-8"))
        if PYTHON_INFO.match(info)
    ]


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


CASES = [
    pytest.param(path, k, id=f"{_rel(path)}-block{k}")
    for path in DOC_FILES
    for k in range(len(python_blocks(path)))
]


@dataclass
class FileRun:
    """One file's shared namespace, working directory and progress."""

    workdir: Path
    namespace: dict = field(default_factory=lambda: {"__name__": "__doc_example__"})
    done: int = 0
    failed: int | None = None


@pytest.fixture(scope="module")
def file_runs(tmp_path_factory):
    runs: dict[Path, FileRun] = {}

    def get(path: Path) -> FileRun:
        if path not in runs:
            runs[path] = FileRun(tmp_path_factory.mktemp(path.stem.replace(".", "_")))
        return runs[path]

    return get


def run_block(path: Path, k: int, run: FileRun) -> float:
    """Execute block ``k`` of ``path`` in the file's namespace, every warning an error."""
    code, line = python_blocks(path)[k]
    compiled = compile("\n" * (line - 1) + code, f"{_rel(path)} (block {k})", "exec")
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # third-party warnings too
            warnings.simplefilter("error", DiagnosticsWarning)
            exec(compiled, run.namespace)
    except BaseException:
        run.failed = k
        raise
    finally:
        run.done = k + 1
    return time.perf_counter() - start


@pytest.mark.slow  # compiles a nutpie model (~20 s)
@pytest.mark.parametrize(("path", "k"), CASES)
def test_doc_block_runs(path, k, file_runs, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    run = file_runs(path)
    monkeypatch.chdir(run.workdir)
    if run.failed is not None and run.failed < k:
        pytest.fail(f"block {run.failed} of {_rel(path)} failed, and later blocks may need it")
    for earlier in range(run.done, k):  # a block selected alone: its file's earlier blocks first
        run_block(path, earlier, run)
    seconds = run_block(path, k, run)
    print(f"{_rel(path)} block {k}: {seconds:.1f} s")


@pytest.mark.slow
def test_the_readmes_first_example_runs_twice_in_one_process(tmp_path, monkeypatch):
    """As a notebook cell run again: the checkpoint is continued, not refused."""
    monkeypatch.chdir(tmp_path)
    code, line = python_blocks(ROOT / "README.md")[0]
    compiled = compile("\n" * (line - 1) + code, "README.md (block 0)", "exec")
    namespace = {"__name__": "__doc_example__"}
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exec(compiled, namespace)
    assert namespace["ds"].sizes["iteration"] == 15


def test_blocks_are_found():
    """The collector sees the README's examples (so the test above cannot pass vacuously)."""
    readme = python_blocks(ROOT / "README.md")
    assert len(readme) >= 1
    assert all("import pp_decomp" in code or "ppd." in code for code, _ in readme)
    text = "````md\n```python\nx = 1\n```\n````\n  ```python\n  for i in a:\n      y = 2\n  ```\n"
    assert [(i, c) for i, c, _ in fenced_blocks(text)] == [
        ("md", "```python\nx = 1\n```\n"),
        ("python", "for i in a:\n    y = 2\n"),
    ]
