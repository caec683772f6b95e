# Session 54 (pre-registered in session 53's note): one 2-GPU machine, both sittings resnet50, step figures only
# (--seeds 0; its busy figures are decided): GPU 1 (CPUs of the lower half) reportgen against the bare loop,
# continuing the machine-tagged file; GPU 0 (upper half) an A/A sitting (two bare loops) at the same time. Same
# machine, same hours: if reportgen's compiled reads a machine-wide offset (-3..-7 % on two machines in session 53)
# that the A/A does not, the offset is reportgen's, not the host's.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
TOTAL=${TOTAL:-1500}
echo "[$(date -u +%H:%M:%S)] start"; nvidia-smi -L; nproc
N=$(nproc); H=$((N / 2))
( CUDA_VISIBLE_DEVICES=1 CONTINUE=benchmarks/sittings/2026-11-28-2xH200-f/fidelity-resnet50-tagged.json W=/tmp/g27r \
    ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=0 MAX_RESNET=60 FID_MAX_PROBE_MS=2.5 \
    STOP_AFTER_S=$((TOTAL - 300)) taskset -c 0-$((H - 1)) bash benchmarks/issue27_fidelity.sh > /tmp/sit-r.log 2>&1 ) &
CUDA_VISIBLE_DEVICES=0 W=/tmp/g27a ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=0 MAX_RESNET=60 FID_ARGS=--aa \
  FID_MAX_PROBE_MS=2.5 STOP_AFTER_S=$((TOTAL - 300)) taskset -c $H-$((N - 1)) bash benchmarks/issue27_fidelity.sh \
  > /tmp/sit-a.log 2>&1
echo "[$(date -u +%H:%M:%S)] gpu0 done"
wait
echo "[$(date -u +%H:%M:%S)] all done"
