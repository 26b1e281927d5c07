"""conhex-zero: AlphaZero-style self-play for the connection games ConHex and Hex.

Packages: ``games`` (boards and rules as data), ``env`` (the batched tensor rules engine and its
plain-Python oracle), ``nn`` (the graph network, checkpoints), ``search`` (batched and lean MCTS),
``agents`` (players, arena), ``ladder`` (Elo ratings), ``train`` (self-play training, lines of
pieces), ``analysis``, ``records``, ``play`` (terminal, GTP, browser), ``viz``, ``bench``
(throughput measurements), ``files`` (what is written and read safely), ``console`` (progress and
messages), ``device`` (where the host may read a device value), ``cli`` (the ``conhex-zero``
command). docs/design.md, "Layout of the code", maps their modules.
"""

__version__ = "0.1.0"
