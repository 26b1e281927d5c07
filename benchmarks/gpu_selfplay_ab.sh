#!/usr/bin/env bash
# Self-play speed of the GPU line's config, A/B in one command after a session's piece (issue 41:
# the goal is 20,000 positions/s on one H100 or H200). Every variant is `conhex-zero bench selfplay
# --config configs/conhex-gpu-line.yaml --device cuda --json` with overrides; the first is the code
# path before this change (precision=autocast, 4,096 games), so the comparison is in one session on
# one machine. Variants run in order until BUDGET_S seconds are spent (a variant is not started
# with less than its limit left), each with its own time limit (compilation included).
#
#   OUT=$OUT bash benchmarks/gpu_selfplay_ab.sh                    # on the lent machine
#   DEVICE=cpu SECONDS_EACH=2 QUICK=1 OUT=/tmp/ab bash benchmarks/gpu_selfplay_ab.sh   # dry run on a CPU
#
# Writes $OUT/selfplay_ab.json: {variant: {"exit", "seconds", "overrides", "result"}} after every
# variant, and prints one line per variant (positions/s, simulations/s, network share, peak memory).
set -u
OUT=${OUT:-runs/gpu-ab}
DEVICE=${DEVICE:-cuda}
SECONDS_EACH=${SECONDS_EACH:-12}
BUDGET_S=${BUDGET_S:-200}
LIMIT_S=${LIMIT_S:-75}
mkdir -p "$OUT"
RESULTS="$OUT/selfplay_ab.json"
rm -f "$RESULTS"
export PYTHONUNBUFFERED=1
QUICK_OVERRIDES=""
if [ "${QUICK:-0}" = 1 ]; then
    QUICK_OVERRIDES="selfplay.games=16 selfplay.compile=false model=l2h16 selfplay.full_sims=4 selfplay.cheap_sims=2"
fi

VARIANTS=(
    "before:selfplay.precision=autocast"
    "bf16:selfplay.precision=bf16"
    "bf16-8192:selfplay.precision=bf16 selfplay.games=8192"
    "autocast-8192:selfplay.precision=autocast selfplay.games=8192"
    "bf16-graphs:selfplay.precision=bf16 selfplay.cuda_graphs=true"
)
start_all=$(date +%s)
for entry in "${VARIANTS[@]}"; do
    name=${entry%%:*}
    overrides=${entry#*:}
    spent=$(( $(date +%s) - start_all ))
    if [ $(( BUDGET_S - spent )) -lt "$LIMIT_S" ]; then
        echo "$name: not started ($spent s of the ${BUDGET_S} s budget spent)"
        continue
    fi
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    text=$(timeout --signal=INT --kill-after=10 "$LIMIT_S" conhex-zero bench selfplay \
        --config configs/conhex-gpu-line.yaml --device "$DEVICE" --seconds "$SECONDS_EACH" --json \
        $overrides $QUICK_OVERRIDES 2>&1)
    rc=$?
    t1=$(date +%s.%N)
    python3 - "$RESULTS" "$name" "$rc" "$t0" "$t1" "$overrides" "$text" <<'EOF'
import json, sys, pathlib
path, name, rc, t0, t1, overrides, text = sys.argv[1:]
result = None
if "{" in text:
    try:
        result = json.loads(text[text.index("{"):text.rindex("}") + 1])
    except ValueError:
        result = None
p = pathlib.Path(path)
data = json.loads(p.read_text()) if p.exists() else {}
data[name] = {"exit": int(rc), "seconds": round(float(t1) - float(t0), 1), "overrides": overrides,
              "result": result, "tail": None if result else text[-600:]}
p.write_text(json.dumps(data, indent=1) + "\n")
if result:
    print(f"{name}: {result['positions_per_s']:,.0f} positions/s, {result['simulations_per_s']:,.0f} simulations/s, "
          f"network {result['network_fraction']:.0%}, peak {result['peak_memory_mb']:,.0f} MB, "
          f"compile {result.get('compile_seconds')} s ({overrides})")
else:
    print(f"{name}: exit {rc} ({overrides}): {text[-300:]}")
EOF
done
