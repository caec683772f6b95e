# Session 51: issue 28 resnet50 window truth continuing (settle 0), then issue 27 mixnet_l fidelity, back to back.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
T0=$SECONDS; TOTAL=${TOTAL:-1500}; ROUND27=${ROUND27:-450}
echo "[$(date -u +%H:%M:%S)] start"; nvidia-smi -L; nproc; lscpu | grep -E "Thread|Core|Socket|Model name"
CONTINUE_DIR=benchmarks/sittings/2026-11-28-2xH200 ONLY=resnet50 STOP=${STOP28:-200} bash benchmarks/issue28_window_truth.sh
pkill -9 -f "recipes/(transformer|quickstart|resnet50).yaml" 2>/dev/null; sleep 2
LEFT=$((TOTAL - (SECONDS - T0))); echo "[$(date -u +%H:%M:%S)] 27 gets $LEFT s, stop-after $((LEFT - ROUND27)) s"
W=/tmp/g27f ONLY=mixnet_l FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=3 MAX_MIXNET=12 STEPS_MIXNET=24 FID_MAX_PROBE_MS=2.5 \
  STOP_AFTER_S=$((LEFT - ROUND27)) bash benchmarks/issue27_fidelity.sh
echo "[$(date -u +%H:%M:%S)] all done"
