"""How much CPU a refused command costs: the CPU seconds (user + system, as /usr/bin/time counts them)
of commands that fail on a typo, a missing file or a run that another process trains, and (issue 43)
on a misspelt config key or an ill-typed value, conflicting options, numbers out of bounds, an
output that cannot be written, a cut checkpoint, each in a new process, the best of --repeats runs.

    python benchmarks/fast_errors.py                 # prints a table, writes runs/bench/fast_errors-TIME.json
    python benchmarks/fast_errors.py --publish       # ... and benchmarks/results/fast_errors.json

The bar (issues 36 and 43): each one line and at most 1.0 s of CPU on the project's 2-core machine, whatever
the load (CPU seconds do not grow with load the way wall time does). A valid ``rules conhex`` is the
baseline: the interpreter and the command line alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conhex_zero.train.run_lock import RunLock  # noqa: E402  (torch-free)

COMMANDS = {
    "rules conhex (valid: the baseline)": ["rules", "conhex"],
    "rules hexx": ["rules", "hexx"],
    "arena no/such/file.pt random": ["arena", "no/such/file.pt", "random"],
    "train --resume RUN (RUN in use)": ["train", "--resume", "{run}"],
    "play no.pt": ["play", "no.pt"],
    "openings no.pt": ["openings", "no.pt"],
    "replay --record no.sgf": ["replay", "--record", "no.sgf"],
    # issue 43, item 4: refusals that used to wait for torch (2-5 s of CPU)
    "train ... optim.learning_rate=1e-3": ["train", "--config", "configs/tiny.yaml", "optim.learning_rate=1e-3"],
    "train ... optim.lr=fast": ["train", "--config", "configs/tiny.yaml", "optim.lr=fast"],
    "play random --sims 10 --seconds 1": ["play", "random", "--sims", "10", "--seconds", "1"],
    "serve random --port 8765000": ["serve", "random", "--port", "8765000"],
    "serve random --temperature nan": ["serve", "random", "--temperature", "nan"],
    "openings CKPT --sims -5": ["openings", "checkpoints/hex5-l4h64.pt", "--sims", "-5"],
    "openings CKPT --sims 99999999999999999999": ["openings", "checkpoints/hex5-l4h64.pt", "--sims",
                                                  "99999999999999999999"],
    "openings CKPT --check-games 1e20": ["openings", "checkpoints/hex5-l4h64.pt", "--check-games", "1e20"],
    "report CKPT --out UNWRITABLE": ["report", "checkpoints/hex5-l4h64.pt", "--out", "{file}/report"],
    "report CKPT --opening-sims 0 --other M": ["report", "checkpoints/hex5-l4h64.pt", "--opening-sims", "0", "--other",
                                               "checkpoints/hex5-l4h64.pt"],
    "arena ... --records UNWRITABLE": ["arena", "random", "random", "--records", "{file}/m.jsonl"],
    "arena CKPT:sim=10 random": ["arena", "checkpoints/hex5-l4h64.pt:sim=10", "random"],
    "arena CUT.pt random (a cut checkpoint)": ["arena", "{cut}", "random"],
    "piece LINE (a cut carry.pt)": ["piece", "{line}"],
    "rate LINE (a cut carry.pt)": ["rate", "{line}"],
    # issue 58, item 10: refusals that came after torch (2.1-4.1 s of CPU)
    "book grow (another model)": ["book", "grow", "checkpoints/hex5-l4h64.pt", "--out", "{book}", "--nodes", "1"],
    "book grow --after a1 (another start)": ["book", "grow", "checkpoints/hex4-l3h32.pt", "--out", "{book}", "--after", "a1"],
    "book grow (held lock)": ["book", "grow", "checkpoints/hex4-l3h32.pt", "--out", "{locked}", "--nodes", "1"],
    "book show (a line deleted)": ["book", "show", "{damaged}"],
    "book show (a file, not a folder)": ["book", "show", "{file}"],
    "book show (missing)": ["book", "show", "{file}-missing"],
    "piece LINE (another line's carry.pt)": ["piece", "{mixed}"],
    "piece LINE --out OTHER (another line)": ["piece", "{line6}", "--out", "{foreign}"],
    "arena --records (an edited record)": ["arena", "random", "random", "--game", "hex-3", "--games", "2",
                                           "--records", "{edited}"],
    "arena --records (another match)": ["arena", "random", "mcts-rollout:3", "--game", "hex-3", "--games", "2",
                                        "--records", "{records}"],
    "CONHEX_ZERO_BACKEND=bogus rules hex": ["rules", "hex", "{env:CONHEX_ZERO_BACKEND=bogus}"],
    "book html --out ''": ["book", "html", "{book}", "--out", ""],
}


def cpu_seconds(args: list[str]) -> tuple[float, int, str]:
    """CPU seconds (user + system) of ``conhex-zero ARGS`` in a new process, its exit code and stderr
    (a word ``{env:NAME=VALUE}`` sets an environment variable instead)."""
    env = dict(os.environ)
    for word in [w for w in args if w.startswith("{env:")]:
        name, _, value = word[5:-1].partition("=")
        env[name] = value
    args = [w for w in args if not w.startswith("{env:")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "conhex_zero.cli.main", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, cwd=ROOT, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, proc.returncode, proc.stderr.strip()


def _issue58_files(scratch: Path) -> dict[str, str]:
    """A book (and a locked and a damaged copy), a line and another line's copy of it, and records
    of a tiny match (and an edited copy), for issue 58's refusals."""
    import gzip
    import shutil

    from conhex_zero.files import file_seal

    book = scratch / "book"
    shutil.copytree(ROOT / "checkpoints" / "books" / "hex4-l3h32", book)
    locked, damaged = scratch / "locked", scratch / "damaged"
    shutil.copytree(book, locked)
    shutil.copytree(book, damaged)
    base = damaged / "book.jsonl.gz"
    lines = gzip.decompress(base.read_bytes()).decode().splitlines(keepends=True)
    base.write_bytes(gzip.compress("".join(lines[:5] + lines[6:]).encode()))
    line6, foreign = scratch / "line6", scratch / "foreign"
    shutil.copytree(ROOT / "checkpoints" / "lines" / "hex6", line6)
    shutil.copytree(line6, foreign)
    data = file_seal.load(foreign / "carry.pt")
    own = data.get("line", {}).get("id")
    data["line"] = {"id": "0123456789abcdef", "piece": 2}
    file_seal.save(data, foreign / "carry.pt")
    if own:  # the copy's other files name the other id too: a line of its own
        for path in list(foreign.glob("*.jsonl")) + list((foreign / "logs").glob("*.log")):
            path.write_text(path.read_text().replace(own, "0123456789abcdef"))
    else:  # the line's files name no id: give its copy a carry.pt of another line only
        pieces6 = (line6 / "pieces.jsonl").read_text()
        (line6 / "pieces.jsonl").write_text(pieces6.replace('"piece": 1,', '"piece": 1, "line_id": "fedcba9876543210",'))
    mixed = scratch / "mixed"  # the line with another line's carry.pt copied in
    shutil.copytree(line6, mixed)
    shutil.copyfile(foreign / "carry.pt", mixed / "carry.pt")
    records, edited = scratch / "m.jsonl", scratch / "edited.jsonl"
    subprocess.run([sys.executable, "-m", "conhex_zero.cli.main", "arena", "random", "random", "--game", "hex-3",
                    "--games", "2", "--records", str(records)], capture_output=True, cwd=ROOT, check=True)
    entries = [json.loads(x) for x in records.read_text().splitlines() if x.strip()]
    entries[0]["plies"] += 1
    edited.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return {"{book}": str(book), "{locked}": str(locked), "{damaged}": str(damaged), "{foreign}": str(foreign),
            "{line6}": str(line6), "{mixed}": str(mixed), "{records}": str(records), "{edited}": str(edited)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="runs per command; the least CPU counts (default 3)")
    parser.add_argument("--publish", action="store_true", help="also write benchmarks/results/fast_errors.json")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        run = Path(scratch) / "run"
        run.mkdir()
        a_file = Path(scratch) / "a-file"
        a_file.write_text("a file, where a folder is asked for\n")
        cut = Path(scratch) / "cut.pt"
        cut.write_bytes((ROOT / "checkpoints" / "hex5-l4h64.pt").read_bytes()[:100_000])
        line = Path(scratch) / "line"
        (line / "checkpoints").mkdir(parents=True)
        (line / "checkpoints" / "iter_0020.pt").write_bytes(b"")
        carry = (ROOT / "checkpoints" / "lines" / "conhex-gpu" / "carry.pt").read_bytes()
        (line / "carry.pt").write_bytes(carry[: len(carry) // 2])
        places = {"{run}": str(run), "{file}": str(a_file), "{cut}": str(cut), "{line}": str(line),
                  **_issue58_files(Path(scratch))}
        lock = RunLock(run)
        lock.acquire(note=lambda _: None)  # this process "trains" the run
        import fcntl

        held = open(Path(places["{locked}"]) / ".grow.lock", "w")
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # this process "grows" the book
        try:
            for label, command in COMMANDS.items():
                words = [places.get(w, w).replace("{file}", places["{file}"]) for w in command]
                runs = [cpu_seconds(words) for _ in range(args.repeats)]
                best = min(r[0] for r in runs)
                code, err = runs[0][1], runs[0][2]
                rows.append({"command": label, "cpu_s": round(best, 3), "runs_cpu_s": [round(r[0], 3) for r in runs],
                             "exit_code": code, "error_lines": len(err.splitlines()), "error": err[:200]})
                print(f"{label:<44} {best:5.2f} s CPU  exit {code}  {err.splitlines()[0][:90] if err else ''}")
        finally:
            lock.release()
            held.close()
    result = {"benchmark": "fast_errors", "date": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
              "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
              "load_1min": round(os.getloadavg()[0], 2), "repeats": args.repeats, "rows": rows}
    out = ROOT / "runs" / "bench" / f"fast_errors-{time.strftime('%Y%m%d-%H%M%S')}.json"
    targets = [out] + ([ROOT / "benchmarks" / "results" / "fast_errors.json"] if args.publish else [])
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
