"""Parsing text that a user, a client or a damaged file supplies: JSON and YAML with bounds.

Python's parsers recurse once per level of nesting and turn digits into integers of any size, so
hostile or damaged text becomes a ``RecursionError`` (thousands of lines of traceback), Python's
4,300-digit ``ValueError``, or an integer that overflows later in torch. Here nesting deeper than
``MAX_DEPTH`` levels, whole numbers of ``2**63`` or more, and ``NaN`` / ``Infinity`` (not JSON) are
refused at once:

* ``loads_json(text)`` raises ``json.JSONDecodeError`` (a ``ValueError``), so callers that already
  report malformed JSON in one line report these too;
* ``load_yaml(text)`` raises ``UntrustedTextError`` with a one-line reason (YAML's own errors are
  several lines long: only their first line and position are kept).
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 100
"""Lists and objects nested deeper than this are refused (our files nest at most a few levels)."""

INT_LIMIT = 2**63
"""Whole numbers at or beyond this size are refused (nothing we read holds one; torch cannot)."""

_MAX_INT_DIGITS = 25  # more digits than any number below INT_LIMIT: refused before converting


class UntrustedTextError(ValueError):
    """Text that cannot be parsed safely; the message is one line."""


class _Refused(ValueError):
    """Raised inside the JSON parser's hooks; becomes a ``JSONDecodeError``."""


def _parse_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > _MAX_INT_DIGITS or abs(int(text)) >= INT_LIMIT:
        raise _Refused(f"a whole number of {len(digits)} digits is too large (at most {INT_LIMIT - 1})")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:20]}{'...' * (len(text) > 20)} is too large")
    return value


def _parse_constant(name: str) -> float:
    raise _Refused(f"{name} is not a JSON number")


def nesting_depth(value: Any) -> int:
    """How deeply lists, tuples and dicts nest in ``value`` (a scalar: 0), without recursion; a
    value shared by several parents (YAML aliases) is measured once."""
    heights: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        node, done = stack.pop()
        if not isinstance(node, (list, tuple, dict)) or (id(node) in heights and not done):
            continue
        children = list(node.values()) if isinstance(node, dict) else list(node)
        if done:
            heights[id(node)] = 1 + max((heights.get(id(c), 0) for c in children), default=0)
            if heights[id(node)] > MAX_DEPTH:
                return heights[id(node)]
            continue
        heights[id(node)] = 0  # in progress: a cycle (impossible in JSON) counts no further
        stack.append((node, True))
        stack.extend((c, False) for c in children if isinstance(c, (list, tuple, dict)) and id(c) not in heights)
    return heights.get(id(value), 0)


def _too_deep() -> str:
    return f"lists or objects nested more than {MAX_DEPTH} levels deep"


def loads_json(text: str | bytes) -> Any:
    """``json.loads`` with bounds (see the module docstring); ``json.JSONDecodeError`` otherwise."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)
    except _Refused as err:
        raise json.JSONDecodeError(str(err), text, 0) from None
    except RecursionError:
        raise json.JSONDecodeError(_too_deep(), text, 0) from None
    if nesting_depth(value) > MAX_DEPTH:
        raise json.JSONDecodeError(_too_deep(), text, 0)
    return value


def _yaml_reason(err: Exception) -> str:
    """A YAML error in one line: its problem and where."""
    text = str(err).strip()
    problem = getattr(err, "problem", None) or (text.splitlines()[0] if text else type(err).__name__)
    mark = getattr(err, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return f"{problem}{where}"


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with bounds; ``UntrustedTextError`` (one line) for anything it refuses."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except RecursionError:
        raise UntrustedTextError(_too_deep()) from None
    except yaml.YAMLError as err:
        raise UntrustedTextError(f"not valid YAML: {_yaml_reason(err)}") from None
    except (ValueError, OverflowError) as err:  # e.g. Python's limit on the digits of an integer
        if "digits" in str(err):
            raise UntrustedTextError("a whole number has thousands of digits (too large)") from None
        raise UntrustedTextError(f"a value cannot be read ({str(err).splitlines()[0][:120]})") from None
    if nesting_depth(value) > MAX_DEPTH:
        raise UntrustedTextError(_too_deep())
    return value
