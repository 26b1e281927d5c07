"""Progress bars: tqdm's bar on a terminal, whole lines now and then when the stream is a log."""

import io

from tqdm import tqdm

from conhex_zero.console import progress
from conhex_zero.console.progress import LogLines, progress_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_tqdm_bar_with_carriage_returns():
    out = _Terminal()
    with progress_bar(total=3, desc="t", file=out) as bar:
        assert type(bar) is tqdm
        bar.update(3)
    assert "\r" in out.getvalue()


def test_a_log_gets_whole_lines_at_most_once_per_interval(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    with progress_bar(total=100, desc="iter 1 self-play", unit="pos", file=out, interval=30.0, mininterval=0,
                      miniters=1) as bar:
        assert isinstance(bar, LogLines)
        for _ in range(100):
            clock[0] += 1.0  # 100 updates a second apart: a line after 30, 60 and 90 seconds
            bar.update(1)
    text = out.getvalue()
    lines = text.splitlines()
    assert "\r" not in text and "\x1b" not in text and text.endswith("\n")
    assert [line.split(" [")[0] for line in lines] == [
        "iter 1 self-play:  30% 30/100", "iter 1 self-play:  60% 60/100", "iter 1 self-play:  90% 90/100",
        "iter 1 self-play: 100% 100/100"]  # and the final count when it ends
    assert all("pos/s" in line for line in lines)


def test_the_final_line_is_not_repeated(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    with progress_bar(total=2, desc="x", file=out, interval=5.0, mininterval=0, miniters=1) as bar:
        bar.update(1)
        clock[0] = 10.0
        bar.update(1)
    assert [line.split(" [")[0] for line in out.getvalue().splitlines()] == ["x: 100% 2/2"]


def test_a_short_bar_in_a_log_writes_nothing_and_unknown_totals_work():
    out = io.StringIO()
    assert list(progress_bar(range(5), desc="short", file=out)) == list(range(5))
    assert out.getvalue() == ""
    with progress_bar(desc="open", file=out, interval=0.0) as bar:
        bar.update(4)
    assert out.getvalue().splitlines()[-1].startswith("open: 4 [")


def test_a_disabled_bar_writes_nothing():
    out = io.StringIO()
    with progress_bar(total=3, file=out, disable=True, interval=0.0) as bar:
        bar.update(3)
    assert out.getvalue() == ""


def test_train_piped_to_a_log_writes_no_carriage_returns(tmp_path):
    """The training loop's progress bars, piped (stderr not a terminal), do not pile up into one line.
    (No evaluation games: the arena's own bar is not drawn through progress_bar yet.)"""
    import subprocess
    import sys
    from pathlib import Path

    tiny = Path(__file__).resolve().parent.parent / "configs" / "tiny.yaml"
    out = subprocess.run([sys.executable, "-m", "conhex_zero.cli.main", "train", "--config", str(tiny), "--run-dir",
                          str(tmp_path / "run"), "iterations=2", "eval.games=0", "eval.previous_games=0"],
                         capture_output=True, timeout=300)  # bytes: text mode would turn \r into \n
    assert out.returncode == 0, out.stderr
    assert b"\r" not in out.stderr and b"\r" not in out.stdout
    assert b"iter 2/2" in out.stdout
