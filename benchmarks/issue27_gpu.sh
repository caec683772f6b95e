#!/usr/bin/env bash
# Issue 27's GPU check, one sitting on one machine (run from the repository root; writes under $W):
# transformer 5 warm runs + 2 planted recipes; resnet50 and mixnet_l (default) interleaved fidelity, 5 rounds
# each, whose 5 warm runs are also the resnet50 repeatability sample. About 45 min on an H200: on the lent
# machines start it as `setsid nohup bash benchmarks/issue27_gpu.sh > log 2>&1 < /dev/null &` (a plain
# `nohup … &` dies when the device call that started it ends) and poll from later calls.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=${W:-/tmp/g27}
mkdir -p "$W"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }
step transformer warm-up
python benchmarks/repeatability.py recipes/transformer.yaml --runs 1 --only-run --work "$W/transformer"
step transformer 5 runs + planted
python benchmarks/repeatability.py recipes/transformer.yaml --runs 5 --only-run --work "$W/transformer" \
  --planted recipes/transformer_extra_matmul.yaml recipes/transformer_graph_break.yaml
python benchmarks/repeatability.py recipes/transformer.yaml --runs 5 --no-run --work "$W/transformer" \
  --planted recipes/transformer_extra_matmul.yaml recipes/transformer_graph_break.yaml \
  --json "$W/transformer.json" > "$W/transformer.txt" 2>&1
step resnet50 fidelity
python benchmarks/timing_fidelity.py recipes/resnet50.yaml --rounds 5 --work "$W/fid-resnet50" \
  --json "$W/fidelity-resnet50.json" > "$W/fidelity-resnet50.txt" 2>&1
python benchmarks/repeatability.py recipes/resnet50.yaml --runs 5 --no-run --work "$W/fid-resnet50" \
  --json "$W/resnet50.json" > "$W/resnet50.txt" 2>&1
step mixnet_l fidelity
python benchmarks/timing_fidelity.py recipes/mixnet_l.yaml --variant default --rounds 5 --work "$W/fid-mixnet" \
  --json "$W/fidelity-mixnet_l.json" > "$W/fidelity-mixnet_l.txt" 2>&1
step done
