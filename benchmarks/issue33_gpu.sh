#!/usr/bin/env bash
# Issue 33's timing check on a two-GPU machine: recipes/mixnet_l_sweep.yaml as one sweep on GPU 0, and the same points
# as separate recipes one by one on GPU 1, both sides at once (a concurrent A/B: the host's drift and the other side's
# compiles weigh on both alike); the run time of each side, and the sweep's bundles home without their traces.
#   W=/tmp/g33 OUT=$OUT POINTS="bs8-def bs8-ro bs128-def bs128-ro" bash benchmarks/issue33_gpu.sh
# POINTS (default: all eight) limits both sides to the same points (`--variant` for the sweep).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=${W:-/tmp/g33}
OUT=${OUT:-$W/out}
POINTS=${POINTS:-}
mkdir -p "$W/one" "$OUT"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }
python - "$W/one" "$POINTS" <<'PY'
import sys
from pathlib import Path

from reportgen.recipe import load_recipe

recipe = load_recipe(Path("recipes/mixnet_l_sweep.yaml"))
wanted = set(sys.argv[2].split())
for point in recipe.runs:  # each point as a recipe of its own, named as the sweep names its bundle
    if wanted and point.name not in wanted:
        continue
    one = recipe.for_variant(point).model_copy(update={"name": f"one_{point.name}"})
    text = one.model_dump_json(exclude={"sweep", "variants"})
    (Path(sys.argv[1]) / f"one_{point.name}.yaml").write_text(text)  # JSON is YAML
PY
cp recipes/models.py "$W/one/" 2>/dev/null
variants=()
for p in $POINTS; do variants+=(--variant "$p"); done
step "sweep on GPU 0, points one by one on GPU 1"
(
  start=$(date +%s)
  CUDA_VISIBLE_DEVICES=0 python -m reportgen run recipes/mixnet_l_sweep.yaml "${variants[@]}" -o "$W/sweep" \
    > "$OUT/sweep.txt" 2>&1
  echo "sweep $(( $(date +%s) - start )) s" > "$OUT/time-sweep.txt"
) &
(
  start=$(date +%s)
  for one in "$W"/one/*.yaml; do
    CUDA_VISIBLE_DEVICES=1 python -m reportgen run "$one" -o "$W/one-results" >> "$OUT/one.txt" 2>&1
  done
  echo "one by one $(( $(date +%s) - start )) s" > "$OUT/time-one.txt"
) &
wait
cat "$OUT"/time-*.txt
tar -C "$W/sweep" -czf "$OUT/sweep.tgz" --exclude='trace*.json.gz' --exclude='graphs' .
step done
