"""conhex-zero: AlphaZero-style self-play for the connection games ConHex and Hex.

Packages: ``games`` (boards and rules as data), ``env`` (the batched tensor rules engine and its
plain-Python oracle), ``bench`` (throughput measurements), ``cli`` (the ``conhex-zero`` command).
"""

__version__ = "0.1.0"
