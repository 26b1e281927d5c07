"""The outputs the documentation shows are the ones the shipped files give now.

Two kinds of shown output are checked, by running their command unshrunk (from the repository's
root, in a new process) and comparing every line (trailing spaces aside):

* a ``console`` block's output: the lines after a ``$ COMMAND`` line, up to the next ``$`` line;
* an untagged block preceded by a ``<!-- docs-output: ... -->`` comment: the output of the last
  command of the nearest ``bash`` block before it.

Only deterministic commands are shown this way (one torch thread, fixed seeds); tests/test_docs_commands.py
runs every documented command shrunk, this test the ones whose output is shown.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "checkpoints" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")
OUTPUT_MARKER = re.compile(r"^\s*<!--\s*docs-output\b.*-->\s*$")


def blocks(path: Path) -> list[tuple[str, int, list[str], bool]]:
    """(tag, first line number, lines, marked as output) of each fenced block."""
    out, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marked = k >= 0 and bool(OUTPUT_MARKER.match(lines[k]))
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(m.group(1)))
        out.append((m.group(2), i + 1, lines[i + 1:end], marked))
        i = end + 1
    return out


def shown_outputs() -> list[tuple[str, str, list[str]]]:
    """(where, command, expected output lines) of every shown output."""
    cases = []
    for path in DOCS:
        last_bash: str | None = None
        for tag, line, body, marked in blocks(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if tag in ("bash", "sh", "shell"):
                commands = [x.split("  #")[0].strip() for x in body if x.strip() and not x.lstrip().startswith("#")]
                last_bash = commands[-1] if commands else None
            elif tag == "console":
                command, expected = None, []
                for text in body + ["$ "]:
                    if text.startswith("$ "):
                        if command:
                            cases.append((where, command, expected))
                        command, expected = text[2:].strip(), []
                    else:
                        expected.append(text)
            elif tag == "" and marked:
                assert last_bash, f"{where}: a docs-output block with no bash block before it"
                cases.append((where, last_bash, body))
    return cases


CASES = shown_outputs()


def run(command: str) -> str:
    """A documented command line, its conhex-zero words run with this interpreter."""
    line = re.sub(r"(^|\|\s*)conhex-zero ", lambda m: f"{m.group(1)}{sys.executable} -m conhex_zero.cli.main ",
                  command)
    proc = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_documentation_shows_outputs():
    assert len(CASES) >= 2  # the ConHex board of docs/rules.md, the GTP analysis of docs/play.md


@pytest.mark.parametrize("where, command, expected", CASES, ids=[c[0] for c in CASES])
def test_a_shown_output_is_the_real_one(where, command, expected):
    real = [x.rstrip() for x in run(command).rstrip("\n").split("\n")]
    shown = [x.rstrip() for x in "\n".join(expected).rstrip("\n").split("\n")]
    assert real == shown, f"{where}: `{command}` prints\n" + "\n".join(real)


def test_the_arena_pages_first_example_is_the_published_rows_command():
    """docs/arena.md's first example is the command of the published row it quotes, with that row's
    figure (an example and the figure next to it must match)."""
    import importlib.util
    import json
    import shlex

    spec = importlib.util.spec_from_file_location("published_matches", ROOT / "benchmarks" / "published_matches.py")
    published = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(published)
    row = published.MATCHES["hex5-vs-rollout200"]
    text = (ROOT / "docs" / "arena.md").read_text()
    first = next(b for tag, _, b, _ in blocks(ROOT / "docs" / "arena.md") if tag == "bash")[0]
    words = shlex.split(first)
    assert words[:2] == ["conhex-zero", "arena"] and words[2:4] == row[:2]
    for option in ("--games", "--sims", "--seed"):
        assert words[words.index(option) + 1] == row[row.index(option) + 1], option
    result = json.loads((ROOT / "benchmarks" / "results" / "published_matches.json").read_text())
    wins = result["matches"]["hex5-vs-rollout200"]["wins"][0]
    assert f"({wins} of {row[row.index('--games') + 1]} for the" in text
