#!/usr/bin/env bash
# Issue 33's GPU check: recipes/mixnet_l_sweep.yaml (batch 8, 32, 64, 128 x mode default, reduce-overhead) as one
# sweep, then the same eight points as eight separate recipes one by one, back to back on one machine; the run time
# of each, and the sweep's bundles home without their traces (the sweep page is built at home).
#   W=/tmp/g33 OUT=$OUT bash benchmarks/issue33_gpu.sh     (about 2 x 8 mixnet_l runs: use a two-GPU machine and
#   GPUS="--gpus all" to run both sides as matrices; the comparison is fair as long as both sides use the same)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=${W:-/tmp/g33}
OUT=${OUT:-$W/out}
GPUS=${GPUS:-}
mkdir -p "$W/one" "$OUT"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }
python - "$W/one" <<'PY'
import sys
from pathlib import Path

from reportgen.recipe import load_recipe

recipe = load_recipe(Path("recipes/mixnet_l_sweep.yaml"))
for point in recipe.runs:  # each point as a recipe of its own, named as the sweep names its bundle
    one = recipe.for_variant(point).model_copy(update={"name": f"one_{point.name}"})
    text = one.model_dump_json(exclude={"sweep", "variants"})
    (Path(sys.argv[1]) / f"one_{point.name}.yaml").write_text(text)  # JSON is YAML
PY
cp recipes/models.py "$W/one/" 2>/dev/null
step sweep
start=$(date +%s.%N)
python -m reportgen run recipes/mixnet_l_sweep.yaml $GPUS -o "$W/sweep" > "$OUT/sweep.txt" 2>&1
sweep_s=$(echo "$(date +%s.%N) - $start" | bc)
step "points one by one"
start=$(date +%s.%N)
for one in "$W"/one/*.yaml; do python -m reportgen run "$one" $GPUS -o "$W/one-results" >> "$OUT/one.txt" 2>&1; done
one_s=$(echo "$(date +%s.%N) - $start" | bc)
echo "sweep ${sweep_s} s, one by one ${one_s} s" | tee "$OUT/times.txt"
tar -C "$W/sweep" -czf "$OUT/sweep.tgz" --exclude='trace*.json.gz' --exclude='graphs' .
step done
