#!/usr/bin/env bash
# One piece of the GPU line on a lent machine, in one command (docs/gpu.md, "ConHex on a GPU, in
# pieces"). The lent machine's image (seen 2026-12-04) differs from a normal install in two ways
# this script absorbs:
#   - it has no PyYAML (the configs need it): the session's machine puts a copy in runs/pydeps
#     (`pip install --target runs/pydeps pyyaml`; pure Python is enough) and the run tool carries it
#     (carry: ["runs/pydeps"]); here it goes on PYTHONPATH;
#   - `pip` and the `conhex-zero` entry point belong to another interpreter than the `python` that
#     has torch: the project runs as `python -m conhex_zero` from the repository root.
#
#   bash benchmarks/gpu_piece.sh LINE MINUTES COMMIT [PIECE OPTIONS]   # e.g. checkpoints/lines/conhex-gpu 9.0 e96d5a93155d
#   (a new line: ... checkpoints/lines/conhex-gpu-c 9.0 SHA --config configs/conhex-gpu-c-line.yaml)
#
# Writes the line to $OUT/line (at most eight files; docs/gpu.md says what to do with them).
set -u
S=${COMMAND_START:-$(date +%s.%N)}
LINE=${1:?LINE}
MINUTES=${2:?MINUTES}
COMMIT=${3:?COMMIT}
shift 3
OUT=${OUT:?OUT (the run tool sets it)}
export PYTHONPATH="$PWD:$PWD/runs/pydeps${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
python -c "import torch, yaml; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" || {
    echo "gpu_piece: python lacks torch or yaml (put PyYAML in runs/pydeps and carry it)" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python -m conhex_zero piece "$LINE" --minutes "$MINUTES" --command-start "$S" --out "$OUT/line" --quiet --commit "$COMMIT" "$@"
rc=$?
echo "gpu_piece: exit $rc"
exit $rc
