#!/usr/bin/env bash
# Issue 31's GPU check in one sitting (run from the repository root on a lent GPU machine; results under $W, the
# small files copied to $OUT as each stage ends, since a lent machine goes back after 30 min held):
#   1. mixnet_l (default variant), resnet50, transformer and recompiles, two runs per GPU (`--runs-per-gpu 2`);
#   2. `benchmarks/roofline_check.py` on the three largest counted GEMM/convolution rows of the first three;
#   3. the bundles without their traces, for a site built at home (same analysis revision: nothing re-analysed).
# On the lent machines start it as `setsid nohup bash benchmarks/issue31_gpu.sh > log 2>&1 < /dev/null &` and
# poll; on one H200 the runs took about 5 min concurrently, each check under 30 s.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=${W:-/tmp/g31}
OUT=${OUT:-$W/out}
mkdir -p "$W" "$OUT"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }
step runs
python -m reportgen run recipes/mixnet_l.yaml recipes/resnet50.yaml recipes/transformer.yaml \
  recipes/recompiles.yaml --variant default --gpus all --runs-per-gpu 2 -o "$W/r" > "$OUT/run.txt" 2>&1
for bundle in mixnet_l--default resnet50 transformer; do
  step "roofline check of $bundle"
  python benchmarks/roofline_check.py "$W/r/$bundle" >> "$OUT/roof.txt" 2>&1
done
step "bundles without their traces"
tar -C "$W/r" -czf "$OUT/bundles.tgz" --exclude='trace.json.gz' --exclude='trace-eager.json.gz' \
  --exclude='trace-shapes.json.gz' --exclude='graphs' --exclude='*.sqlite' .
step done
