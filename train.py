#!/usr/bin/env python
"""Train a conhex-zero agent by self-play (the same as ``conhex-zero train``).

    python train.py --config configs/tiny.yaml [--run-dir DIR] [--resume DIR] [--device cpu|cuda] [key=value ...]
"""

import argparse
import sys

from conhex_zero.cli.main import run_command
from conhex_zero.cli.train_cmd import EPILOG, add_arguments, run

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="train.py", description=__doc__, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    sys.exit(run_command("train", run, parser.parse_args()))
