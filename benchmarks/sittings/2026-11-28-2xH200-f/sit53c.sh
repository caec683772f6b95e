# Session 53, last 330 s of device time: resnet50 step figures only (--seeds 0), one round of 2 comparisons on
# each GPU; GPU 1 continues the pooled file, GPU 0 is a fresh sitting.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
echo "[$(date -u +%H:%M:%S)] start"; nvidia-smi -L; nproc
N=$(nproc); H=$((N / 2))
( CUDA_VISIBLE_DEVICES=1 CONTINUE=benchmarks/sittings/2026-11-28-2xH200-e/fidelity-resnet50-pooled.json W=/tmp/g27r \
    ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=2 FID_SEEDS=0 MAX_RESNET=40 FID_MAX_PROBE_MS=2.5 \
    STOP_AFTER_S=150 taskset -c 0-$((H - 1)) bash benchmarks/issue27_fidelity.sh > /tmp/sit-r.log 2>&1 ) &
CUDA_VISIBLE_DEVICES=0 W=/tmp/g27a ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=2 FID_SEEDS=0 MAX_RESNET=40 \
  FID_MAX_PROBE_MS=2.5 STOP_AFTER_S=150 taskset -c $H-$((N - 1)) bash benchmarks/issue27_fidelity.sh > /tmp/sit-a.log 2>&1
echo "[$(date -u +%H:%M:%S)] gpu0 done"
wait
echo "[$(date -u +%H:%M:%S)] all done"
