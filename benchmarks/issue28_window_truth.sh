#!/usr/bin/env bash
# Issue 28's window truth on a two-GPU machine (run from the repository root; writes under $W): transformer beside
# resnet50 + quickstart, then resnet50 beside transformer + quickstart, the company on the second GPU, each until
# decided or $MAXR rounds, no round started after $STOP s. CONTINUE_DIR=<a folder of earlier wt-<recipe>-s<settle>.json>
# pools with them (benchmarks/sittings/). ONLY=resnet50 or ONLY=transformer runs one; SETTLE=S makes busy windows
# wait S after the pause (a matrix waits 0).
# On the lent machines start it as `setsid nohup bash benchmarks/issue28_window_truth.sh > log 2>&1 < /dev/null &`.
# 2xH200, 2026-11-28: rounds of 30-80 s (the first one compiles), 20 pairs each.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=${W:-/tmp/g28}
SETTLE=${SETTLE:-0}
mkdir -p "$W"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }
truth() {  # recipe, company recipes...
  local name="wt-$1-s$SETTLE" earlier="${CONTINUE_DIR:-}/wt-$1-s$SETTLE.json"
  [ -z "${CONTINUE_DIR:-}" ] || [ -f "$earlier" ] || { echo "no earlier sitting at $earlier" >&2; return 1; }
  python benchmarks/window_truth.py "recipes/$1.yaml" --company "${@:2}" --gpus 0,1 --steps 40 --rounds 3 \
    --until-decided "${MAXR:-6}" --stop-after-s "${STOP:-240}" --quiet-s 1 --settle-s "$SETTLE" \
    --work "$W/w-$1-s$SETTLE" --json "$W/$name.json" \
    ${CONTINUE_DIR:+--continue-from "$earlier"} > "$W/$name.txt" 2>&1
}
for name in ${ONLY:-transformer resnet50}; do
  step "$name window truth (settle $SETTLE)"
  case "$name" in
    transformer) truth transformer recipes/resnet50.yaml recipes/quickstart.yaml ;;
    resnet50) truth resnet50 recipes/transformer.yaml recipes/quickstart.yaml ;;
  esac
done
step done
