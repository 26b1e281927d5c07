"""The commands the documentation shows: found in Markdown and in ``--help`` epilogs, parsed like a
shell line, shrunk to seconds, and linked to the earlier commands whose outputs they read.

Pure text work (no torch): ``tests/test_docs_commands.py`` runs what this module finds, and its
docstring states the conventions that documentation must follow.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

RUN_TAGS = ("bash", "sh", "shell", "console")
"""Code blocks whose lines are commands (``console``: only the lines after a ``$`` prompt)."""

NOT_RUN = ("pip", "pip3", "pytest", "torchrun", "git", "cd", "export", "setsid", "nohup", "tensorboard", "source",
           "ruff", "apt-get", "sudo", ".ci/run")
"""Programs recognised and not run: installs, tests, launchers, shell state."""

NOT_RUN_MODULES = ("pytest", "pip", "torch.distributed.run")
"""``python -m MODULE`` recognised and not run."""

CLI_MODULES = ("conhex_zero", "conhex_zero.cli.main")
"""``python -m MODULE ARGS`` is ``conhex-zero ARGS`` (run in a new interpreter)."""

MARKER = re.compile(r"^\s*<!--\s*docs-test:(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
HELP_NOTE = re.compile(r"\s{2,}\(.*\)\s*$")
"""A ``--help`` example's trailing note, two spaces then ``(...)``: dropped."""

# ------------------------------------------------------------------ what is small enough
SMALL_SIMS, SMALL_ROLLOUTS, SMALL_SECONDS, SMALL_PICTURE = 4, 1, 0.05, "200x200"
TRAIN_SMALL = {
    "selfplay.games": 4, "selfplay.full_sims": 4, "selfplay.cheap_sims": 2, "selfplay.max_considered": 4,
    "selfplay.positions_per_iteration": 8, "replay.min_size": 8, "replay.capacity": 512, "optim.batch_size": 8,
    "optim.warmup_steps": 1, "eval.every": 1, "eval.games": 2, "eval.previous_games": 2, "eval.sims": 2,
    "eval.references": "[random,mcts-rollout:1]", "selfplay.compile": "false", "optim.compile": "false",
}
"""Config overrides of a shrunk training run (one iteration, evaluated, with checkpoints). No
torch.compile: it takes half a minute and a C compiler on a CPU (tests/test_train.py tests it)."""
SELFPLAY_SMALL = {k: v for k, v in TRAIN_SMALL.items() if k.startswith("selfplay.")}

CLI_SHRINK: dict[str, dict[str, tuple[object, bool]]] = {
    # subcommand: {option: (small value, add it when absent)}; a given number is only ever lowered.
    # A shrunk arena plays 4 games (so --index is at most 3), a shrunk training run has 1 or 2 checkpoints.
    "average": {"--last": (1, False)},
    "arena": {"--games": (4, True), "--sims": (SMALL_SIMS, True), "--round": (4, False), "--gtp-parallel": (1, True)},
    "report": {"--games": (1, True), "--sims": (SMALL_SIMS, True), "--opening-sims": (2, True),
               "--random-games": (10, True), "--check-games": (2, False), "--check-sims": (SMALL_SIMS, True),
               "--check-count": (1, True)},
    "openings": {"--sims": (SMALL_SIMS, True), "--repeats": (1, True), "--compare-sims": (2, True), "--index": (3, False),
                 "--check-games": (2, False), "--check-sims": (SMALL_SIMS, True), "--check-count": (1, True)},
    "replay": {"--sims": (SMALL_SIMS, False), "--index": (3, False)},
    "play": {"--sims": (SMALL_SIMS, False), "--seconds": (SMALL_SECONDS, False)},
    "gtp": {"--sims": (SMALL_SIMS, False), "--seconds": (SMALL_SECONDS, False)},
    "serve": {"--sims": (SMALL_SIMS, False), "--seconds": (SMALL_SECONDS, False)},
    "bench env": {"--seconds": (SMALL_SECONDS, True), "--batch": (4096, False)},
    "bench net": {"--seconds": (SMALL_SECONDS, True), "--batch": (16, True)},
    "bench search": {"--seconds": (SMALL_SECONDS, True), "--batch": (8, True), "--sims": (SMALL_SIMS, True)},
    "bench selfplay": {"--seconds": (SMALL_SECONDS, True)},
    "rate": {"--games": (2, True), "--previous-games": (2, True), "--sims": (SMALL_SIMS, True)},
    "distill": {"--positions": (64, True), "--games": (16, True), "--epochs": (1, True), "--batch": (16, True)},
    "book grow": {"--nodes": (6, True), "--sims": (SMALL_SIMS, True), "--minutes": (0.05, False), "--batch": (8, False)},
    "book html": {"--depth": (1, True)},
    "book prove": {"--nodes": (200, True), "--minutes": (0.05, True), "--workers": (1, False), "--table-bits": (16, False)},
}
SEARCHING = ("play", "gtp", "serve")
"""Commands whose checkpoint player searches --sims N a move unless --seconds S is given."""

SCRIPT_SHRINK: dict[str, dict[str, tuple[object, bool]]] = {
    "bench_env.py": {"--seconds": (SMALL_SECONDS, True), "--repeats": (1, True)},
    "bench_search.py": {"--seconds": (SMALL_SECONDS, True), "--sims": (SMALL_SIMS, True), "--batch": (8, True)},
    "bench_vs_pgx.py": {"--seconds": (SMALL_SECONDS, True), "--repeats": (1, True), "--batch": (64, True)},
    "bench_distributed.py": {"--procs": ("1", True), "--iterations": (1, True), "--repeats": (1, True)},
    "bench_convergence.py": {"--positions": (4, True), "--sims": (SMALL_SIMS, True), "--batch": (4, True)},
    "measure_model.py": {"--games": (2, True), "--sims": (SMALL_SIMS, True), "--equal-time-games": (0, True)},
    "ab_search.py": {"--games": (2, True), "--sims": (SMALL_SIMS, True)},
    "bench_book.py": {"--nodes": (12, True), "--sims": (SMALL_SIMS, True), "--batch": (8, True)},
    "knowledge_bench.py": {"--seconds": (1, True)},
    # one game: each game builds two models' native packages, minutes on a busy machine (the docs test's
    # limit is 300 s; with both games it ran past it beside three proof searches, the eleventh session)
    "bench_reach_speed.py": {"--rounds": (1, True), "--seconds": (SMALL_SECONDS, True), "--sims": (SMALL_SIMS, True),
                             "--games": ("hex-7", True)},
    "bench_first_move.py": {"--repeats": (1, True), "--sims": (SMALL_SIMS, True), "--busy": (0, True)},
    "bench_one_position.py": {"--sims": (SMALL_SIMS, True), "--seconds": (SMALL_SECONDS, True), "--repeats": (1, True),
                              "--sims-large": (SMALL_SIMS, False), "--batch-large": (8, False)},
}
GENERIC_SHRINK: dict[str, tuple[object, bool]] = {
    "--games": (2, False), "--sims": (SMALL_SIMS, False), "--seconds": (SMALL_SECONDS, False),
    "--positions": (4, False), "--iterations": (1, False), "--repeats": (1, False), "--batch": (64, False),
}
"""Any other script: numbers given for these options are lowered."""
SCRIPT_EXTRA: dict[str, list[str]] = {"measure_model.py": ["--references", "mcts-rollout:8", "random"]}
"""Options added to a script's command when it does not give them (its defaults take minutes: the
model against rollout-MCTS 1000, then again at equal time, which the shrunk command leaves out)."""
SCRIPT_OVERRIDES = {"bench_distributed.py": TRAIN_SMALL}
"""Scripts that pass ``key=value`` config overrides on to training."""

OUTPUT_OPTIONS = ("--out", "--run-dir", "--resume", "--records", "--ladder", "--png", "--svg", "--to-sgf", "--json")
"""Options whose value a command writes (``--json`` only with a ``.json`` file name)."""


# ------------------------------------------------------------------ extraction
@dataclass(frozen=True)
class Command:
    """One command as documented: where it is, its text, its shell words."""

    source: str
    """``README.md``, ``docs/x.md`` or ``help-CMD`` (the examples of ``conhex-zero CMD --help``)."""
    line: int
    """Line of the source (of the epilog for help) where the command starts."""
    text: str
    words: tuple[str, ...] = ()
    index: int = 0
    """The command's number within its line (``A && B``: 0 and 1)."""
    skip: str | None = None
    """The reason of the block's ``docs-test: skip`` marker."""
    problem: str | None = None
    """What is wrong with the documentation itself (a marker without reason, a line that cannot be parsed)."""
    group: str = ""
    """Commands of one group share a scratch copy and may read each other's outputs (default: the source)."""

    @property
    def scope(self) -> str:
        return self.group or self.source

    @property
    def id(self) -> str:
        return f"{self.source}:{self.line}" + (f"+{self.index}" if self.index else "")


@dataclass(frozen=True)
class Invocation:
    """What to run: ``program`` is ``conhex-zero``, ``python`` (a script, args start with its path) or
    ``python-cli`` (``python -m conhex_zero ARGS``); ``args`` its arguments."""

    program: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    stdin: str | None = None
    stdout: str | None = None
    """``> FILE``: the file that gets the command's standard output."""
    notes: tuple[str, ...] = field(default=(), compare=False)


def markdown_commands(text: str, source: str) -> list[Command]:
    """Every command of the ``bash``/``sh``/``console`` code blocks of a Markdown text; a skipped
    block gives one Command (its fence line, its reason); a marker without reason, or one that is
    not before a code block, one Command with a problem."""
    lines = text.splitlines()
    out: list[Command] = []
    marker: tuple[int, str | None, str | None] | None = None  # line, reason, problem
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        if m:
            if marker is not None:
                out.append(Command(source, marker[0], lines[marker[0] - 1].strip(), problem="a docs-test marker "
                                   "that is not right before a code block"))
            marker = (i + 1, *parse_marker(m.group(1)))
            i += 1
            continue
        fence = FENCE.match(line)
        if not fence:
            if line.strip() and marker is not None:
                out.append(Command(source, marker[0], lines[marker[0] - 1].strip(), problem="a docs-test marker "
                                   "that is not right before a code block"))
                marker = None
            i += 1
            continue
        indent, ticks, tag = fence.groups()
        body_start = i + 1
        i += 1
        while i < len(lines) and not re.match(rf"^\s*{re.escape(ticks[0])}{{{len(ticks)},}}\s*$", lines[i]):
            i += 1
        body = [(n + 1, lines[n]) for n in range(body_start, min(i, len(lines)))]
        i += 1
        if marker is not None:
            where, reason, problem = marker
            marker = None
            if problem:
                out.append(Command(source, where, lines[where - 1].strip(), problem=problem))
                continue
            out.append(Command(source, body_start, f"```{tag} block", skip=reason))
            continue
        if tag.lower() in RUN_TAGS:
            out.extend(block_commands(body, source, console=tag.lower() == "console"))
    if marker is not None:
        out.append(Command(source, marker[0], lines[marker[0] - 1].strip(),
                           problem="a docs-test marker that is not right before a code block"))
    return out


def parse_marker(content: str) -> tuple[str | None, str | None]:
    """``docs-test: skip: REASON`` as (reason, None), or (None, the problem)."""
    body = content.strip()
    if not re.match(r"^skip\b", body):
        return None, f"unknown docs-test marker {body!r} (the only one is 'docs-test: skip: REASON')"
    reason = body[4:].strip().lstrip(":").strip()
    if not reason:
        return None, "a docs-test skip marker without a reason (write <!-- docs-test: skip: REASON -->)"
    return reason, None


def block_commands(body: Iterable[tuple[int, str]], source: str, console: bool = False) -> list[Command]:
    """The commands of one code block: ``\\`` continues a line, ``$ `` prompts are dropped (in a
    ``console`` block only prompted lines are commands), comments are dropped, ``A && B`` are two."""
    out: list[Command] = []
    pending: list[str] = []
    start = 0
    for number, raw in body:
        line = raw.strip()
        if not pending:
            if console and not line.startswith("$"):
                continue
            line = re.sub(r"^\$\s*", "", line)
            if not line or line.startswith("#"):
                continue
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1].strip())
            continue
        pending.append(line)
        text, pending = " ".join(pending), []
        out.extend(split_line(text, source, start))
    if pending:
        out.extend(split_line(" ".join(pending), source, start))
    return out


def split_line(text: str, source: str, line: int) -> list[Command]:
    """One command line as Commands: shell words, split at ``&&`` and ``;``, comment dropped."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars="|&;")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError as err:
        return [Command(source, line, text, problem=f"cannot be read as a shell line: {err}")]
    groups: list[list[str]] = [[]]
    for word in words:
        if word in ("&&", ";"):
            groups.append([])
        elif word in ("||", "&"):
            return [Command(source, line, text, problem=f"'{word}' is not supported in documented commands")]
        else:
            groups[-1].append(word)
    return [Command(source, line, text, tuple(g), index=n) for n, g in enumerate(x for x in groups if x)]


def help_commands(parser: argparse.ArgumentParser) -> list[Command]:
    """The example lines of every subcommand's ``--help`` (its epilog's ``examples:`` section, up to
    the first blank line; a trailing two-space ``(note)`` dropped), source ``help-CMD``, all in the
    group ``help``."""
    out: list[Command] = []
    for name, sub in subparsers(parser):
        epilog = sub.epilog or ""
        section = False
        for number, raw in enumerate(epilog.splitlines(), 1):
            if raw.strip().lower() == "examples:":
                section = True
                continue
            if section and not raw.strip():
                section = False
            if section:
                text = HELP_NOTE.sub("", raw).strip()
                out.extend(replace(c, group="help") for c in split_line(text, f"help-{name.replace(' ', '-')}", number))
    return out


def subparsers(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    """Every subcommand's parser, ``bench env`` and the like included, in the parser's order."""
    out: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                full = f"{prefix}{name}"
                out.append((full, sub))
                out.extend(subparsers(sub, full + " "))
    return out


# ------------------------------------------------------------------ what a command is
def classify(words: tuple[str, ...]) -> tuple[str, Invocation | None, str | None]:
    """(kind, invocation, problem): kind ``run``, ``not-run`` or ``unknown``."""
    words = list(words)
    env: list[tuple[str, str]] = []
    while words and ENV_ASSIGNMENT.match(words[0]):
        key, _, value = words.pop(0).partition("=")
        env.append((key, value))
    stdin = None
    if "|" in words:
        left, right = words[:words.index("|")], words[words.index("|") + 1:]
        if "|" in right or not left or left[0] not in ("printf", "echo"):
            return "unknown", None, "a pipe is only supported as printf/echo TEXT | COMMAND (the command's input)"
        stdin = printf_text(left[1:]) if left[0] == "printf" else " ".join(left[1:]) + "\n"
        words = right
    stdout = None
    for op in (">", ">>"):
        if op in words:
            at = words.index(op)
            if at + 1 >= len(words):
                return "unknown", None, f"'{op}' without a file"
            stdout = words[at + 1]
            words = words[:at] + words[at + 2:]
    if not words:
        return "unknown", None, "no command"
    head = words[0]
    if head in NOT_RUN:
        return "not-run", None, None
    if head == "conhex-zero":
        return "run", Invocation("conhex-zero", tuple(words[1:]), tuple(env), stdin, stdout), None
    if head in ("python", "python3"):
        if len(words) >= 3 and words[1] == "-m":
            if words[2] in NOT_RUN_MODULES:
                return "not-run", None, None
            if words[2] in CLI_MODULES:
                return "run", Invocation("python-cli", tuple(words[3:]), tuple(env), stdin, stdout), None
        return "run", Invocation("python", tuple(words[1:]), tuple(env), stdin, stdout), None
    return "unknown", None, (f"'{head}' is not a command this test knows: documented commands start with "
                             f"conhex-zero or python, or are one of {', '.join(NOT_RUN)} (not run); mark the block "
                             "<!-- docs-test: skip: REASON --> otherwise")


def printf_text(args: list[str]) -> str:
    """What ``printf FORMAT`` writes (the escapes \\n, \\t, \\\\ only)."""
    if not args:
        return ""
    return args[0].replace("\\\\", "\0").replace("\\n", "\n").replace("\\t", "\t").replace("\0", "\\")


# ------------------------------------------------------------------ shrinking
def shrink(inv: Invocation, cuda: bool = False) -> Invocation:
    """The invocation with sizes that run in seconds (see CLI_SHRINK, SCRIPT_SHRINK, TRAIN_SMALL);
    without ``cuda``, a command asking for CUDA runs on the CPU."""
    notes: list[str] = []
    if inv.program in ("conhex-zero", "python-cli"):
        args = shrink_cli(list(inv.args), cuda, notes)
    else:
        args = shrink_script(list(inv.args), cuda, notes)
    return replace(inv, args=tuple(args), notes=tuple(notes))


def subcommand(args: list[str]) -> tuple[str, int]:
    """(``train``, ``bench env``, ``book grow`` ..., the index after it) of conhex-zero arguments."""
    if not args or args[0].startswith("-"):
        return "", 0
    if args[0] in ("bench", "book") and len(args) > 1 and not args[1].startswith("-"):
        return f"{args[0]} {args[1]}", 2
    return args[0], 1


def shrink_cli(args: list[str], cuda: bool = False, notes: list[str] | None = None) -> list[str]:
    """conhex-zero arguments with small sizes (players' simulations and seconds too)."""
    notes = [] if notes is None else notes
    args = [shrink_player(w) for w in flat_words(args)]
    name, at = subcommand(args)
    if not cuda:
        args = on_cpu(args, notes)
        if name in ("train", "piece", "bench selfplay") and "--device" not in args:
            args[at:at] = ["--device", "cpu"]
    for option, (value, add) in CLI_SHRINK.get(name, {}).items():
        if name in SEARCHING and option == "--sims" and "--seconds" not in args and not any(
                ":sims=" in a or ":seconds=" in a for a in args):
            add = True
        if option == "--gtp-parallel":
            add = any(a.startswith("gtp") for a in args)
        args = set_option(args, option, value, add, at)
    if name == "serve":
        args = set_option(args, "--port", 0, True, at, lower=False)
    if name == "report" or name == "openings" and ("--png" in args or "--svg" in args):
        args = set_size(args, SMALL_PICTURE, at)
    if name == "train":
        args = shrink_train(args, at)
    if name == "piece" and "--list" not in args:
        args = shrink_piece(args, at)
    if name == "bench selfplay":
        args = set_overrides(args, SELFPLAY_SMALL, add=True)
    return args


def shrink_train(args: list[str], at: int) -> list[str]:
    """A training run (or its resumption) of one iteration, with the small config of TRAIN_SMALL
    (a resumption keeps the stored config: only the keys it overrides are made small)."""
    args = set_option(args, "--stop-after", 1, True, at)
    return set_overrides(args, TRAIN_SMALL, add="--resume" not in args)


def shrink_piece(args: list[str], at: int) -> list[str]:
    """A piece of a line: one iteration on the CPU with the small config of TRAIN_SMALL (a carried
    state may change any of those keys, the number of games included)."""
    args = set_option(args, "--stop-after", 1, True, at)
    return set_overrides(args, TRAIN_SMALL, add=True)


def shrink_script(args: list[str], cuda: bool, notes: list[str]) -> list[str]:
    """``python SCRIPT ARGS`` with small sizes (train.py as ``conhex-zero train``, count_ops.py's
    command as a conhex-zero command)."""
    if not args or args[0].startswith("-"):
        return args
    script, rest = args[0], args[1:]
    name = Path(script).name
    if name == "train.py":
        return [script] + shrink_cli(["train", *rest], cuda, notes)[1:]
    if name == "count_ops.py":
        own, command = split_count_ops(rest)
        return [script, *own, *shrink_cli(command, cuda, notes)]
    rest = flat_words(rest)
    if not cuda:
        rest = on_cpu(rest, notes)
    for option, (value, add) in SCRIPT_SHRINK.get(name, GENERIC_SHRINK).items():
        rest = set_option(rest, option, value, add, 0)
    extra = SCRIPT_EXTRA.get(name, [])
    if extra and extra[0] not in rest:
        rest = [*rest, *extra]
    if name in SCRIPT_OVERRIDES:
        rest = set_overrides(rest, SCRIPT_OVERRIDES[name], add=True)
    return [script, *rest]


def split_count_ops(args: list[str]) -> tuple[list[str], list[str]]:
    """count_ops.py's own options, and the conhex-zero command after them (or after ``--``)."""
    own: list[str] = []
    i = 0
    while i < len(args):
        if args[i] == "--":
            return own, args[i + 1:]
        if not args[i].startswith("-"):
            break
        takes_value = args[i] in ("--json", "--top")
        own.extend(args[i:i + 1 + takes_value])
        i += 1 + takes_value
    return own, args[i:]


def flat_words(args: list[str]) -> list[str]:
    """``--opt=value`` as two words."""
    out: list[str] = []
    for word in args:
        out.extend(word.split("=", 1) if word.startswith("--") and "=" in word else [word])
    return out


def shrink_player(word: str) -> str:
    """Player specs with few simulations and little time; a ``gtp:conhex-zero ...`` engine shrunk too."""
    m = re.match(r"^(gtp(?:@[^:]*)?:)(conhex-zero\s.*)$", word)
    if m:
        inner = shlex.split(m.group(2))
        return m.group(1) + shlex.join(["conhex-zero", *shrink_cli(inner[1:], cuda=True)])
    word = re.sub(r"mcts-rollout:(\d+)", lambda k: f"mcts-rollout:{min(int(k.group(1)), SMALL_ROLLOUTS)}", word)
    word = re.sub(r"([:,])sims=(\d+)", lambda k: f"{k.group(1)}sims={min(int(k.group(2)), SMALL_SIMS)}", word)
    return re.sub(r"([:,])seconds=([0-9.]+)",
                  lambda k: f"{k.group(1)}seconds={min(float(k.group(2)), SMALL_SECONDS):g}", word)


def on_cpu(args: list[str], notes: list[str]) -> list[str]:
    """``--device cuda[:N]`` and ``device=cuda`` overrides as the CPU."""
    out = list(args)
    for i, word in enumerate(out):
        if i and out[i - 1] == "--device" and word.startswith("cuda"):
            out[i] = "cpu"
            notes.append("no CUDA device: run on the CPU")
        elif re.match(r"^device=cuda", word):
            out[i] = "device=cpu"
            notes.append("no CUDA device: run on the CPU")
    return out


def set_option(args: list[str], option: str, value: object, add: bool, at: int, lower: bool = True) -> list[str]:
    """``option``'s size replaced by ``value`` (a given single number only lowered; several numbers
    or a comma list become ``value``), or ``option value`` inserted at ``at`` when absent and ``add``.
    An option followed by no number (a flag, a name) is left alone."""
    if option not in args:
        return args[:at] + [option, str(value)] + args[at:] if add else args
    i = args.index(option)
    end = i + 1
    while end < len(args) and is_size(args[end]):
        end += 1
    if end == i + 1:
        return args
    given = args[i + 1:end]
    new = str(value)
    if lower and len(given) == 1 and "," not in given[0] and float(given[0]) <= float(str(value)):
        new = given[0]
    return args[:i + 1] + [new] + args[end:]


def set_size(args: list[str], size: str, at: int) -> list[str]:
    """Pictures drawn at ``size`` (``--size WxH``), given or not."""
    if "--size" in args:
        i = args.index("--size")
        return args[:i + 1] + [size] + args[i + 2:]
    return args[:at] + ["--size", size] + args[at:]


def is_size(word: str) -> bool:
    """A number, or a comma-separated list of numbers (``--procs 1,2,4``)."""
    return bool(re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?(,[0-9.]+)*", word)) and word not in (".", "..")


def set_overrides(args: list[str], small: dict[str, object], add: bool) -> list[str]:
    """``key=value`` config overrides: the given ones of ``small``'s keys replaced; the others
    appended when ``add``."""
    out, seen = [], set()
    for word in args:
        key = word.partition("=")[0]
        if "=" in word and not word.startswith("-") and key in small:
            out.append(f"{key}={small[key]}")
            seen.add(key)
        else:
            out.append(word)
    if add:
        out += [f"{k}={v}" for k, v in small.items() if k not in seen]
    return out


# ------------------------------------------------------------------ outputs and inputs
def outputs(inv: Invocation) -> set[str]:
    """Paths the command writes (values of OUTPUT_OPTIONS, ``> FILE``)."""
    args, found = list(inv.args), set()
    for i, word in enumerate(args[:-1]):
        value = args[i + 1]
        if word in OUTPUT_OPTIONS and not value.startswith("-") and (word != "--json" or value.endswith(".json")):
            found.add(value.rstrip("/"))
    if inv.stdout:
        found.add(inv.stdout)
    name, at = subcommand(args) if inv.program in ("conhex-zero", "python-cli") else ("", 0)
    if name == "piece" and "--list" not in args:  # a piece writes its line
        line = next((w for w in args[at:] if not w.startswith("-") and "=" not in w), None)
        if line is not None and "--out" not in args:
            found.add(line.rstrip("/"))
    return found


def reads(inv: Invocation, path: str) -> bool:
    """Whether one of the command's words names ``path`` or something inside it (its own outputs
    other than ``--resume`` aside)."""
    args = list(inv.args)
    own = {args[i + 1] for i, w in enumerate(args[:-1]) if w in OUTPUT_OPTIONS and w != "--resume"}
    pattern = re.compile(rf"(^|[\s:=@\"']){re.escape(path)}($|[\s/:,\"'])")
    return any(pattern.search(word) for word in args if word not in own)


def prerequisites(commands: list[Command], target: Command) -> list[Command]:
    """The earlier commands of ``target``'s scope (source or group) that write what it reads, and
    theirs, in order."""
    runs = [(c, classify(c.words)[1]) for c in commands if c.scope == target.scope and not c.skip and not c.problem]
    runs = [(c, inv) for c, inv in runs if inv is not None]
    position = next(i for i, (c, _) in enumerate(runs) if c.id == target.id)
    needed: list[int] = []
    wanted = [position]
    while wanted:
        k = wanted.pop()
        inv_k = runs[k][1]
        for j in range(k):
            if j not in needed and any(reads(inv_k, path) for path in outputs(runs[j][1])):
                needed.append(j)
                wanted.append(j)
    return [runs[j][0] for j in sorted(needed)]
