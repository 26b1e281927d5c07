"""Fault probe (issue 25): every way a hostile user or a failing machine broke a run, tried again.

    python benchmarks/fault_probe.py             # every case (a few minutes on 2 CPU cores)
    python benchmarks/fault_probe.py --quick     # without the slow ones (torchrun, disk full, kills)
    python benchmarks/fault_probe.py --only 1,6  # the cases of some of the issue's items

Each case runs the real command (``conhex-zero ...`` in a subprocess, or ``cli.main.main`` in this
process where a subprocess adds nothing but start-up time) on small runs of configs/tiny.yaml and
checks what must hold: a one-line error (exit status 2, one line on stderr, no traceback) that says
what the issue asks for, at once; or, for the data cases, a run directory equal to an uninterrupted
run's (weights, metrics, ladder, files). Prints one line per case and the totals: cases tried, held
and failed (exit status 1 when any failed). Disk-full cases mount small tmpfs file systems and need
root; without it they are reported as skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"
SHORT = ["iterations=3", "eval.games=2", "eval.previous_games=2"]
ENV = {**{k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")},
       "OMP_NUM_THREADS": "1"}
DEEP_JSON = "[" * 1000 + "]" * 1000
NINES = "9" * 5000


class Failed(Exception):
    """A case that did not hold; the message says how."""


@dataclass
class Result:
    code: int | None  # None: the command raised (a traceback)
    out: str
    err: str
    seconds: float


@dataclass
class Case:
    item: int
    name: str
    run: Callable[[], None]
    slow: bool = False


CASES: list[Case] = []


def case(item: int, name: str, slow: bool = False):
    def register(fn: Callable[[], None]) -> Callable[[], None]:
        CASES.append(Case(item, name, fn, slow))
        return fn
    return register


# ---------------------------------------------------------------- running commands
def cli(*args: str, stdin: str = "", timeout: float = 300, memory: int | None = None) -> Result:
    """``conhex-zero ARGS`` in a subprocess (``memory``: an address-space limit in bytes)."""
    def limit() -> None:
        if memory:
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    start = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "conhex_zero.cli.main", *args], input=stdin, capture_output=True,
                           text=True, timeout=timeout, env=ENV, cwd=ROOT, preexec_fn=limit if memory else None)
    except subprocess.TimeoutExpired as err:
        return Result(-1, str(err.stdout or ""), f"timed out after {timeout:g} s", time.perf_counter() - start)
    return Result(p.returncode, p.stdout, p.stderr, time.perf_counter() - start)


def inproc(*args: str) -> Result:
    """``conhex-zero ARGS`` in this process; an exception that escapes ``main`` is a traceback."""
    from conhex_zero.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 2
        except BaseException:
            err.write(traceback.format_exc())
            code = None
    torch.set_num_threads(1)
    return Result(code, out.getvalue(), err.getvalue(), time.perf_counter() - start)


def one_line_error(r: Result, *words: str, within: float | None = None) -> None:
    """Exit status 2, one line on stderr without a traceback, holding ``words``, in time."""
    lines = r.err.strip().splitlines()
    if r.code != 2:
        raise Failed(f"exit status {r.code}, not 2: {(lines or [''])[-1][:200]}")
    if len(lines) != 1 or "Traceback" in r.err:
        raise Failed(f"{len(lines)} lines on stderr: {' | '.join(lines[:3])[:300]}")
    for w in words:
        if w not in r.err:
            raise Failed(f"the error does not say {w!r}: {lines[0][:300]}")
    if within is not None and r.seconds > within:
        raise Failed(f"took {r.seconds:.1f} s (at most {within:g})")


def succeeded(r: Result) -> None:
    if r.code != 0:
        raise Failed(f"exit status {r.code}: {r.err.strip()[-300:]}")


# ---------------------------------------------------------------- runs to compare
WORK = Path(tempfile.mkdtemp(prefix="fault-probe-"))


def fresh(name: str) -> Path:
    path = WORK / name
    shutil.rmtree(path, ignore_errors=True)
    return path


_cache: dict[str, Path] = {}


def whole_run() -> Path:
    """An uninterrupted run of tiny.yaml (SHORT), the reference of every data case."""
    if "whole" not in _cache:
        succeeded(cli("train", "--config", str(TINY), "--run-dir", str(fresh("whole")), "--quiet", *SHORT))
        _cache["whole"] = WORK / "whole"
    return _cache["whole"]


def saved_run() -> Path:
    """The same run stopped after its first iteration (with its state)."""
    if "saved" not in _cache:
        succeeded(cli("train", "--config", str(TINY), "--run-dir", str(fresh("saved")), "--quiet", "--stop-after",
                      "1", *SHORT))
        _cache["saved"] = WORK / "saved"
    return _cache["saved"]


def copy_of_saved(name: str) -> Path:
    target = fresh(name)
    shutil.copytree(saved_run(), target)
    return target


def same_run(a: Path, b: Path) -> None:
    """``b`` holds the training of ``a``: weights, metrics (less times and speeds), ladder, files."""
    from conhex_zero.ladder.store import Ladder
    from conhex_zero.nn.checkpoint import load_checkpoint

    x, y = load_checkpoint(a / "latest.pt").model.state_dict(), load_checkpoint(b / "latest.pt").model.state_dict()
    if not all(torch.equal(x[k], y[k]) for k in x):
        raise Failed(f"{b}: the weights differ from an uninterrupted run's")

    def metrics(run: Path) -> list[dict]:
        rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        return [{k: v for k, v in r.items() if not (k.startswith("time") or k.endswith("_per_s"))} for r in rows]

    if metrics(a) != metrics(b):
        raise Failed(f"{b}: metrics.jsonl differs ({len(metrics(b))} lines, uninterrupted {len(metrics(a))})")
    if Ladder.open(a).results != Ladder.open(b).results:
        raise Failed(f"{b}: ladder.jsonl differs")
    names = [sorted(str(p.relative_to(r)) for p in r.rglob("*") if p.is_file() and "tb" not in p.parts) for r in (a, b)]
    if names[0] != names[1]:
        raise Failed(f"{b}: other files ({sorted(set(names[0]) ^ set(names[1]))})")


def holder_pid(run: Path, proc: subprocess.Popen, timeout: float = 120) -> int:
    from conhex_zero.train.run_lock import FILENAME, read_holder

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holder = read_holder(run / FILENAME)
        if holder is not None:
            return holder.pid
        if proc.poll() is not None:
            raise Failed(f"the first process ended without taking the lock: {proc.communicate()[1][-300:]}")
        time.sleep(0.02)
    raise Failed("the first process never took the lock")


def popen(*args: str, torchrun: bool = False, port: int = 0) -> subprocess.Popen:
    cmd = ([sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2", "--rdzv-backend=c10d",
            f"--rdzv-endpoint=127.0.0.1:{port}", "train.py"] if torchrun
           else [sys.executable, "-m", "conhex_zero.cli.main", "train"])
    return subprocess.Popen([*cmd, *args], env=ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ==================================================================== 1. one owner
@case(1, "two train --resume started together: one runs, one refused at once naming it; run exact", slow=True)
def two_resumes() -> None:
    for trial in range(2):
        run = copy_of_saved(f"two-resumes-{trial}")
        procs = [popen("--resume", str(run), "--quiet") for _ in range(2)]
        started = time.monotonic()
        ends: list[float] = [0.0, 0.0]
        outs = []
        for k, p in enumerate(procs):
            outs.append(p.communicate(timeout=600))
            ends[k] = time.monotonic() - started
        codes = [p.returncode for p in procs]
        if sorted(codes) != [0, 2]:
            raise Failed(f"trial {trial}: exit statuses {codes}, not one 0 and one 2")
        loser, winner = (0, 1) if codes[0] == 2 else (1, 0)
        err = outs[loser][1].strip()
        want = f"is in use: pid {procs[winner].pid} on host {socket.gethostname()}"
        if want not in err or len(err.splitlines()) != 1:
            raise Failed(f"trial {trial}: the refusal does not name the holder: {err[:300]}")
        if ends[loser] > 30:
            raise Failed(f"trial {trial}: the refused process took {ends[loser]:.0f} s")
        same_run(whole_run(), run)


@case(1, "a second train --resume while one runs: refused at once, nothing changed", slow=True)
def resume_while_running() -> None:
    run = copy_of_saved("while-running")
    first = popen("--resume", str(run), "--quiet")
    pid = holder_pid(run, first)
    start = time.monotonic()
    others = [subprocess.Popen([sys.executable, "-m", "conhex_zero.cli.main", "train", *args], env=ENV, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for args in (["--resume", str(run), "--quiet"], ["--config", str(TINY), "--run-dir", str(run), "--quiet"])]
    results = [Result(p.wait(timeout=120), *p.communicate(), time.monotonic() - start) for p in others]
    one_line_error(results[0], f"is in use: pid {pid} on host {socket.gethostname()}", within=30)
    # A new run on the same directory: refused by the lock, or (had the first already ended) by its state.
    one_line_error(results[1], f"is in use: pid {pid}" if "is in use" in results[1].err else "already holds a run",
                   within=30)
    first.communicate(timeout=600)
    if first.returncode != 0:
        raise Failed("the first process failed")
    same_run(whole_run(), run)


@case(1, "kill -9 leaves the lock; the resume takes it over with a note and ends exact", slow=True)
def killed_holder() -> None:
    run = fresh("killed")
    proc = popen("--config", str(TINY), "--run-dir", str(run), "--quiet", *SHORT)
    pid = holder_pid(run, proc)
    deadline = time.monotonic() + 300
    while not (run / "state" / "train_state.pt").is_file() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.kill()
    proc.communicate()
    r = cli("train", "--resume", str(run), "--quiet")
    succeeded(r)
    if f"was left by pid {pid} on host {socket.gethostname()}" not in r.err:  # a warning: on stderr (issue 36)
        raise Failed(f"no note about the stale lock on stderr: {r.err[:300]}")
    same_run(whole_run(), run)


@case(1, "a second torchrun job on a run that a torchrun job trains: refused at once, naming the holder", slow=True)
def second_torchrun_job() -> None:
    run = fresh("torchrun")
    small = ["iterations=50", "eval.games=2", "eval.previous_games=2", "eval.neighbours=0", "eval.references=random"]
    first = popen("--config", str(TINY), "--run-dir", str(run), "--quiet", *small, torchrun=True, port=29621)
    try:
        pid = holder_pid(run, first, timeout=240)
        second = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2", "--rdzv-backend=c10d",
             "--rdzv-endpoint=127.0.0.1:29622", "train.py", "--resume", str(run), "--quiet"],
            env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=300)
        if first.poll() is not None:
            raise Failed("the first job ended before the second was refused")
    finally:
        first.terminate()
        first.communicate(timeout=120)
    # Each rank refuses before torch is imported (issue 36), so the first refusal ends the job: torchrun
    # stops the other rank, which may not have said anything yet. Every refusal names the holder.
    refusals = [line for line in second.stderr.splitlines() if "is in use" in line]
    if second.returncode == 0 or not refusals or not all(f"pid {pid} on host" in x for x in refusals):
        raise Failed(f"status {second.returncode}, refusals {refusals[:2]}")


# ==================================================================== 2. config.yaml
def _resume_with_config(name: str, text: str) -> Result:
    run = copy_of_saved(name)
    (run / "config.yaml").write_text(text)
    r = inproc("train", "--resume", str(run), "--quiet")
    _cache["last"] = run
    return r


def _stored_settings_kept(r: Result) -> None:
    """Either refused naming keys, or resumed with the stored config (never defaults)."""
    import yaml

    run = _cache["last"]
    if r.code == 2:
        one_line_error(r, "differs from the config stored in")
        return
    succeeded(r)
    if "using the config stored in" not in r.err:
        raise Failed("resumed without a note")
    config = yaml.safe_load((run / "config.yaml").read_text())
    if (config["replay"]["capacity"], config["optim"]["lr"], config["eval"]["games"]) != (2000, 0.003, 2):
        raise Failed(f"settings changed: {config['replay']['capacity']}, {config['optim']['lr']}")
    same_run(whole_run(), run)


@case(2, "config.yaml cut in half: the stored settings, never defaults")
def config_half() -> None:
    text = (saved_run() / "config.yaml").read_text()
    _stored_settings_kept(_resume_with_config("config-half", text[: len(text) // 2]))


@case(2, "config.yaml cut after its first lines: the stored settings")
def config_lines() -> None:
    lines = (saved_run() / "config.yaml").read_text().splitlines(keepends=True)
    _stored_settings_kept(_resume_with_config("config-lines", "".join(lines[:12])))


@case(2, "config.yaml empty: the stored settings, no misleading 'cannot resume with game=hex-4'")
def config_empty() -> None:
    r = _resume_with_config("config-empty", "")
    if "cannot resume with game" in r.err:
        raise Failed(r.err.strip()[:200])
    _stored_settings_kept(r)


@case(2, "config.yaml edited: refused naming the keys, nothing changed")
def config_edited() -> None:
    text = (saved_run() / "config.yaml").read_text().replace("capacity: 2000", "capacity: 50000")
    r = _resume_with_config("config-edited", text)
    one_line_error(r, "replay.capacity (2000 stored, 50000 in the file)")


# ==================================================================== 3. checksums
def _flips(path: Path, load: Callable[[Path], object], count: int) -> None:
    data = path.read_bytes()
    target = WORK / ("flip-" + path.name)
    offsets = sorted({round(i * (len(data) - 16) / (count - 1)) for i in range(count)}
                     | set(range(len(data) - 120, len(data) - 15, 7)))
    missed = []
    for offset in offsets:
        damaged = bytearray(data)
        for i in range(offset, offset + 16):
            damaged[i] ^= 0xFF
        target.write_bytes(bytes(damaged))
        try:
            load(target)
            missed.append(offset)
        except ValueError as err:
            if str(target) not in str(err) or "\n" in str(err):
                raise Failed(f"offset {offset}: {str(err)[:200]}")
    if missed:
        raise Failed(f"{len(missed)} of {len(offsets)} flips loaded silently (e.g. offset {missed[0]})")


@case(3, "16 bytes flipped at 200 offsets of train_state.pt: each detected, the file named")
def flip_state() -> None:
    from conhex_zero.train.run_dir import read_state

    _flips(saved_run() / "state" / "train_state.pt", lambda p: read_state(p, ("format", "model")), 200)


@case(3, "16 bytes flipped at 200 offsets of a checkpoint: each detected, the file named")
def flip_checkpoint() -> None:
    from conhex_zero.nn.checkpoint import load_checkpoint

    _flips(saved_run() / "latest.pt", load_checkpoint, 200)


@case(3, "flipped optimiser moments / replay / generator bytes: train --resume refuses, naming the file")
def flip_cli() -> None:
    for where in (0.3, 0.6, 0.95):
        run = copy_of_saved("flip-cli")
        state = run / "state" / "train_state.pt"
        data = bytearray(state.read_bytes())
        offset = int(len(data) * where)
        for i in range(offset, offset + 16):
            data[i] ^= 0xFF
        state.write_bytes(bytes(data))
        one_line_error(inproc("train", "--resume", str(run), "--quiet"), f"{state} is damaged")


# ==================================================================== 4. SGF
@case(4, "SGF of 100k and 300k nodes parses in linear time; 5 MB is refused at once")
def sgf_sizes() -> None:
    from conhex_zero.records import RecordError, parse_records
    from conhex_zero.records.sgf import parse_sgf

    times = {}
    for n in (25_000, 100_000, 300_000):
        text = "(;FF[4]GM[11]SZ[5]" + ";B[a1]" * n + ")"
        start = time.perf_counter()
        parse_sgf(text)
        times[n] = time.perf_counter() - start
    if times[300_000] > 30 or times[300_000] > 20 * times[25_000]:
        raise Failed(f"parse times {times}")
    path = WORK / "huge.sgf"
    path.write_text("(;FF[4]GM[11]SZ[5]" + ";B[a1]" * 900_000 + ")")
    one_line_error(inproc("replay", "--record", str(path)), "more than the 4,000,000", within=10)
    try:
        parse_records("(;FF[4]GM[11]SZ[5]" + ";B[a1]" * 900_000 + ")", "x")
        raise Failed("a 5 MB SGF was parsed")
    except RecordError:
        pass


# ==================================================================== 5. size keys
@case(5, "selfplay.max_considered=1000000000 and other keys beyond the game: refused at once")
def size_keys() -> None:
    for override, words in (("selfplay.max_considered=1000000000", "selfplay.max_considered: at most"),
                            ("selfplay.temperature_moves=1000000000", "selfplay.temperature_moves: at most"),
                            ("selfplay.random_first_moves=1000", "selfplay.random_first_moves: at most"),
                            ("eval.games=1000000000", "eval.games"), ("threads=1000000000", "threads: at most")):
        one_line_error(inproc("train", "--config", str(TINY), "--run-dir", str(fresh("size")), "--quiet", override),
                       words, within=10)


# ==================================================================== 6. disk full
def _mount(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@case(6, "disk full at several moments: 'no space left on MOUNT', state consistent, resume exact", slow=True)
def disk_full() -> None:
    if os.geteuid() != 0:
        raise Skipped("needs root to mount a small tmpfs")
    for size in ("64k", "150k", "250k", "330k"):
        mount = WORK / f"disk-{size}"
        if not _mount(mount, size):
            raise Skipped("cannot mount tmpfs here")
        try:
            run = mount / "run"
            r = cli("train", "--config", str(TINY), "--run-dir", str(run), "--quiet", *SHORT)
            try:
                one_line_error(r, f"no space left on {mount} (writing ")
            except Failed as why:
                raise Failed(f"tmpfs of {size}: {why}") from None
            subprocess.run(["mount", "-o", "remount,size=64m", str(mount)], check=True)
            if (run / "state" / "train_state.pt").is_file():
                succeeded(cli("train", "--resume", str(run), "--quiet"))
            else:  # nothing was saved: the same command again
                succeeded(cli("train", "--config", str(TINY), "--run-dir", str(run), "--quiet", *SHORT))
            if list(run.rglob("*.tmp")):
                raise Failed(f"{size}: .tmp files left")
            same_run(whole_run(), run)
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)


# ==================================================================== 7. damaged states
def _damaged_state(name: str, change: Callable[[dict], None], words: str) -> Callable[[], None]:
    def run_case() -> None:
        from conhex_zero.files import file_seal

        run = copy_of_saved("damaged")
        state = run / "state" / "train_state.pt"
        data = torch.load(state, weights_only=True)
        change(data)
        file_seal.save(data, state)
        one_line_error(inproc("train", "--resume", str(run), "--quiet"), f"{state} is damaged", words, within=20)
    return run_case


def _set(path: list, value) -> Callable[[dict], None]:
    def change(d: dict) -> None:
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value
    return change


def _drop(path: list) -> Callable[[dict], None]:
    def change(d: dict) -> None:
        for key in path[:-1]:
            d = d[key]
        del d[path[-1]]
    return change


for _name, _change, _words in [
    ("missing replay", _drop(["replay"]), "replay is missing"),
    ("missing games in progress", _drop(["selfplay", "state"]), "selfplay.state is missing"),
    ("missing optimiser state", _drop(["learner", "optimizer", "state"]), "learner.optimizer.state is missing"),
    ("missing generator", _drop(["learner", "generator"]), "learner.generator is missing"),
    ("replay size 10^9", _set(["replay", "size"], 10**9), "replay.size"),
    ("replay capacity 10^9", _set(["replay", "capacity"], 10**9), "replay.capacity"),
    ("replay rows of another shape", _set(["replay", "ownership"], torch.zeros(3, 3, dtype=torch.int8)),
     "replay.ownership has shape"),
    ("generator of the wrong size", _set(["learner", "generator"], torch.zeros(10, dtype=torch.uint8)),
     "learner.generator has shape [10]"),
    ("self-play generator of the wrong size", _set(["selfplay", "generator"], torch.zeros(9, dtype=torch.uint8)),
     "selfplay.generator"),
    ("torch generator of the wrong size", _set(["rng", "torch"], torch.zeros(9, dtype=torch.uint8)), "rng.torch"),
    ("a step that is text", _set(["learner", "step"], "abc"), "learner.step"),
    ("an iteration of 1.5", _set(["iteration"], 1.5), "iteration is 1.5"),
    ("weights of another shape", lambda d: d["model"].__setitem__(next(iter(d["model"])), torch.zeros(3)),
     "has shape [3]"),
    ("weights of another type", lambda d: d["model"].__setitem__(next(iter(d["model"])), "w"), "not a tensor"),
    ("NaN weights", lambda d: next(iter(d["model"].values())).fill_(float("nan")), "NaN or infinite"),
    ("an optimiser moment of another shape", lambda d: d["learner"]["optimizer"]["state"][0].__setitem__(
        "exp_avg", torch.zeros(2)), "exp_avg has shape [2]"),
    ("a list where a tensor belongs", _set(["selfplay", "state", "holes"], [1, 2]), "selfplay.state.holes"),
    ("a config that is a list", _set(["config"], [1]), "'config'"),
    ("a move off the board", lambda d: d["selfplay"]["state"]["last"].fill_(999), "selfplay.state.last"),
    ("pending rows outside the replay", lambda d: d["selfplay"]["pending_row"].fill_(10**6), "pending_row"),
]:
    case(7, f"a valid state file with {_name}: a one-line error naming the part")(_damaged_state(_name, _change, _words))


# ============================================================ 8. swapped files, bad lines
def _swapped(name: str, kind: str) -> Callable[[], None]:
    def run_case() -> None:
        run = copy_of_saved("swapped")
        path = run / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        path.mkdir() if kind == "dir" else path.write_text("x")
        one_line_error(inproc("train", "--resume", str(run), "--quiet"), str(path))
        new = fresh("swapped-new")
        (new / name).parent.mkdir(parents=True, exist_ok=True)
        (new / name).mkdir() if kind == "dir" else (new / name).write_text("x")
        one_line_error(inproc("train", "--config", str(TINY), "--run-dir", str(new), "--quiet"), str(new / name))
    return run_case


for _name, _kind in [("config.yaml", "dir"), ("metrics.jsonl", "dir"), ("ladder.jsonl", "dir"), ("latest.pt", "dir"),
                     ("best.pt", "dir"), ("state/train_state.pt", "dir"), ("checkpoints", "file"), ("tb", "file"),
                     ("state", "file")]:
    case(8, f"{_name} a {'directory' if _kind == 'dir' else 'file'} (resume and new run): one-line errors")(
        _swapped(_name, _kind))


def _bad_lines(file: str, change: Callable[[list[dict]], list[dict]], words: str) -> Callable[[], None]:
    def run_case() -> None:
        run = copy_of_saved("bad-lines")
        path = run / file
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps(r) + "\n" for r in change(rows)))
        one_line_error(inproc("train", "--resume", str(run), "--quiet"), f"{path}:", words)
        one_line_error(inproc("curve" if file == "metrics.jsonl" else "ladder", str(run)), words)
    return run_case


for _file, _change, _words in [
    ("metrics.jsonl", lambda rows: [{**rows[0], "iteration": "x"}] + rows[1:], "'iteration'"),
    ("metrics.jsonl", lambda rows: [{**rows[0], "eval/vs_random/win_rate": "x"}] + rows[1:], "not a number"),
    ("metrics.jsonl", lambda rows: [{**rows[0], "time/minutes": [1]}] + rows[1:], "not a number"),
    ("metrics.jsonl", lambda rows: [{**rows[0], "iteration": json.loads("[" * 99 + "]" * 99)}] + rows[1:],
     "not a whole number"),
    ("ladder.jsonl", lambda rows: [{**rows[0], "iteration": "x"}] + rows[1:], "'iteration'"),
    ("ladder.jsonl", lambda rows: [{**r, "path": 5} if r["type"] == "player" else r for r in rows], "'path'"),
    ("ladder.jsonl", lambda rows: [{**r, "kind": 5} if r["type"] == "player" else r for r in rows], "'kind'"),
    ("ladder.jsonl", lambda rows: [{**r, "step": [1]} if r["type"] == "player" else r for r in rows], "'step'"),
]:
    case(8, f"bad value in {_file} ({_words}): one-line errors for train, curve, ladder")(
        _bad_lines(_file, _change, _words))


# ==================================================================== 9. deep nesting
@case(9, "JSON nested 1000 deep: records, --ladder, ladder, curve")
def deep_json() -> None:
    record = WORK / "deep.jsonl"
    record.write_text('{"game": "hex-3", "moves": [], "first": "a", "second": "b", "winner": null, '
                      '"result": "x", "index": ' + DEEP_JSON + "}\n")
    one_line_error(inproc("replay", "--record", str(record)), "nested more than")
    run = copy_of_saved("deep")
    with open(run / "ladder.jsonl", "a") as f:
        f.write('{"type": "player", "name": ' + DEEP_JSON + "}\n")
    with open(run / "metrics.jsonl", "a") as f:
        f.write('{"iteration": ' + DEEP_JSON + "}\n")
    one_line_error(inproc("ladder", str(run)), "nested more than")
    one_line_error(inproc("curve", str(run)), "nested more than")
    one_line_error(inproc("arena", "random", "random", "--game", "hex-3", "--games", "2", "--quiet", "--ladder",
                          str(run), "--records", str(WORK / "deep-arena.jsonl")), "nested more than")


@case(9, "serve's API bodies nested 1000 deep, or with 5000-digit numbers: 400, not 500")
def deep_serve() -> None:
    from conhex_zero.play.server import GameServer, PlayServer, start_in_thread

    server = PlayServer(GameServer("random", "hex-3", 0), "127.0.0.1", 0)
    start_in_thread(server)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            for path in ("/api/play", "/api/new", "/api/ai", "/api/undo"):
                for body in ('{"move": ' + DEEP_JSON + "}", '{"move": ' + NINES + "}"):
                    req = urllib.request.Request(server.url.rstrip("/") + path, data=body.encode(), method="POST")
                    req.add_header("Content-Type", "application/json")
                    try:
                        urllib.request.urlopen(req, timeout=30)
                        raise Failed(f"{path} accepted the body")
                    except urllib.error.HTTPError as err:
                        if err.code != 400:
                            raise Failed(f"{path}: status {err.code}") from None
    finally:
        server.shutdown()
        server.server_close()
        server.game.close()
    if "Traceback" in stderr.getvalue():
        raise Failed("serve logged a traceback")


@case(9, "YAML nested 3000 and 5000 levels deep as --config: one-line errors")
def deep_yaml() -> None:
    for depth in (3000, 5000):
        path = WORK / f"deep{depth}.yaml"
        path.write_text("game: " + "[" * depth + "]" * depth + "\n")
        one_line_error(inproc("train", "--config", str(path), "--quiet"), "nested more than", within=10)
        path.write_text("a:\n" + "".join("  " * i + "- \n" for i in range(depth)))
        one_line_error(inproc("train", "--config", str(path), "--quiet"), within=10)


# ==================================================================== 10. huge numbers
@case(10, "integers of thousands of digits and of 20 digits: records, SZ, game specs, player names")
def huge_numbers() -> None:
    record = WORK / "index.jsonl"
    record.write_text('{"game": "hex-3", "moves": [], "first": "a", "second": "b", "winner": null, "result": "x", '
                      '"index": ' + NINES + "}\n")
    one_line_error(inproc("replay", "--record", str(record)), "digits")
    sgf = WORK / "sz.sgf"
    for size in (NINES, "99999999999999999999"):
        sgf.write_text(f"(;FF[4]GM[11]SZ[{size}];B[a1])")
        one_line_error(inproc("replay", "--record", str(sgf)), "not a board size")
    for spec in ("hex-" + NINES, "hex-99999999999999999999", "hex-5:mirror=" + NINES, "hex-5:mirror=99999999999999999999",
                 "hex-5:random=" + NINES, "hex-5:forbid=" + NINES):
        r = inproc("rules", spec)
        one_line_error(r, within=5)
        if len(r.err) > 400:
            raise Failed(f"a {len(r.err)}-character error")
    for player in ("mcts-rollout:99999999999999999999", "mcts-rollout:" + NINES,
                   f"{saved_run() / 'latest.pt'}:sims=" + NINES, f"{saved_run() / 'latest.pt'}:sims=99999999999999999999"):
        one_line_error(inproc("arena", "random", player, "--game", "hex-3", "--games", "2", "--quiet",
                              "--records", str(WORK / "n.jsonl")), "at most 100000 simulations", within=10)


# ==================================================================== 11. random openings
@case(11, "random openings that cannot fit: hex-5:random=12, hex-19:random=180, eval.opening_plies=20, "
          "--opening-plies 20 on hex-3")
def random_openings() -> None:
    one_line_error(inproc("rules", "hex-5:random=12"), "at most random=8", within=5)
    one_line_error(inproc("rules", "hex-19:random=180"), "at most random=120", within=5)
    one_line_error(inproc("arena", "random", "random", "--game", "hex-19:random=180", "--games", "2", "--quiet"),
                   "at most random=120", within=10)
    one_line_error(inproc("train", "--config", str(TINY), "--run-dir", str(fresh("open")), "--quiet",
                          "eval.opening_plies=20"), "eval.opening_plies", within=10)
    one_line_error(inproc("arena", "random", "random", "--game", "hex-3", "--games", "2", "--quiet",
                          "--opening-plies", "20"), "--opening-plies", within=10)
    start = time.perf_counter()
    succeeded(inproc("arena", "random", "random", "--game", "hex-19:random=120", "--games", "4", "--quiet",
                     "--records", str(WORK / "r120.jsonl")))
    if time.perf_counter() - start > 60:
        raise Failed("the largest allowed random opening is slow")


# ==================================================================== 12. absurd numbers
@case(12, "optim.lr=1e300: refused up front")
def lr_huge() -> None:
    one_line_error(inproc("train", "--config", str(TINY), "--run-dir", str(fresh("lr")), "--quiet", "optim.lr=1e300"),
                   "optim.lr: at most", within=10)


@case(12, "arena --games 1000000000: refused up front (no 8 GB allocation)")
def arena_games() -> None:
    r = cli("arena", "random", "random", "--game", "hex-3", "--games", "1000000000", "--quiet", "--records",
            str(WORK / "g.jsonl"), timeout=120, memory=6 * 2**30)
    one_line_error(r, "--games", within=60)


@case(12, "--gtp-timeout nan (and inf, 0): refused up front")
def gtp_timeout() -> None:
    engine = f'gtp:"{sys.executable} {ROOT / "tests" / "fake_gtp.py"}"'
    for value in ("nan", "inf", "-1"):
        one_line_error(inproc("arena", "random", engine, "--game", "hex-3", "--games", "2", "--quiet",
                              "--gtp-timeout", value, "--records", str(WORK / "t.jsonl")), "--gtp-timeout", within=20)


# ==================================================================== 13. output paths
@case(13, "output paths: average --out under a file, in /proc, under /dev/null; arena --records a directory "
          "or under a file; --ladder a file")
def output_paths() -> None:
    a_file = WORK / "a_file"
    a_file.write_text("x")
    ckpt = saved_run() / "latest.pt"
    for out in (a_file / "x.pt", Path("/proc/x.pt"), Path("/dev/null/x.pt"), Path("/proc/sys/x.pt")):
        one_line_error(inproc("average", str(ckpt), str(ckpt), "--out", str(out)), "--out", within=10)
    game = ["random", "random", "--game", "hex-3", "--games", "2", "--quiet"]
    for records in (WORK, a_file / "x.jsonl", Path("/proc/x.jsonl")):
        one_line_error(inproc("arena", *game, "--records", str(records)), "--records", within=10)
    one_line_error(inproc("arena", *game, "--records", str(WORK / "ok.jsonl"), "--ladder", str(a_file)), "--ladder",
                   within=10)
    one_line_error(inproc("curve", str(saved_run()), "--out", str(a_file / "c.svg")), "--out", within=10)
    one_line_error(inproc("ladder", str(saved_run()), "--png", str(a_file / "l.png")), "--png", within=10)


# ==================================================================== 14-16
@case(14, "optim.lr=1e10 diverging at iteration 1: no claim of a 'last good state'")
def diverged_first() -> None:
    r = inproc("train", "--config", str(TINY), "--run-dir", str(fresh("diverge")), "--quiet", "optim.lr=1e10",
               "optim.warmup_steps=0", "optim.grad_clip=1e30")
    one_line_error(r, "diverged", "no state had been saved yet")
    if "last good state" in r.err:
        raise Failed(r.err.strip())


@case(15, "a checkpoint with NaN or inf weights: refused by arena, play, gtp, openings and average", slow=True)
def nan_weights() -> None:
    from conhex_zero.nn.checkpoint import load_checkpoint, save_checkpoint

    source = load_checkpoint(saved_run() / "latest.pt")
    for value in (float("nan"), float("inf")):
        with torch.no_grad():
            next(source.model.parameters()).view(-1)[0] = value
        path = save_checkpoint(WORK / f"nan-{value}.pt", source.model, source.game, source.meta)
        for args, stdin in ((["arena", str(path), "random", "--games", "2", "--quiet"], ""),
                            (["play", str(path)], ""), (["gtp", str(path)], "quit\n"),
                            (["openings", str(path)], ""),
                            (["average", str(path), str(path), "--out", str(WORK / "avg.pt")], "")):
            one_line_error(cli(*args, stdin=stdin, timeout=120), str(path), "NaN or infinite")
        if (WORK / "avg.pt").exists():
            raise Failed("average wrote a model")


@case(16, "a refused malicious pickle (checkpoint and state): one line, no torch UserWarning", slow=True)
def malicious_pickle() -> None:
    evil = WORK / "evil.py"
    evil.write_text("import torch\nclass Evil:\n    def __reduce__(self):\n        return (print, ('pwned',))\n"
                    "torch.save({'format': 'conhex-zero-checkpoint', 'schema': 1, 'x': Evil()}, __import__('sys').argv[1])\n")
    ckpt = WORK / "evil.pt"
    subprocess.run([sys.executable, str(evil), str(ckpt)], check=True, env=ENV)
    run = copy_of_saved("evil-state")
    shutil.copyfile(ckpt, run / "state" / "train_state.pt")
    for args in (["arena", str(ckpt), "random", "--games", "2", "--quiet"],
                 ["average", str(ckpt), str(ckpt), "--out", str(WORK / "e.pt")],
                 ["train", "--resume", str(run), "--quiet"]):
        r = cli(*args)
        one_line_error(r, "could run code")
        if "Warning" in r.err or "pwned" in r.out + r.err:
            raise Failed(r.err[:300])


# ============================================== 17. what a new user and a second probe met (issue 36)
@case(17, "a player name of 300 characters, or with a control character: one line, no 'File name too long'")
def long_and_odd_player_names() -> None:
    one_line_error(cli("arena", "x" * 300, "random", "--game", "hex-3", "--games", "2"), "unknown player")
    one_line_error(cli("arena", "x" * 300 + ".pt", "random", "--game", "hex-3"), "no checkpoint file at")
    one_line_error(cli("play", "na\x01me.pt"), "no checkpoint file at")


@case(17, "arena started in the background (SIGINT ignored) stops on kill -INT, keeping its finished games")
def arena_hears_sigint() -> None:
    import signal

    records = fresh("sigint") / "m.jsonl"
    records.parent.mkdir(parents=True)
    proc = subprocess.Popen([sys.executable, "-m", "conhex_zero.cli.main", "arena", "random", "mcts-rollout:200",
                             "--game", "hex-5", "--games", "8", "--records", str(records), "--quiet"], env=ENV, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not (records.is_file() and records.read_text()):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Failed("kill -INT did not stop the match within 60 s") from None
    if proc.returncode != 130 or "stopped after" not in err or "Traceback" in err:
        raise Failed(f"exit status {proc.returncode}: {err.strip()[-300:]}")


@case(17, "PUT and DELETE to the page: 405 with the methods its resources take")
def page_method_not_allowed() -> None:
    from conhex_zero.play.server import GameServer, PlayServer

    server = PlayServer(GameServer("random", "hex-3", 0), "127.0.0.1", 0)
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for method, path, allow in (("PUT", "/", "GET, HEAD"), ("DELETE", "/api/state", "GET, HEAD")):
            request = urllib.request.Request(server.url.rstrip("/") + path, data=b"{}", method=method,
                                             headers={"Content-Type": "application/json"})
            try:
                urllib.request.urlopen(request, timeout=30)
                raise Failed(f"{method} {path} was answered 200")
            except urllib.error.HTTPError as err:
                if err.code != 405 or err.headers.get("Allow") != allow:
                    raise Failed(f"{method} {path}: {err.code}, Allow {err.headers.get('Allow')!r}") from None
    finally:
        server.shutdown()
        server.server_close()
        server.game.close()


@case(17, "a typo in a game name, a missing checkpoint: refused before torch is imported")
def refused_before_torch() -> None:
    probe = ("import sys; from conhex_zero.cli.main import main; code = main(sys.argv[1:]); "
             "print('TORCH', 'torch' in sys.modules, file=sys.stderr); sys.exit(code)")
    for args in (["rules", "hexx"], ["arena", "no/such/file.pt", "random"], ["openings", "none.pt"]):
        p = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=ENV, cwd=ROOT)
        if p.returncode != 2 or "TORCH False" not in p.stderr:
            raise Failed(f"{' '.join(args)}: exit {p.returncode}, {p.stderr.strip()[-200:]}")


# ============================================ 18. what a third probe met (issue 43): arena, openings, report
def _checkpoints(name: str) -> tuple[Path, Path]:
    """Two checkpoints of the tiny run (of different weights), copied into ``WORK/name``."""
    folder = fresh(name)
    folder.mkdir(parents=True)
    x, y = folder / "x.pt", folder / "y.pt"
    shutil.copyfile(saved_run() / "latest.pt", x)
    shutil.copyfile(next((saved_run() / "checkpoints").glob("iter_*.pt")), y)
    if x.read_bytes() == y.read_bytes():
        shutil.copyfile(whole_run() / "latest.pt", y)
    return x, y


def _swap(a: Path, b: Path) -> None:
    tmp = a.with_suffix(".swap")
    os.replace(a, tmp)
    os.replace(b, a)
    os.replace(tmp, b)


@case(18, "arena: swapped checkpoint contents, or one retrained in place: another match, never the old games")
def arena_knows_what_played() -> None:
    x, y = _checkpoints("swap")
    match = [str(x), str(y), "--games", "6", "--sims", "8", "--records", str(x.parent / "xy.jsonl"), "--quiet"]
    succeeded(inproc("arena", *match))
    _swap(x, y)
    one_line_error(inproc("arena", *match), "played as another model", f"player 1, {x}")
    here = os.getcwd()
    os.chdir(x.parent)  # the default records name: a new file for the new contents
    try:
        first = inproc("arena", "x.pt", "random", "--games", "4", "--sims", "4", "--json")
        succeeded(first)
        shutil.copyfile(y, x)  # retrained in place
        again = inproc("arena", "x.pt", "random", "--games", "4", "--sims", "4", "--json")
        succeeded(again)
    finally:
        os.chdir(here)
    if json.loads(first.out)["records"] == json.loads(again.out)["records"] or "complete" in again.err:
        raise Failed(f"a retrained checkpoint resumed the old match: {again.err.strip()[:200]}")


@case(18, "arena: a records line whose winner was edited (to the loser, or to 7) is refused, not counted")
def arena_checks_its_records() -> None:
    records = fresh("edited") / "m.jsonl"
    records.parent.mkdir(parents=True)
    match = ["random", "mcts-rollout:8", "--game", "hex-4", "--games", "6", "--records", str(records), "--quiet"]
    succeeded(inproc("arena", *match))
    kept = records.read_text()
    for winner, name in ((1, True), (1, False), (7, False)):
        entries = [json.loads(line) for line in kept.splitlines()]
        entries[0]["winner"] = winner if winner == 7 else 1 - entries[0]["winner"]
        if name:
            entries[0]["winner_name"] = [entries[0]["first"], entries[0]["second"]][entries[0]["winner"]]
        records.write_text("".join(json.dumps(e) + "\n" for e in entries))
        one_line_error(inproc("arena", *match), f"{records}:1: game 0", "damaged or edited")


@case(18, "arena: a checkpoint replaced in the middle of a match is noticed; its games are never mixed")
def arena_checkpoint_replaced_midway() -> None:
    x, y = _checkpoints("midway")
    records = x.parent / "m.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "conhex_zero.cli.main", "arena", str(x), "mcts-rollout:200", "--game",
                             "hex-3", "--games", "8", "--sims", "200", "--records", str(records), "--quiet"], env=ENV,
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not (records.is_file() and records.read_text()):
        time.sleep(0.05)
    shutil.copyfile(y, x)
    _, err = proc.communicate(timeout=600)
    if proc.returncode != 0 or f"{x} changed during the match" not in err:
        if proc.returncode == 0 and records.is_file() and len(records.read_text().splitlines()) == 8 and \
                "changed" not in err and len(err.strip()) == 0:
            raise Skipped("the match ended before the file was replaced")
        raise Failed(f"exit {proc.returncode}: {err.strip()[-300:]}")
    digests = {json.dumps(json.loads(line)["match"]) for line in records.read_text().splitlines()}
    if len(digests) != 1:
        raise Failed("the records name two models")
    one_line_error(inproc("arena", str(x), "mcts-rollout:200", "--game", "hex-3", "--games", "8", "--sims", "200",
                          "--records", str(records), "--quiet"), "played as another model")


@case(18, "openings and report: huge, negative and empty numbers, --other of another game, --opening-sims 0 "
          "--other, an unwritable --out: one line before any work")
def openings_and_report_bounds() -> None:
    hex5, hex4, conhex = (str(ROOT / "checkpoints" / n) for n in ("hex5-l4h64.pt", "hex4-l3h32.pt", "conhex-l4h64.pt"))
    for option, value in (("--sims", "99999999999999999999"), ("--sims", "1099511627776"), ("--sims", "8,,16"),
                          ("--sims", "-5"), ("--repeats", "99999999999999999999"), ("--check-games", "1e20"),
                          ("--check-games", "100000000000000000000")):
        one_line_error(cli("openings", hex5, option, value, "--quiet", timeout=60, memory=4 * 2**30), option, within=30)
    one_line_error(inproc("openings", conhex, "--other", hex4, "--sims", "2", "--quiet"), "--other", "trained on hex-4")
    a_file = WORK / "a_file"
    a_file.write_text("x")
    for args in (["--opening-sims", "0", "--other", hex5], ["--out", str(a_file / "report")],
                 ["--out", "/proc/report"]):
        r = cli("report", hex5, "--games", "2", "--quiet", *args, timeout=60)
        one_line_error(r, args[0], within=30)


@case(18, "refusals before torch, each at most 1.0 s of CPU: config keys and values, --sims with --seconds, "
          "--port, --temperature nan, openings --sims -5, report --out, arena records, :sim=10, a cut checkpoint")
def refused_before_torch_43() -> None:
    import resource

    probe = ("import sys; from conhex_zero.cli.main import main; code = main(sys.argv[1:]); "
             "print('TORCH', 'torch' in sys.modules, file=sys.stderr); sys.exit(code)")
    a_file = WORK / "a_file"
    a_file.write_text("x")
    cut = WORK / "cut.pt"
    cut.write_bytes((ROOT / "checkpoints" / "hex5-l4h64.pt").read_bytes()[:100_000])
    hex5 = str(ROOT / "checkpoints" / "hex5-l4h64.pt")
    cases = [["train", "--config", str(TINY), "optim.learning_rate=1e-3"], ["train", "--config", str(TINY), "optim.lr=fast"],
             ["play", "random", "--sims", "10", "--seconds", "1"], ["serve", "random", "--port", "8765000"],
             ["serve", "random", "--temperature", "nan"], ["openings", hex5, "--sims", "-5"],
             ["report", hex5, "--out", str(a_file / "r")], ["arena", "random", "random", "--records", str(a_file / "m")],
             ["arena", f"{hex5}:sim=10", "random"], ["arena", str(cut), "random"]]
    for args in cases:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=ENV, cwd=ROOT)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or lines[-1:] != ["TORCH False"] or len(lines) != 2 or cpu > 1.0:
            raise Failed(f"{' '.join(args)[:80]}: exit {p.returncode}, {cpu:.2f} s CPU, {p.stderr.strip()[-200:]}")


@case(18, "smaller: :sim=10 named as the typo, a cut checkpoint's error not cut mid-word, train --resume of a "
          "finished run says nothing was done, train --help within 100 columns")
def smaller_43() -> None:
    hex5 = str(ROOT / "checkpoints" / "hex5-l4h64.pt")
    one_line_error(inproc("arena", f"{hex5}:sim=10", "random"), "unknown option 'sim=10' after the checkpoint")
    cut = WORK / "cut2.pt"
    cut.write_bytes(b"PK\x03\x04" + bytes(96))
    r = inproc("openings", str(cut))
    one_line_error(r, str(cut))
    if "..." in r.err or "inte" in r.err.split("(", 1)[-1][-8:]:
        raise Failed(r.err.strip())
    r = inproc("train", "--resume", str(whole_run()))
    succeeded(r)
    if "nothing to train" not in r.out or "resolved config" in r.out or "done:" in r.out:
        raise Failed(r.out.strip()[:300])
    env = {**ENV, "COLUMNS": "100"}
    p = subprocess.run([sys.executable, "-m", "conhex_zero.cli.main", "train", "--help"], capture_output=True, text=True,
                       env=env, cwd=ROOT)
    long = [line for line in p.stdout.splitlines() if len(line) > 100]
    if long:
        raise Failed(f"{len(long)} lines over 100 columns: {long[0][:120]}")


def _line(name: str, *extra: str) -> Path:
    """A tiny line of one piece (three iterations) in the work directory."""
    line = fresh(name)
    succeeded(cli("piece", str(line), "--config", str(TINY), "--quiet", "--run-dir", str(fresh(name + "-run")),
                  "eval.games=2", "eval.previous_games=2", *extra))
    return line


@case(18, "a line: another line's carry.pt copied in, --out into another line or a stranger's folder: refused; "
          "pieces.jsonl deleted: the next piece keeps its number and every log", slow=True)
def line_knows_itself() -> None:
    ours, theirs = _line("ours"), _line("theirs")
    own_carry = (ours / "carry.pt").read_bytes()
    (ours / "carry.pt").write_bytes((theirs / "carry.pt").read_bytes())
    one_line_error(cli("piece", str(ours), "--quiet", "iterations=4", "--run-dir", str(fresh("r-mixed"))),
                   "the line's files were mixed")
    (ours / "carry.pt").write_bytes(own_carry)
    one_line_error(cli("piece", str(ours), "--quiet", "iterations=4", "--out", str(theirs), "--run-dir",
                       str(fresh("r-out"))), "holds line ")
    stranger = fresh("stranger")
    stranger.mkdir()
    (stranger / "mine.txt").write_text("mine\n")
    one_line_error(cli("piece", str(ours), "--quiet", "iterations=4", "--out", str(stranger), "--run-dir",
                       str(fresh("r-stranger"))), "not a copy of this line")
    if (stranger / "mine.txt").read_text() != "mine\n" or len(list(stranger.iterdir())) != 1:
        raise Failed("the stranger's folder was written")
    log1 = (ours / "logs" / "piece-001.log").read_text()
    (ours / "pieces.jsonl").unlink()
    succeeded(cli("piece", str(ours), "--quiet", "iterations=4", "--run-dir", str(fresh("r-next"))))
    from conhex_zero.train.line import Line

    if Line(ours).pieces()[-1]["piece"] != 2 or (ours / "logs" / "piece-001.log").read_text() != log1:
        raise Failed(f"after pieces.jsonl was deleted the next piece was {Line(ours).pieces()[-1]['piece']}, "
                     f"or piece 1's log changed")


@case(18, "a line: line.yaml damaged or with an unknown key is an error naming line.yaml and is kept as it is; a "
          "cut carry.pt is refused before torch", slow=True)
def line_yaml_and_carry() -> None:
    line = _line("yaml")
    (line / "line.yaml").write_text("optim:\n  learning_rate: 0.1\n")
    one_line_error(cli("piece", str(line), "--quiet", "iterations=4", "--run-dir", str(fresh("r-yaml"))),
                   "line.yaml: unknown config key 'optim.learning_rate'")
    (line / "line.yaml").write_text("optim: [\n")
    one_line_error(cli("piece", str(line), "--quiet", "iterations=4", "--run-dir", str(fresh("r-yaml2"))), "line.yaml")
    if (line / "line.yaml").read_text() != "optim: [\n":
        raise Failed("the damaged line.yaml was replaced")
    data = (line / "carry.pt").read_bytes()
    (line / "carry.pt").write_bytes(data[: len(data) // 2])
    one_line_error(cli("piece", str(line), "--quiet"), "carry.pt is damaged or cut short", within=5.0)


# ======================================================================== driver
class Skipped(Exception):
    """A case that cannot run here (the message says why)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the slow cases")
    parser.add_argument("--only", help="comma-separated item numbers (1-16: issue 25; 17: issue 36; 18: issue 43)")
    parser.add_argument("--keep", action="store_true", help=f"keep the work directory ({WORK})")
    args = parser.parse_args()
    torch.set_num_threads(1)
    only = {int(x) for x in args.only.split(",")} if args.only else None
    tried = held = skipped = 0
    failed: list[str] = []
    started = time.perf_counter()
    for c in CASES:
        if (only and c.item not in only) or (args.quick and c.slow):
            continue
        t0 = time.perf_counter()
        try:
            c.run()
        except Skipped as why:
            skipped += 1
            print(f"[{c.item:2}] skipped  {c.name}: {why}", flush=True)
            continue
        except Failed as why:
            tried += 1
            failed.append(f"{c.item}: {c.name}")
            print(f"[{c.item:2}] FAILED   {c.name}: {why}", flush=True)
            continue
        except Exception:
            tried += 1
            failed.append(f"{c.item}: {c.name}")
            print(f"[{c.item:2}] FAILED   {c.name}: the probe itself raised:\n{traceback.format_exc()}", flush=True)
            continue
        tried += 1
        held += 1
        print(f"[{c.item:2}] held     {c.name} ({time.perf_counter() - t0:.1f} s)", flush=True)
    if not args.keep:
        shutil.rmtree(WORK, ignore_errors=True)
    minutes = (time.perf_counter() - started) / 60
    print(f"\nfault probe: cases tried {tried}, held {held}, failed {len(failed)}"
          + (f", skipped {skipped}" if skipped else "") + f" ({minutes:.1f} min)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
