# Session 57 (pre-registered in session 56's note): one machine per device call, kind nvidia-h200-x2, carry .whl:
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl;
#   export PYTHONPATH=/tmp/site:$PWD; bash .whl/sit57.sh
# GPU 0 (first half of the CPUs): resnet50, reportgen against the bare loop, --seeds 0, one round of 3 comparisons,
# a fresh file. GPU 1 (second half): mixnet_l --variant default, the same with 2 comparisons (GPU1_GROUPS). Each
# sitting's Inductor cache starts from .whl/cache-<recipe>.txz where it is there (filled by one cold warm-up on a
# lent H200, torch 2.11: a warm-up's compile then reads the cache, about a minute less a call); where it is not, the
# sitting warms up cold and its cache goes back through $OUT (cache-<recipe>.txz) before the comparisons start
# (mixnet_l's: then no comparisons on that call; the first call of session 57 has no mixnet_l cache to carry).
# Reading, fixed in advance: pool every file of a recipe so far with timing_fidelity.py --report (the rule as it
# is: the hull of the three-stage bootstrap and the Student-t over machines' medians, +-3 %, >= 6 comparisons).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LIMIT=${LIMIT:-520}
RECIPES=(${GPU0:-resnet50} ${GPU1:-mixnet_l})
GROUPS_OF=(${GPU0_GROUPS:-3} ${GPU1_GROUPS:-2})
CARRY=${CARRY:-.whl}
BOOT=$(cut -c1-8 /proc/sys/kernel/random/boot_id)
echo "[$(date -u +%H:%M:%S)] start on boot-$BOOT"; nvidia-smi -L 2>/dev/null; lscpu | grep -E "Model name|NUMA"
N=$(nproc); G=$(nvidia-smi -L 2>/dev/null | wc -l); [ "$G" -gt 2 ] && G=2; [ "$G" -lt 1 ] && G=1; H=$((N / G))
sitting() {  # gpu
  local g=$1 r=${RECIPES[$1]} w=/tmp/g57-$1 extra=() steps=${STEPS:-60}
  [ "$r" = mixnet_l ] && extra=(--variant default) && steps=${STEPS:-40}
  mkdir -p "$w/fid-$r"
  if [ -f "$CARRY/cache-$r.txz" ]; then  # python, not tar -J: xz need not be there
    python -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='data')" \
      "$CARRY/cache-$r.txz" "$w/fid-$r"
  else
    python benchmarks/timing_fidelity.py "recipes/$r.yaml" --steps "$steps" --seeds 0 --work "$w/fid-$r" \
      --warm-up-only "${extra[@]}" > "$w/warm-$r.txt" 2>&1
    if command -v xz > /dev/null; then tar -C "$w/fid-$r" -cf - cache | xz -T"$H" -6 > "$OUT/cache-$r.txz"; else
      python -c "import sys, tarfile; tarfile.open(sys.argv[1], 'w:xz').add(sys.argv[2], 'cache')" \
        "$OUT/cache-$r.txz" "$w/fid-$r/cache"
    fi
    [ "$r" = mixnet_l ] && return  # a cold warm-up (210 s) and a round (about 300 s) overrun $LIMIT
  fi
  python benchmarks/timing_fidelity.py "recipes/$r.yaml" --steps "$steps" --groups "${GROUPS_OF[$g]}" --rounds 1 \
    --seeds 0 --until-decided "${GROUPS_OF[$g]}" --work "$w/fid-$r" --json "$w/fidelity-$r.json" \
    --max-host-probe-ms 2.5 "${extra[@]}" > "$w/fidelity-$r.txt" 2>&1
}
for g in $(seq 0 $((G - 1))); do
  CUDA_VISIBLE_DEVICES=$g timeout "$LIMIT" taskset -c $((g * H))-$(((g + 1) * H - 1)) bash -c "$(declare -f sitting); \
    RECIPES=(${RECIPES[*]}); GROUPS_OF=(${GROUPS_OF[*]}); CARRY=$CARRY; H=$H; STEPS=${STEPS:-}; sitting $g" > "/tmp/sit57-$g.log" 2>&1 &
done
wait
echo "[$(date -u +%H:%M:%S)] done"
for g in $(seq 0 $((G - 1))); do
  r=${RECIPES[$g]}
  for f in json txt; do cp "/tmp/g57-$g/fidelity-$r.$f" "$OUT/boot-$BOOT-gpu$g-$r.$f" 2>/dev/null; done
  cp "/tmp/sit57-$g.log" "$OUT/boot-$BOOT-gpu$g.log"; grep -h "warm-up reportgen run" "/tmp/g57-$g"/*.txt
  tail -n 3 "/tmp/g57-$g/fidelity-$r.txt" | cut -c1-300
done
