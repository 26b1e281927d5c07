"""SVG charts: round ticks for any range, and a well-formed document."""

import xml.etree.ElementTree as ET

from conhex_zero.viz.svg import Series, _ticks, line_chart


def test_ticks_are_round_and_few():
    assert _ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert _ticks(0.5, 28.8) == [5, 10, 15, 20, 25]
    assert _ticks(0.0012, 0.0051) == [0.002, 0.003, 0.004, 0.005]
    assert _ticks(3, 3) == [3]
    for lo, hi in ((0, 1e-7), (-50, 1234), (1e6, 3e6)):
        assert 2 <= len(_ticks(lo, hi)) <= 12


def test_line_chart_is_valid_svg():
    svg = line_chart([Series("a & b", [0, 1, 2], [0.1, 0.5, 0.9], [0, 0.4, 0.8], [0.2, 0.6, 1.0])],
                     "title <x>", "minutes", "win rate", y_range=(0, 1))
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg") and "a &amp; b" in svg and "title &lt;x&gt;" in svg
