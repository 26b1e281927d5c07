"""What the ``book`` subcommands share: recognising a book folder, opening it with a one-line
error, and the folder's lock (one writer at a time: ``grow`` and ``prove``)."""

from __future__ import annotations

from pathlib import Path

from conhex_zero.cli.common import CliError


def is_book_folder(path: str | Path) -> bool:
    return (Path(path) / "book.jsonl").is_file() or (Path(path) / "book.jsonl.gz").is_file()


def check_book_folder(path: str) -> None:
    if not is_book_folder(path):
        if not Path(path).exists():
            raise CliError(f"no book at {path} (grow one with conhex-zero book grow CKPT --out {path})")
        raise CliError(f"{path} is not a book: it has no book.jsonl (grow one with conhex-zero book grow CKPT "
                       f"--out {path})")


class BookLock:
    """One writer at a time on a book folder, ``book grow`` or ``book prove`` (an advisory lock on
    ``DIR/.grow.lock``)."""

    def __init__(self, folder: Path):
        self.path = folder / ".grow.lock"

    def __enter__(self):
        import fcntl

        self.file = open(self.path, "w")
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.file.close()
            raise CliError(f"{self.path.parent} is being grown by another book grow (or proved by a book prove): "
                           f"wait for it, or stop it") from None
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()


def open_checked(folder: str):
    """The opened book; a damaged or cut one is refused before torch is imported (issue 58)."""
    from conhex_zero.book import folder as book_folder
    from conhex_zero.book.store import BookError

    check_book_folder(folder)
    try:
        return book_folder.open_book(folder)
    except BookError as err:
        raise CliError(str(err)) from None


def line_name(opened, key: str | None) -> str:
    """A book position named by its moves from the book's start (``e4 d5``; ``the start`` for the start
    itself, ``a position not in the book`` where the key is none of its positions)."""
    from conhex_zero.games.game import parse_game

    node = opened.book.nodes.get(key)
    if node is None:
        return "a position not in the book"
    game = parse_game(opened.game) if isinstance(opened.game, str) else opened.game
    return " ".join(list(opened.start_moves) + [game.action_name(a) for a in node.line]) or "the start"


def preflight_book_folder(folder: str) -> None:
    """A book folder that exists and holds a book, checked before torch is imported (under a second)."""
    path = Path(folder)
    if not path.exists():
        raise CliError(f"no book at {folder}: it does not exist (grow one with conhex-zero book grow CKPT --out {folder})")
    if not path.is_dir():
        raise CliError(f"{folder} is a file, not a book folder")
    if not ((path / "book.jsonl").is_file() or (path / "book.jsonl.gz").is_file()):
        raise CliError(f"no book at {folder} (grow one with conhex-zero book grow CKPT --out {folder})")
