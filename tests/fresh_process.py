"""A ``conhex-zero`` command in a new interpreter, for the tests of refusals that must come before
torch is imported (issues 47 and 58): its exit code, and the lines of its standard error, the last
of which says whether torch was imported."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = ("import sys; from conhex_zero.cli.main import main; code = main(sys.argv[1:]); "
         "print('torch imported:', 'torch' in sys.modules, file=sys.stderr); sys.exit(code)")


def run_fresh(args: list[str], cwd: Path = ROOT) -> tuple[int, list[str]]:
    """``conhex-zero ARGS`` in a new interpreter: the exit code and the lines of standard error."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return proc.returncode, proc.stderr.strip().splitlines()
