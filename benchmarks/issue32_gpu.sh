#!/usr/bin/env bash
# Issue 32's GPU check in one sitting, on a two-GPU machine (nvidia-h100-x2 or nvidia-h200-x2), from the repository
# root; results under $W, the small files copied to $OUT as each stage ends:
#   1. recipes/resnet50_ddp.yaml (DDP, NCCL, fp16) and recipes/transformer_fsdp2.yaml (FSDP2, NCCL, bf16), one rank
#      per GPU, each compiled;
#   2. each bundle home: manifest, analysis, capture, and every rank's compiled trace (the overlap check needs them);
#      at home, `python benchmarks/overlap_hta.py BUNDLE --hta-python <HTA venv>` compares each rank's overlap with
#      HTA's on the same traces (HTA is not on the lent machines and they have no network).
# Start it as `setsid nohup bash benchmarks/issue32_gpu.sh > log 2>&1 < /dev/null &` and poll.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=${W:-/tmp/g32}
OUT=${OUT:-$W/out}
mkdir -p "$W" "$OUT"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }
nvidia-smi -L > "$OUT/gpus.txt" 2>&1
for recipe in resnet50_ddp transformer_fsdp2; do
  step "run $recipe"
  python -m reportgen run "recipes/$recipe.yaml" -o "$W/r" > "$OUT/run-$recipe.txt" 2>&1
  step "bundle $recipe home"
  tar -C "$W/r" -czf "$OUT/$recipe.tgz" --exclude='trace-eager.json.gz' --exclude='trace-shapes.json.gz' \
    --exclude='graphs' --exclude='modules' "$recipe"
done
step done
