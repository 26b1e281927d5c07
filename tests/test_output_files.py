"""Output files of commands: written whole (atomic), and default names never shared by two runs."""

import threading

from conhex_zero.files.disk import new_file, write_text_atomic


def test_an_atomic_write_replaces_the_file_whole_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "out" / "result.json"
    write_text_atomic(path, "first\n")
    write_text_atomic(path, "second\n")
    assert path.read_text() == "second\n"
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]


def test_concurrent_atomic_writes_never_interleave(tmp_path):
    path = tmp_path / "records.jsonl"
    texts = [f"{k}\n" * 20_000 for k in range(8)]
    threads = [threading.Thread(target=write_text_atomic, args=(path, t)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert path.read_text() in texts  # one writer's whole text, not a mixture
    assert [p.name for p in tmp_path.iterdir()] == ["records.jsonl"]


def test_a_device_is_written_directly(tmp_path):
    assert write_text_atomic("/dev/null", "nothing\n").as_posix() == "/dev/null"


def test_new_files_in_the_same_second_get_their_own_names(tmp_path):
    names = [new_file(tmp_path / "a-vs-b-20261126-120000.jsonl") for _ in range(3)]
    assert [n.name for n in names] == ["a-vs-b-20261126-120000.jsonl", "a-vs-b-20261126-120000-2.jsonl",
                                       "a-vs-b-20261126-120000-3.jsonl"]
    assert all(n.exists() for n in names)
