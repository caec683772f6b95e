# Session 55 (pre-registered in session 54's note): one 2-GPU machine, two sittings at once.
# GPU 0 (CPUs of the upper half): mixnet_l default, reportgen against the bare loop and fresh -p, continuing the
# machine-tagged file (6 comparisons, 3 with reportgen's blocks). Its forward busy is decided, so with
# --until-decided a round starts -p for the backward only (graphs_to_seed): 3 comparisons x (reportgen, bare loop,
# 3 backward -p) = 15 processes on one GPU, where 24 ran out of memory. One round only: mixnet_l's warm-up took 216 s
# and a round 620-700 s on a slow host, so no round starts after TOTAL - 750 s.
# GPU 1 (lower half): resnet50, reportgen against the bare loop, --seeds 0 (its busy is decided), continuing
# -g's file (24 comparisons, 5 machines): a sixth machine for compiled, the figure still undecided.
# Start: TOTAL=1500 setsid nohup bash <this> > /tmp/sit.log 2>&1 < /dev/null &
# Every follow-up call first checks that the machine is the same: test -d /tmp/work || exit 3
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
TOTAL=${TOTAL:-1500}
echo "[$(date -u +%H:%M:%S)] start"; nvidia-smi -L; nproc
N=$(nproc); H=$((N / 2))
( CUDA_VISIBLE_DEVICES=1 CONTINUE=benchmarks/sittings/2026-11-28-2xH200-g/fidelity-resnet50.json W=/tmp/g27r \
    ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=0 MAX_RESNET=48 FID_MAX_PROBE_MS=2.5 \
    STOP_AFTER_S=$((TOTAL - 300)) taskset -c 0-$((H - 1)) bash benchmarks/issue27_fidelity.sh > /tmp/sit-r.log 2>&1 ) &
CUDA_VISIBLE_DEVICES=0 CONTINUE=benchmarks/sittings/2026-11-28-2xH200-c/fidelity-mixnet_l-tagged.json W=/tmp/g27m \
  ONLY=mixnet_l FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=3 MAX_MIXNET=24 FID_MAX_PROBE_MS=2.5 \
  STOP_AFTER_S=$((TOTAL - 750)) taskset -c $H-$((N - 1)) bash benchmarks/issue27_fidelity.sh > /tmp/sit-m.log 2>&1
echo "[$(date -u +%H:%M:%S)] gpu0 done"
wait
echo "[$(date -u +%H:%M:%S)] all done"
