# Session 55 (pre-registered in session 54's note): one 2-GPU machine, resnet50 reportgen against the bare loop on
# both halves at once, --seeds 0 (its busy figures need no more -p here). Why: every comparison run on GPU 0 with
# CPUs 16-31 (machines e and f, 5 comparisons) read compiled -2.9 to -7.3 % and speedup +3.4 to +4.5 %; the 19 on
# GPU 1 with CPUs 0-15 (machines c, d, g) spread around 0 (compiled -3.5 to +4.3 %). Machine and placement are
# confounded there; one machine running both placements at once separates them. Pre-registered reading: if GPU 0's
# comparisons' compiled medians sit below GPU 1's on the same machine (their medians 2.5 points or more apart), the
# offset follows the placement, and the next sitting varies one thing of it (the windows' CPU, then the GPU).
# GPU 1 continues -g/fidelity-resnet50-placed.json; GPU 0 starts a file of its own; pool both with --report.
# Start: TOTAL=1500 setsid nohup bash <this> > /tmp/sit.log 2>&1 < /dev/null &
# Each follow-up call: cd /tmp/work && bash benchmarks/sitting_poll.sh 530 /tmp/g27r /tmp/g27u (exits 3 on a fresh machine)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
TOTAL=${TOTAL:-1500}
echo "[$(date -u +%H:%M:%S)] start"; nvidia-smi -L; nvidia-smi topo -m; lscpu | grep -E "Model name|NUMA"; nproc
N=$(nproc); H=$((N / 2))
( CUDA_VISIBLE_DEVICES=1 CONTINUE=benchmarks/sittings/2026-11-28-2xH200-g/fidelity-resnet50-placed.json W=/tmp/g27r \
    ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=0 MAX_RESNET=60 FID_MAX_PROBE_MS=2.5 \
    STOP_AFTER_S=$((TOTAL - 300)) taskset -c 0-$((H - 1)) bash benchmarks/issue27_fidelity.sh > /tmp/sit-r.log 2>&1 ) &
CUDA_VISIBLE_DEVICES=0 W=/tmp/g27u ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=0 MAX_RESNET=36 \
  FID_MAX_PROBE_MS=2.5 STOP_AFTER_S=$((TOTAL - 300)) taskset -c $H-$((N - 1)) bash benchmarks/issue27_fidelity.sh \
  > /tmp/sit-u.log 2>&1
echo "[$(date -u +%H:%M:%S)] gpu0 done"
wait
echo "[$(date -u +%H:%M:%S)] all done"
