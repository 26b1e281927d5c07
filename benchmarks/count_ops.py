"""What a ``conhex-zero`` command would cost on a GPU, counted on any machine: the command runs in this
process under torch's profiler (CPU activity), and the aten ops it dispatched are counted.

    python benchmarks/count_ops.py [--json FILE] [--top N] [--no-host-reads] [--] COMMAND [ARGS ...]
    python benchmarks/count_ops.py -- bench selfplay --config configs/tiny.yaml --device cpu --seconds 3 --json
    CONHEX_ZERO_HOST_READS=0 python benchmarks/count_ops.py bench selfplay --config configs/tiny.yaml --json

Reported:

* aten ops: every ``aten::`` op the profiler saw (an op that calls others counts with them). Each is
  a kernel launch on a GPU unless a CUDA graph or a compiled kernel absorbs it.
* host syncs: the ops that make the host wait for the device, by kind: ``aten::_local_scalar_dense``
  (a value read on the host: ``.item()``, ``bool(t)``, ``int(t)``, ``float(t)``, ``.tolist()``) and
  ``aten::nonzero`` (a result whose size depends on the data). The total counts these two;
  ``aten::item`` and ``aten::is_nonzero`` are shown beside them as the calls that led there.
* sparse ops: ops with ``sparse`` in their name (no sparse kernel runs in bf16 on CUDA).
* the most frequent ops (``--top N``).

When the command prints JSON with a ``steps`` count (``bench selfplay --json`` does), the figures are
also given per step. ``--json FILE`` writes everything as JSON (``-``: standard output, after the
command's own output). On the CPU the engine and the search read a flag on the host to skip work
(``conhex_zero/device/host_reads.py``); ``CONHEX_ZERO_HOST_READS=0`` in the environment, or
``--no-host-reads``, makes them take the GPU's path, so the counts are what a GPU would pay. The
exit code is the command's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Sequence, TextIO

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SYNCS = ("aten::_local_scalar_dense", "aten::nonzero")
"""The ops at which the host waits for the device."""
SYNC_CALLERS = ("aten::item", "aten::is_nonzero")
"""Ops that reach the host through ``aten::_local_scalar_dense`` (shown, not added to the total)."""


class Tee(io.TextIOBase):
    """Writes to a stream and keeps a copy (the command's output is shown and also read for JSON)."""

    def __init__(self, stream: TextIO):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.stream.fileno()


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", metavar="FILE", help="also write the counts as JSON to FILE ('-': standard output)")
    ap.add_argument("--top", type=int, default=15, metavar="N", help="most frequent ops shown (default: 15)")
    ap.add_argument("--no-host-reads", action="store_true",
                    help="the GPU's path on the CPU: the same as CONHEX_ZERO_HOST_READS=0")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="a conhex-zero command and its arguments")
    args = ap.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if args.command[:1] == ["conhex-zero"]:
        args.command = args.command[1:]
    if not args.command:
        ap.error("give a conhex-zero command, e.g. -- bench env --game hex-5 --seconds 1")
    if args.top < 0:
        ap.error("--top must be 0 or more")
    return args


def run_profiled(command: list[str]) -> tuple[int, Counter, str]:
    """Run ``conhex-zero COMMAND`` under the profiler: (exit code, op counts, what it printed)."""
    from torch.profiler import ProfilerActivity, profile

    from conhex_zero.bench.timing import PROFILER_NOISE, without_stderr_lines
    from conhex_zero.cli.main import main

    tee = Tee(sys.stdout)
    prof = profile(activities=[ProfilerActivity.CPU])
    with without_stderr_lines(PROFILER_NOISE):
        prof.start()
    try:
        with contextlib.redirect_stdout(tee):
            try:
                code = main(command)
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    finally:
        with without_stderr_lines(PROFILER_NOISE):
            prof.stop()
    return code, Counter(event.name for event in prof.events()), tee.copy.getvalue()


def steps_printed(output: str) -> int | None:
    """The ``steps`` of a JSON object the command printed (the last one that has it)."""
    decoder = json.JSONDecoder()
    found = None
    for start in (i for i, ch in enumerate(output) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(output, start)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("steps"), int) and value["steps"] > 0:
            found = value["steps"]
    return found


def summarise(counts: Counter, top: int, steps: int | None) -> dict[str, Any]:
    aten = {name: n for name, n in counts.items() if name.startswith("aten::")}
    syncs_by_kind = {name: counts.get(name, 0) for name in (*SYNCS, *SYNC_CALLERS)}
    host_syncs = sum(counts.get(name, 0) for name in SYNCS)
    sparse = {name: n for name, n in aten.items() if "sparse" in name.lower()}
    summary: dict[str, Any] = {
        "aten_ops": sum(aten.values()),
        "host_syncs": host_syncs,
        "syncs_by_kind": syncs_by_kind,
        "sparse_ops": sum(sparse.values()),
        "sparse_by_name": dict(sorted(sparse.items(), key=lambda kv: -kv[1])),
        "distinct_ops": len(aten),
        "top_ops": [[name, n] for name, n in sorted(aten.items(), key=lambda kv: (-kv[1], kv[0]))[:top]],
        "steps": steps,
        "per_step": None,
    }
    if steps:
        summary["per_step"] = {"aten_ops": summary["aten_ops"] / steps, "host_syncs": host_syncs / steps,
                               "sparse_ops": summary["sparse_ops"] / steps}
    return summary


def report(summary: dict[str, Any]) -> str:
    kinds = ", ".join(f"{name.removeprefix('aten::')} {n:,}" for name, n in summary["syncs_by_kind"].items())
    lines = [f"aten ops: {summary['aten_ops']:,} ({summary['distinct_ops']} distinct)",
             f"host syncs: {summary['host_syncs']:,} ({kinds})",
             f"sparse ops: {summary['sparse_ops']:,}"]
    if summary["per_step"]:
        per = summary["per_step"]
        lines.append(f"per step ({summary['steps']} steps): aten ops {per['aten_ops']:,.1f}, host syncs "
                     f"{per['host_syncs']:.2f}, sparse ops {per['sparse_ops']:.2f}")
    if summary["top_ops"]:
        lines.append("most frequent: " + ", ".join(f"{name.removeprefix('aten::')} {n:,}"
                                                   for name, n in summary["top_ops"]))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    env_before = os.environ.get("CONHEX_ZERO_HOST_READS")
    if args.no_host_reads:
        os.environ["CONHEX_ZERO_HOST_READS"] = "0"  # before conhex_zero.device.host_reads is imported
    import torch

    from conhex_zero.device import host_reads

    before = host_reads.HOST_READ_DEVICES
    if args.no_host_reads:
        host_reads.HOST_READ_DEVICES = ()  # in case it was imported already (callers in this process)
    try:
        reads_on = list(host_reads.HOST_READ_DEVICES)
        code, counts, output = run_profiled(args.command)
    finally:
        host_reads.HOST_READ_DEVICES = before
        if env_before is None:  # as it was: callers in this process (tests) go on unchanged
            os.environ.pop("CONHEX_ZERO_HOST_READS", None)
        else:
            os.environ["CONHEX_ZERO_HOST_READS"] = env_before
    summary = {"command": ["conhex-zero", *args.command], "exit_code": code, "host_reads_on": reads_on,
               "torch": torch.__version__, **summarise(counts, args.top, steps_printed(output))}
    print(report(summary), file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json == "-":
        print(json.dumps(summary, indent=1))
    elif args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
