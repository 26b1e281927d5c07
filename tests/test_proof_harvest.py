"""``benchmarks/proof_harvest.py``: a book's exact results against the same book at an earlier commit
(the check of a proof run whose board's table is held out). Here on a copy of the shipped Hex 4x4 book
in a fresh git repository, with results appended after its commit: one on the old book's side and one
against it, one of them at a position the old book called decided (the results are made up: the
script compares, it does not judge)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conhex_zero.book import store
from conhex_zero.book.folder import open_book
from conhex_zero.games.game import parse_game

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "proof_harvest.py"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"}).stdout


def test_the_harvest_counts_results_on_and_against_the_old_books_side(tmp_path):
    repo = tmp_path / "repo"
    book = repo / "books" / "hex4"
    shutil.copytree(ROOT / "checkpoints" / "books" / "hex4-l3h32", book)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "the rule")
    rule = _git(repo, "rev-parse", "HEAD").strip()
    old = open_book(book).book
    deep = sorted((k for k, n in old.nodes.items() if len(n.line) == 2 and abs(n.value) > 0.05), key=lambda k: old.nodes[k].line)
    decided = next(k for k in deep if old.decided(k))
    other = next(k for k in deep if k != decided and not old.decided(k))
    side = lambda k: 1 if old.nodes[k].value > 0 else -1  # noqa: E731
    store.append(book, [store.exact_entry(decided, side(decided)), store.exact_entry(other, -side(other))])
    out = tmp_path / "h.json"
    run = subprocess.run([sys.executable, str(SCRIPT), str(book), "--since", rule, "--json", str(out)],
                         capture_output=True, text=True, cwd=repo, timeout=300)
    assert run.returncode == 0, run.stderr
    result = json.loads(out.read_text())
    assert result["new_exact"] == 2 and result["on_old_side"] == 1 and result["depths"] == [2]
    (against,) = result["against_old_side"]
    assert against["exact"] == -side(other) and len(against["line"].split()) == 2
    (met,) = result["decided_claims_met"]
    assert met["right"] and result["decided_right"] == 1
    # a reply whose position is lost for its mover (the opener) wins the opening for the replier
    losses = {parse_game("hex-4").action_name(old.nodes[k].line[0]) for k, r in ((decided, side(decided)), (other, -side(other))) if r < 0}
    assert losses and {p["line"] for p in result["openings_proven"]} == losses
    assert all(p["proven"] == 1 for p in result["openings_proven"])
    assert "1 on the old book's side" in run.stdout and "against the old book" in run.stdout
    bad = subprocess.run([sys.executable, str(SCRIPT), str(book), "--since", "no-such-commit", "--json", str(out)],
                         capture_output=True, text=True, cwd=repo, timeout=300)
    assert bad.returncode != 0 and "no-such-commit" in bad.stderr and "Traceback" not in bad.stderr
