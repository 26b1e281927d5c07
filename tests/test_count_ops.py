"""benchmarks/count_ops.py, the op-counting profiler: it runs a conhex-zero command in its process
under torch's profiler and reports aten ops, host syncs by kind and sparse ops (also as JSON)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_count_ops():
    spec = importlib.util.spec_from_file_location("count_ops", ROOT / "benchmarks" / "count_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_counts_a_command(tmp_path: Path, capsys) -> None:
    count_ops = load_count_ops()
    out = tmp_path / "ops.json"
    code = count_ops.main(["--json", str(out), "--top", "3", "--", "bench", "env", "--game", "hex-3", "--batch", "8",
                           "--seconds", "0.05", "--json"])
    assert code == 0
    printed = capsys.readouterr().out
    assert '"steps_per_s"' in printed and "aten ops:" in printed and "host syncs:" in printed
    result = json.loads(out.read_text())
    for key in ("command", "exit_code", "host_reads_on", "aten_ops", "host_syncs", "syncs_by_kind", "sparse_ops",
                "sparse_by_name", "top_ops", "steps", "per_step", "torch"):
        assert key in result, key
    assert result["command"][:3] == ["conhex-zero", "bench", "env"] and result["exit_code"] == 0
    assert result["aten_ops"] > 0 and len(result["top_ops"]) == 3
    assert all(n > 0 for _, n in result["top_ops"]) and result["top_ops"][0][1] >= result["top_ops"][-1][1]
    assert set(result["syncs_by_kind"]) == {"aten::_local_scalar_dense", "aten::nonzero", "aten::item",
                                            "aten::is_nonzero"}
    assert result["sparse_ops"] == 0


def test_self_play_on_the_gpu_path_is_sync_free(capsys) -> None:
    """bench selfplay prints its steps: the counts come per step too; with --no-host-reads (the GPU's
    path) a self-play step reads nothing on the host, and the switch is undone afterwards."""
    count_ops = load_count_ops()
    from conhex_zero.device import host_reads

    before = host_reads.HOST_READ_DEVICES
    code = count_ops.main(["--json", "-", "--no-host-reads", "bench", "selfplay", "--config",
                           str(ROOT / "configs" / "tiny.yaml"), "--device", "cpu", "--seconds", "0.05", "--json",
                           "selfplay.games=2", "selfplay.full_sims=2", "selfplay.cheap_sims=1", "selfplay.max_considered=2"])
    assert code == 0 and host_reads.HOST_READ_DEVICES == before
    printed = capsys.readouterr().out
    result = json.loads(printed[printed.rindex('{\n "command"'):])
    assert result["host_reads_on"] == [] and result["steps"] > 0
    assert result["per_step"]["aten_ops"] > 0 and result["host_syncs"] == 0


def test_the_command_fails_as_itself(capsys) -> None:
    count_ops = load_count_ops()
    assert count_ops.main(["rules", "no-such-game"]) == 2
    assert "host syncs:" in capsys.readouterr().out
