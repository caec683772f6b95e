# Session 58: as sit57s.sh (session 57, single-GPU machines), and with REPACK=1 a round sends its cache back (cache-<recipe>.txz),
# now holding the bare loop's graphs too (timing_fidelity's bare warm-up fills them). Sittings one after another on GPU 0
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl;
#   export PYTHONPATH=/tmp/site:$PWD; JOBS="resnet50:3 mixnet_l:warm" bash .whl/sit57s.sh
# JOBS: recipe:groups (one round of that many comparisons, --seeds $SEEDS, default 0, from .whl/cache-<recipe>.txz) or recipe:warm
# (a cold warm-up whose cache goes back through $OUT as cache-<recipe>.txz). All within LIMIT seconds of the start.
# Reading, fixed in advance and unchanged: pool every file of a recipe so far with timing_fidelity.py --report.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LIMIT=${LIMIT:-540}; CARRY=${CARRY:-.whl}; T0=$(date +%s); N=$(nproc)
BOOT=$(cut -c1-8 /proc/sys/kernel/random/boot_id)
echo "[$(date -u +%H:%M:%S)] start on boot-$BOOT"; nvidia-smi -L 2>/dev/null; lscpu | grep -E "Model name|NUMA"
pack() {  # recipe, work dir: its Inductor cache back through $OUT (xz on all CPUs where there is one; session 58's
  # REPACK took python's one-thread xz: 27 s of device time)
  if command -v xz > /dev/null; then tar -C "$2" -cf - cache | xz -T"$N" -6 > "$OUT/cache-$1.txz"; else
    python -c "import sys, tarfile; tarfile.open(sys.argv[1], 'w:xz').add(sys.argv[2], 'cache')" "$OUT/cache-$1.txz" "$2/cache"
  fi
  ls -la "$OUT/cache-$1.txz"
}
job() {  # recipe, groups|warm, seconds left
  local r=$1 n=$2 left=$3 w=/tmp/g57/fid-$1 extra=() steps=60
  [ "$r" = mixnet_l ] && extra=(--variant default) && steps=40
  mkdir -p "$w"
  [ -f "$CARRY/cache-$r.txz" ] && python -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], \
    filter='data')" "$CARRY/cache-$r.txz" "$w"  # a warm job starts from it too (session 58: adds the bare loop's)
  if [ "$n" = warm ]; then
    timeout "$left" python benchmarks/timing_fidelity.py "recipes/$r.yaml" --steps $steps --seeds 0 --work "$w" \
      --warm-up-only "${extra[@]}" > "/tmp/g57/warm-$r.txt" 2>&1
    echo "[$(date -u +%H:%M:%S)] $r warm-up rc=$?"; tail -n 2 "/tmp/g57/warm-$r.txt" | cut -c1-300
    pack "$r" "$w"; return
  fi
  timeout "$left" python benchmarks/timing_fidelity.py "recipes/$r.yaml" --steps $steps --groups "$n" --rounds 1 \
    --seeds "${SEEDS:-0}" --until-decided "$n" --work "$w" --json "/tmp/g57/fidelity-$r.json" --max-host-probe-ms 2.5 \
    "${extra[@]}" > "/tmp/g57/fidelity-$r.txt" 2>&1
  echo "[$(date -u +%H:%M:%S)] $r round rc=$?"; grep -h "warm-up reportgen run\|warm-up bare loop\|round 1:" "/tmp/g57/fidelity-$r.txt" | cut -c1-200
  for f in json txt; do cp "/tmp/g57/fidelity-$r.$f" "$OUT/boot-$BOOT-gpu0-$r.$f" 2>/dev/null; done
  [ "${REPACK:-0}" = 1 ] && pack "$r" "$w"
  tail -n 3 "/tmp/g57/fidelity-$r.txt" | cut -c1-300
}
mkdir -p /tmp/g57
for spec in ${JOBS:-resnet50:3}; do
  left=$((LIMIT - ($(date +%s) - T0)))
  [ "$left" -lt 60 ] && echo "no time left for $spec" && continue
  job "${spec%%:*}" "${spec##*:}" "$left" 2>&1 | tee -a "/tmp/sit57-0.log"
done
cp /tmp/sit57-0.log "$OUT/boot-$BOOT-gpu0.log"
echo "[$(date -u +%H:%M:%S)] done"
