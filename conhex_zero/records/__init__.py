"""Game records: read and write real games, replay them, review them with an AI.

* ``read_records(path)`` reads our arena's JSON lines and SGF: Little Golem's ConHex records
  (``FF[CONHEX]``, rows counted from the bottom), Little Golem's Hex records, Hex SGF (``GM[11]``:
  HexGui, MoHex, PlayHex); a file may hold several games. Each becomes a ``GameRecordData`` whose
  ``moves`` replay in our engine (``check_record``), with the file's own notation kept beside them.
* ``write_sgf(record)`` writes Little Golem style ConHex or ``GM[11]`` Hex SGF.
* ``review_game(game, moves, player)`` (``records.review``) searches every position of a game in one
  batch: each move's value before and after, the AI's preferred move, the biggest mistakes.

The conventions of each format, and how they were checked, are in ``records/formats.py``.
"""

from conhex_zero.records.formats import (check_record, parse_records, read_records, record_from_arena,
                                         record_from_moves, select_record, write_sgf)
from conhex_zero.records.model import ENDINGS, FORMATS, GameRecordData, RecordError

__all__ = ["ENDINGS", "FORMATS", "GameRecordData", "RecordError", "check_record", "parse_records",
           "read_records", "record_from_arena", "record_from_moves", "select_record", "write_sgf"]
