"""A scripted GTP engine for the tests: plays the first empty cell of a Hex board.

    python fake_gtp.py [good|illegal|garbage|silent|crash|error|resign]

Modes change what ``genmove`` answers: a legal move (good), an occupied cell (illegal), nonsense
(garbage), nothing at all (silent: the caller must time out), an exit (crash), an error reply
(error), or ``resign``. With ``FAKE_GTP_LOG=FILE`` in the environment every command received is
appended to FILE (one line each), for tests that count what an engine was told; with
``FAKE_GTP_STARTUP=S`` it sleeps S seconds before it reads anything (a program slow to start).
"""

import os
import sys
import time

time.sleep(float(os.environ.get("FAKE_GTP_STARTUP", "0")))

mode = sys.argv[1] if len(sys.argv) > 1 else "good"
size = 11
taken = set()
letters = "abcdefghijklmnopqrs"


def reply(text="", ok=True):
    sys.stdout.write(("= " if ok else "? ") + text + "\n\n")
    sys.stdout.flush()


log = open(os.environ["FAKE_GTP_LOG"], "a") if os.environ.get("FAKE_GTP_LOG") else None

for line in sys.stdin:
    if log is not None:
        log.write(line if line.endswith("\n") else line + "\n")
        log.flush()
    parts = line.split()
    if not parts:
        continue
    cmd = parts[0]
    if cmd == "boardsize":
        size = int(parts[1])
        reply()
    elif cmd == "clear_board":
        taken.clear()
        reply()
    elif cmd == "play":
        taken.add(parts[2].lower())
        reply()
    elif cmd == "genmove":
        if mode == "crash":
            sys.exit(3)
        if mode == "silent":
            continue
        if mode == "garbage":
            sys.stdout.write("hello there\n\n")
            sys.stdout.flush()
            continue
        if mode == "error":
            reply("cannot think", ok=False)
            continue
        if mode == "resign":
            reply("resign")
            continue
        cells = [f"{letters[c]}{r + 1}" for r in range(size) for c in range(size)]
        empty = [x for x in cells if x not in taken]
        move = next(iter(taken)) if (mode == "illegal" and taken) else empty[0]
        taken.add(move)
        reply(move)
    elif cmd == "name":
        reply("fake")
    elif cmd == "quit":
        reply()
        break
    else:
        reply("unknown command", ok=False)
