"""Every command the documentation shows runs: README.md, checkpoints/README.md, docs/*.md and the examples of every
``conhex-zero CMD --help``, each shrunk to seconds and run in a scratch copy of the repository.

Conventions for documentation writers (``tests/doc_commands.py`` implements them):

* **Which lines are commands.** Lines of fenced code blocks tagged ``bash``, ``sh``, ``shell`` or
  ``console`` (in ``console`` blocks only the lines after a ``$`` prompt; the rest is output). A
  ``$`` prompt is dropped, a line ending in ``\\`` continues on the next, ``A && B`` (or ``A; B``)
  are two commands, a trailing ``# comment`` is dropped, ``NAME=VALUE`` prefixes set the
  environment, ``printf 'a\\nb\\n' | CMD`` and ``echo X | CMD`` feed CMD's input, ``CMD > FILE``
  writes its output there. Untagged blocks (pictures of boards, JSON) are not read.
* **What runs.** ``conhex-zero ...`` (in this process, through ``conhex_zero.cli.main.main``;
  exit code 0 expected), ``python SCRIPT ...`` (benchmarks/, train.py) and ``python -m
  conhex_zero ...`` (in a new interpreter, with a time limit). Recognised and not run: ``pip``,
  ``pytest``/``python -m pytest``, ``torchrun``, ``git``, ``cd``, ``export``, ``setsid``,
  ``nohup``, ``tensorboard``, ``source``, ``ruff``, ``apt-get``, ``sudo``, ``.ci/run``. Any other
  program fails the test: mark its block as skipped.
* **Skipping a block.** An HTML comment right before a code block (blank lines between allowed),
  ``<!-- docs-test: skip: REASON -->``, skips the whole block; the reason is required and is shown
  as the skip reason of the case (``pytest -rs``). Use it for commands that cannot run here (an
  external engine such as MoHex, minutes of work that cannot be shrunk), not for CUDA (below).
* **Help examples.** In a subcommand's epilog, the indented lines after a line ``examples:`` up to
  the first blank line; a trailing two-space ``(note)`` is dropped. Other paragraphs (``HexGui:``
  and the like) are not run. All help examples share one scratch copy, in the parser's order of
  subcommands (train, average, arena, ladder, curve, rules, replay, openings, report, play, gtp,
  serve, bench), so an example may read what an earlier one writes.
* **Files.** Every command runs in a fresh scratch copy of the repository: its files, without
  runs/ (as in a fresh clone, there is no runs/ directory). Relative paths read the shipped files
  (checkpoints/, configs/, tests/fixtures/records/) and write into the copy (runs/..., docs/...,
  any --out/--png/--json file), never into the repository. Before it, in the same copy, run the
  earlier commands of its source (README.md, one docs page, or all help examples together) that
  write a path it reads (``--out``, ``--run-dir``, ``--resume``, ``--records``, ``--ladder``,
  ``--png``, ``--svg``, ``--to-sgf``, ``--json FILE.json``, ``> FILE``), and theirs; nothing else
  carries over. So name outputs: ``train --run-dir runs/hex5`` then ``curve runs/hex5``, ``arena
  ... --records runs/m.jsonl`` then ``replay --record runs/m.jsonl``; default names carry the time
  (``runs/hex5-20261122-143925``), and placeholders (``CKPT``, ``runs/<run>``, ``[--compile]``,
  ``/path/to/...``) do not run. An output in a directory that no earlier command creates (``--png
  runs/x.png`` alone) fails as it would in a fresh clone.
* **Shrinking.** Sizes are lowered, never raised, and added where a command's default is large
  (``tests/doc_commands.py``: ``CLI_SHRINK``, ``SCRIPT_SHRINK``, ``TRAIN_SMALL``): arena
  ``--games 4`` (even, so pairs and ``--scoring`` work; hence ``replay --index`` and ``openings
  --index`` are lowered to 3) and ``--gtp-parallel 1`` with GTP players; report ``--games 1
  --opening-sims 2 --random-games 10``; ``--sims 4`` (added to arena, openings, report, bench
  search, and to play/gtp/serve without ``--seconds``); ``--seconds 0.05`` (players' clocks, bench
  measuring time); in any player spec ``:sims=N`` 4, ``:seconds=S`` 0.05, ``mcts-rollout:K`` 1
  (also inside ``gtp:"conhex-zero gtp ..."``); openings ``--repeats 1 --compare-sims 2``; bench
  ``--batch`` 16 (net), 8 (search); average ``--last 1``; ``serve --port 0``; pictures of report
  and openings ``--size 200x200``. ``train`` (and
  ``python train.py``) stops after one iteration (``--stop-after 1``) with the small config of
  ``TRAIN_SMALL`` (tiny self-play, evaluation every iteration, so ``best.pt`` and a checkpoint
  exist); a ``--resume`` keeps the run's stored config and runs one more iteration. ``bench
  selfplay`` gets TRAIN_SMALL's self-play keys. ``python benchmarks/count_ops.py`` shrinks the
  conhex-zero command it profiles.
* **CUDA.** Without a GPU, ``--device cuda`` and ``device=cuda`` run on the CPU (``train`` and
  ``bench selfplay`` get ``--device cpu``, as configs/conhex.yaml says cuda), so GPU commands are
  checked for everything but the device; they need no skip marker. ``--compile`` and
  ``*.compile=true`` (minutes of torch.compile) are marked slow (``pytest -m slow``).
* **Interactive commands.** ``play`` reads ``quit`` (or the piped text), ``gtp`` reads ``quit``;
  ``serve`` runs in its own process with ``--port 0`` (and ``BROWSER=true`` for ``--open``): the
  test asks the page for its state, then stops it with Ctrl-C (SIGINT) and expects exit code 0.

Nothing may be written into the repository: commands run in this process are watched through
Python's audit hooks (open, rename, mkdir, remove ...), and at the end the repository's ``git
status`` must not have changed where the documented commands write (runs/, benchmarks/results/,
their named outputs; other files change while people work).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import traceback
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from doc_commands import (Command, Invocation, classify, help_commands, markdown_commands, outputs, prerequisites,
                          shrink, subcommand)

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300
"""Seconds a command run in a new interpreter may take."""
COPY_IGNORE = shutil.ignore_patterns(".git", "runs", "__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache",
                                     ".mypy_cache", "venv", ".venv", "build", "dist")
DEFAULT_OUTPUTS = ("runs", "benchmarks/results")
"""Where commands write when no option names a file."""


def doc_files() -> list[Path]:
    return [p for p in [ROOT / "README.md", ROOT / "checkpoints" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
            if p.is_file()]


def all_commands() -> list[Command]:
    from conhex_zero.cli.main import build_parser

    found: list[Command] = []
    for path in doc_files():
        found += markdown_commands(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    return found + help_commands(build_parser())


ALL = all_commands()


def is_slow(cmd: Command) -> bool:
    return any(w == "--compile" or re.match(r"^[\w.]*compile=(true|yes|on|1)$", w, re.I) for w in cmd.words)


CASES = [pytest.param(c, id=c.id, marks=[pytest.mark.heavy] if is_slow(c) else [pytest.mark.slow])
         for c in ALL if c.problem or c.skip or classify(c.words)[0] != "not-run"]


# ------------------------------------------------------------------ scratch copies
@dataclass
class Outcome:
    ok: bool
    detail: str


def chain(cmd: Command) -> tuple[Command, ...]:
    """The commands to run, in order, for ``cmd``: those whose outputs it reads, then itself."""
    return (*prerequisites(ALL, cmd), cmd)


KEPT = {tuple(c.id for c in chain(x)[:k]) for x in ALL if not x.skip and not x.problem and classify(x.words)[1]
        for k in range(1, len(chain(x)))}
"""The chains whose end state other commands start from (kept for them in this process)."""


class Scratch:
    """Scratch copies of the repository: a pristine one, and the state after each chain of commands
    that another command starts from (each command runs in a fresh copy of its parent state)."""

    def __init__(self, factory: pytest.TempPathFactory):
        self.factory = factory
        self.states: dict[tuple[str, ...], tuple[Path, list[Outcome]]] = {}

    def copy(self, source: Path | None) -> Path:
        where = self.factory.mktemp("docs-cmd") / "repo"
        if source is None:
            shutil.copytree(ROOT, where, ignore=COPY_IGNORE, symlinks=True)
        else:
            shutil.copytree(source, where, symlinks=True)
        return where

    def after(self, commands: tuple[Command, ...]) -> tuple[Path, list[Outcome]]:
        """A copy in which ``commands`` ran in order (stopping at the first that failed), and their
        outcomes. Kept when another chain starts from it; the caller removes the others."""
        key = tuple(c.id for c in commands)
        if key in self.states:
            return self.states[key]
        if not commands:
            state = (self.copy(None), [])
        else:
            base, outcomes = self.after(commands[:-1])
            where = self.copy(base)
            done = outcomes if outcomes and not outcomes[-1].ok else [*outcomes, run(commands[-1], where)]
            state = (where, done)
        if not commands or key in KEPT:
            self.states[key] = state
        return state


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    return Scratch(tmp_path_factory)


def git_status() -> set[str] | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return set(out.stdout.splitlines()) if out.returncode == 0 else None


def places_written() -> tuple[str, ...]:
    """The repository paths the documented commands would write if they ran there (their named
    outputs, relative to the repository, and the default output folders)."""
    places = set(DEFAULT_OUTPUTS)
    for cmd in ALL:
        inv = None if cmd.skip or cmd.problem else classify(cmd.words)[1]
        for path in outputs(shrink(inv)) if inv else ():
            full = os.path.normpath(ROOT / path)
            if full.startswith(str(ROOT) + os.sep):
                places.add(Path(full).relative_to(ROOT).as_posix())
    return tuple(sorted(places))


@pytest.fixture(scope="session", autouse=True)
def repository_untouched():
    """The test writes nothing into the repository. Commands run in this process are watched as
    they write (see ``watch``); as a backstop for all, the repository's git status must not change
    where the documented commands write (other files change while people work)."""
    before = git_status()
    yield
    after = git_status()
    if before is None or after is None:
        return
    places = places_written()
    new = sorted(line for line in after - before
                 if any(f"{line[3:].strip(chr(34))}/".startswith(f"{place}/") for place in places))
    assert not new, f"the documented commands changed the repository: {new}"


_written: list[str] | None = None
"""While a command runs in this process: the repository paths it wrote (``watch``)."""
WRITE_EVENTS = ("open", "os.rename", "os.mkdir", "os.remove", "os.rmdir", "os.truncate", "os.link", "os.symlink",
                "shutil.rmtree")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _audit(event: str, args: tuple) -> None:
    """An audit hook: note the writes into the repository of the running command (never raises:
    an exception here would stop the operation)."""
    if _written is None or event not in WRITE_EVENTS:
        return
    try:
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            if (not any(c in mode for c in "wax+")) if isinstance(mode, str) else not flags & WRITE_FLAGS:
                return
            paths = [path]
        else:
            paths = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
        for path in paths:
            full = os.path.abspath(os.fsdecode(path))
            if full.startswith(str(ROOT) + os.sep) and "__pycache__" not in full:
                _written.append(full)
    except Exception:
        pass


@contextlib.contextmanager
def watch() -> Iterator[list[str]]:
    """Inside: the repository paths written in this process (Python's audit events for open,
    rename, mkdir, remove ...; bytecode caches aside)."""
    global _written
    if not getattr(sys, "_docs_commands_audit", False):
        sys.addaudithook(_audit)  # for good: an audit hook cannot be removed
        sys._docs_commands_audit = True  # type: ignore[attr-defined]
    _written = []
    try:
        yield _written
    finally:
        _written = None


@contextlib.contextmanager
def inside(path: Path, env: dict[str, str]) -> Iterator[None]:
    """Working directory and environment variables, restored afterwards."""
    cwd, saved = os.getcwd(), {k: os.environ.get(k) for k in env}
    os.chdir(path)
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def base_env() -> dict[str, str]:
    """conhex-zero on PATH (gtp:"conhex-zero gtp ..." players start it), one torch thread, and a
    web browser that opens nothing (serve --open)."""
    bin_dir = str(Path(sys.executable).parent)
    return {"PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1", "BROWSER": "true"}


def shown(inv: Invocation) -> str:
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in inv.env)
    program = {"python-cli": "python -m conhex_zero"}.get(inv.program, inv.program)
    return " ".join(x for x in (env, program, shlex.join(inv.args)) if x)


def tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run(cmd: Command, where: Path) -> Outcome:
    """Run a documented command (shrunk) in the scratch copy ``where``."""
    import torch

    inv = shrink(classify(cmd.words)[1], cuda=torch.cuda.is_available())
    head = f"{cmd.id}: {cmd.text}\n  ran as: {shown(inv)}" + "".join(f"\n  ({n})" for n in dict.fromkeys(inv.notes))
    name = subcommand(list(inv.args))[0] if inv.program != "python" else ""
    t0 = time.perf_counter()
    if inv.program == "conhex-zero" and name == "serve":
        ok, output = run_serve(inv, where)
    elif inv.program == "conhex-zero" and not inv.env:
        ok, output = run_here(inv, where, name)
    else:
        ok, output = run_process(inv, where)
    took = time.perf_counter() - t0
    return Outcome(ok, f"{head}\n  {'passed' if ok else 'FAILED'} in {took:.1f} s\n{tail(output)}")


def run_here(inv: Invocation, where: Path, name: str) -> tuple[bool, str]:
    """``conhex_zero.cli.main.main(args)`` in this process: exit code 0 expected."""
    from conhex_zero.cli.main import main

    stdin = inv.stdin if inv.stdin is not None else ("quit\n" if name in ("play", "gtp") else "")
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with inside(where, {**base_env(), **dict(inv.env)}), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err), watch() as written:
            try:
                code = main(list(inv.args))
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            except Exception:
                code = None
                err.write(traceback.format_exc())
    finally:
        sys.stdin = saved_stdin
    if inv.stdout:
        (where / inv.stdout).write_text(out.getvalue(), encoding="utf-8")
    leaked = f"\nwrote into the repository: {sorted(set(written))}" if written else ""
    return code == 0 and not written, f"exit code {code}{leaked}\n{out.getvalue()[-3000:]}\n{err.getvalue()[-3000:]}"


def process_argv(inv: Invocation) -> list[str]:
    if inv.program == "python":
        return [sys.executable, *inv.args]
    if inv.program == "python-cli":
        return [sys.executable, "-m", "conhex_zero", *inv.args]
    return [sys.executable, "-c", "import sys; from conhex_zero.cli.main import main; sys.exit(main(sys.argv[1:]))",
            *inv.args]


def run_process(inv: Invocation, where: Path) -> tuple[bool, str]:
    """A new interpreter (scripts, ``python -m conhex_zero``, commands with environment variables)."""
    env = {**os.environ, **base_env(), **dict(inv.env)}
    try:
        done = subprocess.run(process_argv(inv), cwd=where, env=env, input=inv.stdin or "", capture_output=True,
                              text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as late:
        return False, f"still running after {TIMEOUT} s\n{late.stdout or ''}\n{late.stderr or ''}"
    if inv.stdout:
        (where / inv.stdout).write_text(done.stdout, encoding="utf-8")
    return done.returncode == 0, f"exit code {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def run_serve(inv: Invocation, where: Path) -> tuple[bool, str]:
    """``serve`` in its own process: wait for its address, ask the page's state, stop it with SIGINT."""
    env = {**os.environ, **base_env(), **dict(inv.env)}
    log = where / f"serve-{os.getpid()}-{time.monotonic_ns()}.log"
    with open(log, "w+", encoding="utf-8") as sink:
        proc = subprocess.Popen(process_argv(inv), cwd=where, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                stderr=subprocess.STDOUT, text=True)
        try:
            url, deadline = None, time.monotonic() + TIMEOUT
            while url is None and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
                found = re.search(r"(http://\S+?)/?\s", log.read_text(encoding="utf-8"))
                url = found.group(1) if found else None
            if url is None:
                return False, f"no address printed (exit code {proc.poll()})\n{log.read_text(encoding='utf-8')}"
            with urllib.request.urlopen(f"{url}/api/state", timeout=60) as reply:
                state = json.loads(reply.read())
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=60)
            text = log.read_text(encoding="utf-8")
            return code == 0 and isinstance(state, dict), f"GET {url}/api/state: {sorted(state)[:8]}; exit " \
                                                          f"code {code} after SIGINT\n{text}"
        except Exception:
            return False, f"{traceback.format_exc()}\n{log.read_text(encoding='utf-8')}"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# ------------------------------------------------------------------ the cases
@pytest.mark.parametrize("cmd", CASES)
def test_documented_command(cmd: Command, scratch: Scratch) -> None:
    """One documented command: it runs (shrunk) and exits with 0, after the earlier commands of its
    source whose outputs it reads, in a fresh scratch copy of the repository."""
    if cmd.problem:
        pytest.fail(f"{cmd.id}: {cmd.problem}: {cmd.text}", pytrace=False)
    if cmd.skip:
        pytest.skip(f"{cmd.id}: docs-test skip: {cmd.skip}")
    kind, _, problem = classify(cmd.words)
    if kind != "run":
        pytest.fail(f"{cmd.id}: {cmd.text}\n  {problem}", pytrace=False)
    commands = chain(cmd)
    where, outcomes = scratch.after(commands)
    if tuple(c.id for c in commands) not in KEPT:
        shutil.rmtree(where.parent, ignore_errors=True)
    for earlier, outcome in zip(commands[:-1], outcomes):
        if not outcome.ok:
            pytest.fail(f"{cmd.id} reads what {earlier.id} writes, and that failed:\n{outcome.detail}", pytrace=False)
    if not outcomes[-1].ok:
        pytest.fail(outcomes[-1].detail, pytrace=False)


# ------------------------------------------------------------------ the extractor itself (fast)
def test_readme_commands_are_found() -> None:
    """The README's quick start is seen: conhex-zero commands, among them a runnable train."""
    readme = [c for c in ALL if c.source == "README.md"]
    runnable = [classify(c.words)[1] for c in readme if not c.skip and not c.problem]
    cli = [inv for inv in runnable if inv is not None and inv.program == "conhex-zero"]
    assert cli, "no conhex-zero command found in README.md"
    assert any(inv.args[:1] == ("train",) and "--config" in inv.args for inv in cli), \
        "README.md's quick start (conhex-zero train --config ...) is not found"


def test_help_examples_are_found() -> None:
    assert any(c.source == "help-train" for c in ALL) and any(c.source == "help-openings" for c in ALL)


def test_skip_marker_needs_a_reason() -> None:
    text = "intro\n\n<!-- docs-test: skip -->\n```bash\nconhex-zero rules\n```\n"
    (found,) = markdown_commands(text, "x.md")
    assert found.problem and "without a reason" in found.problem and found.line == 3
    with pytest.raises(pytest.fail.Exception):
        test_documented_command(found, scratch=None)
    text = "<!-- docs-test: skip: needs MoHex -->\n\n```bash\nconhex-zero arena a gtp:mohex\n```\n"
    (found,) = markdown_commands(text, "x.md")
    assert found.skip == "needs MoHex" and found.problem is None
    (found,) = markdown_commands("<!-- docs-test: skip: why -->\ntext\n```bash\nls\n```\n", "x.md")[:1]
    assert "not right before a code block" in (found.problem or "")


def test_lines_become_commands() -> None:
    text = "\n".join(["```console", "$ conhex-zero rules hex-3   # a comment", "output line", "```", "```bash",
                      "pip install -e . && conhex-zero train \\", "    --config configs/tiny.yaml", "git log",
                      "```", "```", "conhex-zero not-a-bash-block", "```"])
    found = markdown_commands(text, "x.md")
    assert [(c.id, c.words) for c in found] == [
        ("x.md:2", ("conhex-zero", "rules", "hex-3")),
        ("x.md:6", ("pip", "install", "-e", ".")),
        ("x.md:6+1", ("conhex-zero", "train", "--config", "configs/tiny.yaml")),
        ("x.md:8", ("git", "log"))]
    assert [classify(c.words)[0] for c in found] == ["run", "not-run", "run", "not-run"]
    assert classify(("mohex", "--help"))[0] == "unknown"
    kind, inv, _ = classify(("printf", "c3\\nquit\\n", "|", "conhex-zero", "play", "random"))
    assert kind == "run" and inv.stdin == "c3\nquit\n"


def test_shrinking() -> None:
    def small(line: str, cuda: bool = False) -> str:
        return shlex.join(shrink(classify(tuple(shlex.split(line)))[1], cuda=cuda).args)

    assert small("conhex-zero arena a.pt:sims=200 mcts-rollout:1000 --games 100") == \
        "arena --sims 4 a.pt:sims=4 mcts-rollout:1 --games 4"
    assert small("conhex-zero play x.pt:seconds=2 --seconds 3") == "play x.pt:seconds=0.05 --seconds 0.05"
    assert small("conhex-zero bench net --device cuda --batch 4096") == \
        "bench net --seconds 0.05 --device cpu --batch 16"
    assert small("conhex-zero bench net --device cuda --batch 4096", cuda=True) == \
        "bench net --seconds 0.05 --device cuda --batch 16"
    assert small("conhex-zero train --resume runs/x iterations=200") == \
        "train --stop-after 1 --device cpu --resume runs/x iterations=200"
    assert "selfplay.games=4" in small("conhex-zero train --config c.yaml selfplay.games=128").split()
    assert small("python benchmarks/bench_env.py --seconds 3") == \
        "benchmarks/bench_env.py --repeats 1 --seconds 0.05"
    assert small("python benchmarks/count_ops.py --top 5 -- bench env --seconds 3") == \
        "benchmarks/count_ops.py --top 5 bench env --seconds 0.05"
    assert small('conhex-zero arena random "gtp:conhex-zero gtp x.pt --sims 200" --games 2') == \
        "arena --gtp-parallel 1 --sims 4 random 'gtp:conhex-zero gtp x.pt --sims 4' --games 2"
    assert small("conhex-zero replay --record runs/m.jsonl --index 7") == "replay --record runs/m.jsonl --index 3"
    assert small("conhex-zero serve random --port 8765 --open") == "serve --sims 4 random --port 0 --open"


def test_prerequisites() -> None:
    text = "\n".join(["```bash", "conhex-zero train --config c.yaml --run-dir runs/a",
                      "conhex-zero rules hex-3", "conhex-zero train --resume runs/a",
                      "conhex-zero arena runs/a/best.pt random --records runs/m.jsonl",
                      "conhex-zero replay --record runs/m.jsonl", "```"])
    found = markdown_commands(text, "x.md")
    assert [c.line for c in prerequisites(found, found[-1])] == [2, 4, 5]
    assert prerequisites(found, found[1]) == []


def test_writes_into_the_repository_are_seen(tmp_path: Path) -> None:
    target = ROOT / "no-such-directory" / "x.txt"
    with watch() as written:
        with pytest.raises(FileNotFoundError):
            open(target, "w")
        (tmp_path / "elsewhere.txt").write_text("x")
        open(ROOT / "pyproject.toml").close()
    assert written == [str(target)]
    assert "runs" in places_written()
