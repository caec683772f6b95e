# Session 52: issue 27 fidelity, both recipes at once on a 2-GPU machine: mixnet_l (continuing session 51's
# sitting) on GPU 0 and CPUs 16-31, resnet50 on GPU 1 and CPUs 0-15 (each sitting's windows on its last CPU).
# Run as `TOTAL=1000 bash .whl/sit52.sh` (the first try, with FID_ROUNDS=20, stopped resnet50 at once: --until-decided
# must be at least rounds x groups; the machine went back before it was restarted).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
TOTAL=${TOTAL:-1450}
echo "[$(date -u +%H:%M:%S)] start"; nvidia-smi -L; nproc; lscpu | grep -E "Thread|Core|Socket|Model name"
N=$(nproc); H=$((N / 2))
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
  ( CUDA_VISIBLE_DEVICES=1 W=/tmp/g27r ONLY=resnet50 FID_ROUNDS=4 FID_GROUPS=3 FID_SEEDS=3 MAX_RESNET=12 \
      FID_MAX_PROBE_MS=2.5 STOP_AFTER_S=$((TOTAL - 420)) taskset -c 0-$((H - 1)) bash benchmarks/issue27_fidelity.sh \
      > /tmp/sit-r.log 2>&1 ) &
  MIX="taskset -c $H-$((N - 1))"
else
  MIX=""
fi
CUDA_VISIBLE_DEVICES=0 CONTINUE=benchmarks/sittings/2026-11-28-2xH200-b/fidelity-mixnet_l.json W=/tmp/g27f \
  ONLY=mixnet_l FID_ROUNDS=2 FID_GROUPS=3 FID_SEEDS=3 MAX_MIXNET=12 STEPS_MIXNET=24 FID_MAX_PROBE_MS=2.5 \
  STOP_AFTER_S=$((TOTAL - 700)) $MIX bash benchmarks/issue27_fidelity.sh
echo "[$(date -u +%H:%M:%S)] mixnet_l done"
wait
echo "[$(date -u +%H:%M:%S)] all done"
