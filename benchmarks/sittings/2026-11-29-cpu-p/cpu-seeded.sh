# Session 60, on this 2-core CPU (no GPU lent: the session's device time was spent by session 59): does a round with
# a fresh -p per graph move reportgen's compiled steps against the bare loop's, as session 59's GPU rounds suggest
# (+3.45 % with -p, +0.76 % without)? Rounds of quickstart with and without -p in turn (ABBA...), one work dir
# (a warm cache after the first), each round 2 comparisons:
#   PYTHONPATH=$PWD PAIRS=8 [STEPS=60] bash benchmarks/sittings/2026-11-29-cpu-p/cpu-seeded.sh OUT_DIR
# (STEPS: block pairs per comparison, as the GPU sittings' --steps 60; unset: the recipe's 10)
# Reading, fixed before the rounds: per pair of adjacent rounds (one with -p, one without), the with-less-without
# difference of compiled's mean comparison median, then their mean with a Student-t interval:
#   first_round.py --by seeded --groups 2 --cluster "pair(\d+)-" OUT_DIR/*.json
# Above 0: a CPU-side mechanism the CPU shows too, to look for here; holding 0 leaves the GPU (its contexts, its queued
# work) to session 61's sitting. steps_cpu says whether the paused -p trees used CPU beside reportgen's step windows.
set -u
OUT=${1:?OUT_DIR}; PAIRS=${PAIRS:-8}; W=${WORK:-/tmp/fid-cpu-p}; mkdir -p "$OUT" "$W"
PY=${PY:-python}; STEPS_ARG=(); [ -n "${STEPS:-}" ] && STEPS_ARG=(--steps "$STEPS")
for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then order="1 0"; else order="0 1"; fi
  for s in $order; do
    tag=pair$i-seeds$s
    rm -rf "$W/logs" "$W/results"
    $PY benchmarks/timing_fidelity.py recipes/quickstart.yaml --groups 2 --rounds 1 --seeds "$s" --until-decided 2 \
      "${STEPS_ARG[@]}" --work "$W" --json "$OUT/$tag.json" > "$OUT/$tag.txt" 2>&1
    echo "[$(date -u +%H:%M:%S)] $tag rc=$? $(grep -h 'round 1:' "$OUT/$tag.txt" | head -1 | cut -c1-150)"
    cp "$W"/logs/windows-*.log "$OUT/$tag-windows.log" 2>/dev/null
  done
done
