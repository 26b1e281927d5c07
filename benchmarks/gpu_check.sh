#!/usr/bin/env bash
# The GPU check in one script: correctness on CUDA against the CPU, then the figures of
# docs/gpu.md ("Speed on a GPU"), then a short real training run. Each step has its own time
# limit so that one slow step cannot eat the others; a failed step is logged and the next runs.
#
#   OUT=/tmp/gpu bash benchmarks/gpu_check.sh            # on a machine with a CUDA build of torch
#   DEVICE=cpu QUICK=1 OUT=/tmp/gpu bash benchmarks/gpu_check.sh   # dry run of every command
#   ONLY="tests syncs train" OUT=/tmp/gpu bash benchmarks/gpu_check.sh  # some steps, by name
#   T_TRAIN_S=240 ...                    # a step's time limit (T_TEST_S T_NET_S T_COMPILE_S T_SP_S T_TRAIN_S)
#
# Writes $OUT/log.txt (everything printed), $OUT/results.json (each bench's JSON by step name,
# each step's exit status and seconds) and $OUT/train_metrics.jsonl (the training run's log).
set -u
OUT=${OUT:-runs/gpu-check}
DEVICE=${DEVICE:-cuda}
QUICK=${QUICK:-0}
mkdir -p "$OUT"
STEPS=$(mktemp -d)   # per-step output, outside $OUT (a device run brings back few files)
LOG="$OUT/log.txt"
: >"$LOG"; rm -f "$OUT/results.json"
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # the scripts in benchmarks/ import the package

if [ "$QUICK" = 1 ]; then   # the same commands, shrunk to seconds on a CPU
    NET_BATCH=64; SECS=2; SP_OVERRIDES="selfplay.games=16"
    TRAIN_OVERRIDES="selfplay.games=16 selfplay.positions_per_iteration=256 replay.min_size=256"
    T_TEST=60; T_NET=60; T_COMPILE=240; T_SP=120; T_TRAIN=240
else
    NET_BATCH=4096; SECS=10; SP_OVERRIDES=""
    TRAIN_OVERRIDES="replay.min_size=16384 selfplay.positions_per_iteration=16384"
    T_TEST=150; T_NET=40; T_COMPILE=90; T_SP=100; T_TRAIN=150
fi
# Any step's limit can be set from outside, e.g. T_TRAIN_S=240 (training compiles its network).
T_TEST=${T_TEST_S:-$T_TEST}; T_NET=${T_NET_S:-$T_NET}; T_COMPILE=${T_COMPILE_S:-$T_COMPILE}
T_SP=${T_SP_S:-$T_SP}; T_TRAIN=${T_TRAIN_S:-$T_TRAIN}

step() {  # step NAME LIMIT_S COMMAND...: run, log, record status, keep a JSON result if printed
    local name=$1 limit=$2; shift 2
    local start end rc
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
    echo "=== $name (limit ${limit}s): $*" | tee -a "$LOG"
    start=$(date +%s.%N)
    timeout --signal=INT --kill-after=10 "$limit" "$@" >"$STEPS/$name.out" 2>&1
    rc=$?
    end=$(date +%s.%N)
    cat "$STEPS/$name.out" >>"$LOG"
    echo "=== $name: exit $rc in $(python3 -c "print(round($end-$start,1))") s" | tee -a "$LOG"
    python3 - "$STEPS" "$name" "$rc" "$start" "$end" "$OUT/results.json" <<'EOF'
import json, sys, pathlib
folder, name, rc, start, end, results = sys.argv[1:]
text = (pathlib.Path(folder) / f"{name}.out").read_text(errors="replace")
result = None
if "{" in text:  # the last JSON object printed (the bench's --json)
    try:
        result = json.loads(text[text.rindex("\n{") + 1 if "\n{" in text else text.index("{"):])
    except (ValueError, json.JSONDecodeError):
        result = None
record = {"exit": int(rc), "seconds": round(float(end) - float(start), 1), "result": result}
path = pathlib.Path(results)  # rewritten after every step: a run cut short keeps what it measured
steps = json.loads(path.read_text()) if path.exists() else {}
steps[name] = record
path.write_text(json.dumps(steps, indent=1))
EOF
}

{
    date -u; uname -m; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null
    python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name() if torch.cuda.is_available() else '')"
} 2>&1 | tee -a "$LOG"

if [ "$DEVICE" = cuda ]; then
    step tests "$T_TEST" python3 -m pytest tests/test_cuda.py -n 0 -q -p no:cacheprovider
    step syncs "$T_NET" python3 benchmarks/cuda_profile.py syncs --config configs/conhex.yaml
fi
step net_profile "$T_NET" python3 benchmarks/cuda_profile.py net --model l8h128 --batch "$NET_BATCH"
step selfplay "$T_SP" python3 -m conhex_zero bench selfplay --config configs/conhex.yaml --device "$DEVICE" \
    --seconds "$SECS" --json selfplay.compile=false $SP_OVERRIDES
step net "$T_NET" python3 -m conhex_zero bench net --device "$DEVICE" --model l8h128 --batch "$NET_BATCH" \
    --seconds "$SECS" --json
step search_one "$T_NET" python3 -m conhex_zero bench search --device "$DEVICE" --model l4h64 --batch 1 \
    --sims 800 --seconds "$SECS" --json
RUN="$OUT/train-run"
rm -rf "$RUN"
step train "$T_TRAIN" python3 train.py --config configs/conhex.yaml --device "$DEVICE" --run-dir "$RUN" \
    --quiet --stop-after 3 eval.every=3 eval.games=20 eval.previous_games=0 "eval.references=[random]" \
    $TRAIN_OVERRIDES
cp "$RUN/metrics.jsonl" "$OUT/train_metrics.jsonl" 2>/dev/null
step selfplay_graphs "$T_SP" python3 -m conhex_zero bench selfplay --config configs/conhex.yaml --device "$DEVICE" \
    --seconds "$SECS" --json selfplay.cuda_graphs=true selfplay.compile=false $SP_OVERRIDES
step net_compile "$T_COMPILE" python3 -m conhex_zero bench net --device "$DEVICE" --model l8h128 --batch "$NET_BATCH" \
    --seconds "$SECS" --json --compile
step selfplay_compile "$T_COMPILE" python3 -m conhex_zero bench selfplay --config configs/conhex.yaml --device "$DEVICE" \
    --seconds "$SECS" --json $SP_OVERRIDES

python3 - "$OUT" <<'EOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
steps = json.loads((out / "results.json").read_text())
for name, record in steps.items():
    r = record["result"] or {}
    keys = ("positions_per_s", "simulations_per_s", "network_fraction", "syncs_per_step",
            "peak_memory_mb", "evals_per_s")
    print(name, record["exit"], record["seconds"], {k: r[k] for k in keys if k in r})
EOF
rm -rf "$STEPS" "$RUN"
