"""Files written and read safely: writes that name a full disk (``disk``), checksums sealed into
the files ``torch.save`` writes (``file_seal``), JSON lines that survive a torn last line (``jsonl``),
and bounded parsing of JSON and YAML that a user, a client or a damaged file supplies (``untrusted``).
"""
