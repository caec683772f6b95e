#!/usr/bin/env bash
# Issue 27's fidelity criterion, one sitting on one GPU (run from the repository root; writes under $W):
# resnet50 and mixnet_l (default). Both warm-ups first, side by side (nothing is timed yet); then per recipe
# rounds of $FID_GROUPS comparisons (reportgen + bare loop + a fresh -p per graph each), every measurement in a
# window of its own under one coordinator, until each figure is decided or $MAX comparisons were made.
# On the lent machines start it as `setsid nohup bash benchmarks/issue27_fidelity.sh > log 2>&1 < /dev/null &`.
# A lent machine goes back after 30 min held: resnet50's part took 15 min and mixnet_l's 3 + 5 min per round of 3
# comparisons on an H200, so give each its own machine: ONLY=resnet50 or ONLY=mixnet_l (warm-up included).
# On a slow host (mixnet_l compiled 69-75 ms a step instead of 36) mixnet_l's warm-up took 4.7 min and a round
# 9-10 min, and a round's 6 comparisons decided nothing (forward busy -11.5 to +1.7 pp): look at the first
# round's step times before spending more. Its host probe read 1.74-1.88 ms against 0.78-0.97 ms on a normal
# host: a sitting stops before the warm-up (a 3 s probe) and after it when the probe reads over $FID_MAX_PROBE_MS (default 1.15), and after a
# round where a comparison's bare loop read over it (0.79-1.09 ms in a normal sitting's 9 comparisons, 1.19-1.72 ms
# in a slow one's 6: its forward busy moved +-20 pp). CONTINUE=<an earlier sitting's --json> pools with it.
# A round's comparisons end together, and a cut-off round gives nothing: 6 mixnet_l comparisons at once on a host
# whose probe read 1.52 ms had not ended 20 min after the warm-up (2xH200, 2026-11-27). Size rounds to the lease
# (FID_GROUPS=3) and set STOP_AFTER_S (no round starts after it; the warm-up counts) to the time left minus a round.
# FID_SEEDS (default 3): fresh -p processes per graph and comparison, each paired with one of reportgen's timing
# rounds (`--seeds`): 27 timing pairs per graph a comparison instead of 9, for a few seconds of windows each.
# 2xH200, 2026-11-28 (session 51): FID_GROUPS=3 FID_SEEDS=3 puts 24 processes of mixnet_l on one GPU; the warm-up
# took 215.5 s and the round 683 s (reportgen runs 578-617 s), and two backward -p of comparison 1 exited 1 after
# 380 s with one timing each (cause not kept then; a failed -p now prints its last line, and its JSON keeps the end).
# Session 52 (2xH200): that failure was CUDA out of memory (24 mixnet_l processes of 5-7 GiB on one 140 GiB GPU):
# use FID_GROUPS=2 for mixnet_l on one GPU. FID_ROUNDS x FID_GROUPS must not exceed MAX_<recipe> (--until-decided).
# Two sittings may share a 2-GPU machine: CUDA_VISIBLE_DEVICES and `taskset -c` halves apart, each with its own W
# (benchmarks/sittings/2026-11-28-2xH200-c/sit52.sh). CONTINUE=benchmarks/sittings/2026-11-28-2xH200-c/
# fidelity-mixnet_l.json pools with the mixnet_l sittings so far (6 comparisons; 3 with reportgen's blocks kept).
# FID_ARGS: more arguments for timing_fidelity.py (e.g. FID_ARGS=--aa: a bare loop in reportgen's place, the floor).
# Session 53: FID_SEEDS=0 starts no -p (step figures only; busy once decided) for shorter rounds. Two sittings in one
# tree once shared the steps copy of the recipe and one's exit removed it under the other: the copy's name now holds
# the pid (benchmarks/sittings/2026-11-28-2xH200-e/).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=${W:-/tmp/g27f}
FID_GROUPS=${FID_GROUPS:-3}
mkdir -p "$W"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }
fidelity() {  # recipe name, steps, max comparisons, extra arguments
  python benchmarks/timing_fidelity.py "recipes/$1.yaml" --steps "$2" --groups "$FID_GROUPS" \
    --rounds "${FID_ROUNDS:-2}" --seeds "${FID_SEEDS:-3}" --until-decided "$3" --work "$W/fid-$1" --json "$W/fidelity-$1.json" \
    --max-host-probe-ms "${FID_MAX_PROBE_MS:-1.15}" ${CONTINUE:+--continue-from "$CONTINUE"} \
    ${STOP_AFTER_S:+--stop-after-s "$STOP_AFTER_S"} ${FID_ARGS:-} "${@:4}"
}
run_resnet50() { fidelity resnet50 "${STEPS_RESNET:-60}" "${MAX_RESNET:-12}" "$@"; }
run_mixnet_l() { fidelity mixnet_l "${STEPS_MIXNET:-40}" "${MAX_MIXNET:-12}" --variant default "$@"; }
case "${ONLY:-}" in
  resnet50|mixnet_l)
    step "$ONLY fidelity"
    "run_$ONLY" > "$W/fidelity-$ONLY.txt" 2>&1 ;;
  *)
    step warm-ups
    run_resnet50 --warm-up-only > "$W/warm-resnet50.txt" 2>&1 &
    run_mixnet_l --warm-up-only > "$W/warm-mixnet_l.txt" 2>&1 &
    wait
    for name in resnet50 mixnet_l; do
      step "$name fidelity"
      "run_$name" > "$W/fidelity-$name.txt" 2>&1
    done ;;
esac
step done
