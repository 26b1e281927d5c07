"""``python -m conhex_zero ARGS``: the same as the ``conhex-zero ARGS`` command."""

import sys

from conhex_zero.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
