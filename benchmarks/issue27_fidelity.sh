#!/usr/bin/env bash
# Issue 27's fidelity criterion, one sitting on one GPU (run from the repository root; writes under $W):
# resnet50 and mixnet_l (default), each round reportgen + bare loop + a fresh -p per graph started together,
# their measurements taking turns under a timed-window coordinator. On the lent machines start it as
# `setsid nohup bash benchmarks/issue27_fidelity.sh > log 2>&1 < /dev/null &` and poll from later calls.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=${W:-/tmp/g27f}
mkdir -p "$W"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }
step resnet50 fidelity
python benchmarks/timing_fidelity.py recipes/resnet50.yaml --rounds 5 --until-decided ${MAX_RESNET:-8} \
  --work "$W/fid-resnet50" --json "$W/fidelity-resnet50.json" > "$W/fidelity-resnet50.txt" 2>&1
step mixnet_l fidelity
python benchmarks/timing_fidelity.py recipes/mixnet_l.yaml --variant default --rounds 5 \
  --until-decided ${MAX_MIXNET:-7} --work "$W/fid-mixnet" --json "$W/fidelity-mixnet_l.json" \
  > "$W/fidelity-mixnet_l.txt" 2>&1
step done
