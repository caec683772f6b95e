# Session 53 (pre-registered in session 52's note): mixnet_l fidelity continued on GPU 0 (CPUs of the upper half),
# resnet50's continued on GPU 1 (lower half), at the same time: both need more comparisons now that pairs are
# pooled by comparison (fidelity_stats.clustered_pool).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
TOTAL=${TOTAL:-1500}
echo "[$(date -u +%H:%M:%S)] start"; nvidia-smi -L; nproc; lscpu | grep -E "Thread|Core|Socket|Model name"
N=$(nproc); H=$((N / 2))
( CUDA_VISIBLE_DEVICES=1 CONTINUE=benchmarks/sittings/2026-11-28-2xH200-d/fidelity-resnet50.json W=/tmp/g27r \
    ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=3 MAX_RESNET=18 FID_MAX_PROBE_MS=2.5 \
    STOP_AFTER_S=$((TOTAL - 420)) taskset -c 0-$((H - 1)) bash benchmarks/issue27_fidelity.sh > /tmp/sit-r.log 2>&1 ) &
CUDA_VISIBLE_DEVICES=0 CONTINUE=benchmarks/sittings/2026-11-28-2xH200-c/fidelity-mixnet_l.json W=/tmp/g27f \
  ONLY=mixnet_l FID_ROUNDS=1 FID_GROUPS=2 FID_SEEDS=3 MAX_MIXNET=12 STEPS_MIXNET=24 FID_MAX_PROBE_MS=2.5 \
  STOP_AFTER_S=$((TOTAL - 650)) taskset -c $H-$((N - 1)) bash benchmarks/issue27_fidelity.sh
echo "[$(date -u +%H:%M:%S)] mixnet_l done"
wait
echo "[$(date -u +%H:%M:%S)] all done"
