# Session 56 (pre-registered in session 55's note): one machine per device call. Session 55's two machines showed no
# placement effect (compiled medians, GPU 0 half against GPU 1 half of one machine: +0.45 against +0.35 % on i,
# -1.81 against -3.86 % on h), while machines differ (compiled: comparisons' SD 2.30 % within machines, machines'
# SD 3.09 % beyond it over 7 machines), so only more machines narrow resnet50's compiled and speedup intervals.
# Each call: a fresh machine, resnet50 reportgen against the bare loop on every GPU at once (a half of the CPUs
# each), one round of 3 comparisons, --seeds 0, fresh files; then give the machine back, so the next call is
# another machine. Reading, fixed in advance: pool every resnet50 file so far with --report (the rule as it is:
# the hull of the three-stage bootstrap and the Student-t over machines' medians, +-3 %, >= 6 comparisons).
# Device command (carry .whl; kind nvidia-h200-x2):
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl;
#   export PYTHONPATH=/tmp/site:$PWD; bash .whl/sit56.sh
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LIMIT=${LIMIT:-500}
BOOT=$(cut -c1-8 /proc/sys/kernel/random/boot_id)
echo "[$(date -u +%H:%M:%S)] start on boot-$BOOT"; nvidia-smi -L; lscpu | grep -E "Model name|NUMA"
N=$(nproc); G=$(nvidia-smi -L | wc -l); [ "$G" -gt 2 ] && G=2; H=$((N / G))
for g in $(seq 0 $((G - 1))); do
  CUDA_VISIBLE_DEVICES=$g W=/tmp/g56-$g ONLY=resnet50 FID_ROUNDS=1 FID_GROUPS=3 FID_SEEDS=0 MAX_RESNET=3 \
    FID_MAX_PROBE_MS=2.5 timeout "$LIMIT" taskset -c $((g * H))-$(((g + 1) * H - 1)) \
    bash benchmarks/issue27_fidelity.sh > "/tmp/sit56-$g.log" 2>&1 &
done
wait
echo "[$(date -u +%H:%M:%S)] done"
for g in $(seq 0 $((G - 1))); do
  for f in json txt; do cp "/tmp/g56-$g/fidelity-resnet50.$f" "$OUT/boot-$BOOT-gpu$g.$f" 2>/dev/null; done
  cp "/tmp/sit56-$g.log" "$OUT/boot-$BOOT-gpu$g.log"; tail -n 3 "/tmp/g56-$g/fidelity-resnet50.txt" | cut -c1-300
done
