#!/usr/bin/env bash
# A sitting's jobs one after another on GPU 0 of a single-GPU machine, within LIMIT seconds of the start (the
# runner of the sittings' plans since session 62: `benchmarks/sittings/*/next-sit*.sh` set JOBS and call it; the
# earlier sittings' own copies, `sit5*s.sh` and `sit60s.sh`, stay as they ran). On the device, from the tree's root:
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl;
#   export PYTHONPATH=/tmp/site:$PWD; JOBS="resnet50:calls resnet50:2:0" bash benchmarks/sitting_jobs.sh
# JOBS, in order, all within LIMIT seconds of the start, each from .whl/cache-<recipe>.txz (extracted once):
#   recipe:K[:S]  one round of K comparisons with S fresh -p per graph (default $SEEDS, else 0); a later round of the
#                 recipe reuses the first one's warm-up bundle (timing_fidelity skips its warm-up), not its bare warm-up
#   recipe:calls  benchmarks/step_calls.py: calls per step and launch configs, reportgen's child against a bare process
#   recipe:warm   a cold warm-up whose cache goes back through $OUT as cache-<recipe>.txz
# A round starts only with NEED_ROUND seconds left (default 200: a 2-comparison round and its bare warm-up), so no
# round is cut by the call's end. Each round's logs (processes, windows) and its bundles' run.log and manifest go
# back as boot-<id>-gpu0-<recipe>-j<n>-logs.txz.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LIMIT=${LIMIT:-545}; CARRY=${CARRY:-.whl}; NEED_ROUND=${NEED_ROUND:-200}; T0=$(date +%s); N=$(nproc)
BOOT=$(cut -c1-8 /proc/sys/kernel/random/boot_id); G=/tmp/sitting
echo "[$(date -u +%H:%M:%S)] start on boot-$BOOT"; nvidia-smi -L 2>/dev/null; lscpu | grep -E "Model name|NUMA"
xzpack() {  # archive, dir, paths...: into $OUT (xz on all CPUs where the machine has it)
  local out=$1 dir=$2; shift 2
  if command -v xz > /dev/null; then tar -C "$dir" -cf - "$@" | xz -T"$N" -6 > "$OUT/$out"; else
    python -c "import sys, tarfile; t = tarfile.open(sys.argv[1], 'w:xz'); [t.add(sys.argv[2] + '/' + p, p) for p in sys.argv[3:]]" \
      "$OUT/$out" "$dir" "$@"
  fi
  ls -la "$OUT/$out"
}
prepare() {  # recipe: its work dir, the carried cache extracted once
  local w=$G/fid-$1
  if [ ! -d "$w" ]; then
    mkdir -p "$w"
    [ -f "$CARRY/cache-$1.txz" ] && python -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], \
      filter='data')" "$CARRY/cache-$1.txz" "$w"
  fi
  echo "$w"
}
job() {  # index, recipe, K|calls|warm, seeds, seconds left
  local i=$1 r=$2 n=$3 s=$4 left=$5 w extra=() steps=60 tag
  w=$(prepare "$r"); tag=$r-j$i
  [ "$r" = mixnet_l ] && extra=(--variant default) && steps=40
  case $n in
    warm)
      timeout "$left" python benchmarks/timing_fidelity.py "recipes/$r.yaml" --steps $steps --seeds 0 --work "$w" \
        --warm-up-only "${extra[@]}" > "$G/warm-$r.txt" 2>&1
      echo "[$(date -u +%H:%M:%S)] $r warm-up rc=$?"; tail -n 2 "$G/warm-$r.txt" | cut -c1-300
      xzpack "cache-$r.txz" "$w" cache; return ;;
    calls)
      timeout "$left" python benchmarks/step_calls.py "recipes/$r.yaml" --work "$G/calls-$tag" --inductor-cache "$w/cache" \
        --json "$OUT/boot-$BOOT-gpu0-$tag-calls.json" "${extra[@]}" > "$G/calls-$tag.txt" 2>&1
      echo "[$(date -u +%H:%M:%S)] $r step calls rc=$?"; cat "$G/calls-$tag.txt" | cut -c1-400
      cp "$G/calls-$tag.txt" "$OUT/boot-$BOOT-gpu0-$tag-calls.txt"; return ;;
  esac
  [ "$left" -lt "$NEED_ROUND" ] && echo "[$(date -u +%H:%M:%S)] $tag: $left s left, a round needs $NEED_ROUND: not started" && return
  rm -rf "$w/logs" "$w/results"  # this round's logs and bundles only (the warm-up bundle stays)
  timeout "$left" python benchmarks/timing_fidelity.py "recipes/$r.yaml" --steps $steps --groups "$n" --rounds 1 \
    --seeds "$s" --until-decided "$n" --work "$w" --json "$G/fidelity-$tag.json" --max-host-probe-ms 2.5 \
    "${extra[@]}" > "$G/fidelity-$tag.txt" 2>&1
  echo "[$(date -u +%H:%M:%S)] $tag round (seeds $s) rc=$?"
  grep -h "warm-up reportgen run\|warm-up bare loop\|round 1:\|GC passes" "$G/fidelity-$tag.txt" | cut -c1-200
  for f in json txt; do cp "$G/fidelity-$tag.$f" "$OUT/boot-$BOOT-gpu0-$tag.$f" 2>/dev/null; done
  (cd "$w" && ls -d logs results/*/*/run.log results/*/*/manifest.json 2> /dev/null) > "$G/kept-$tag"
  [ -s "$G/kept-$tag" ] && xzpack "boot-$BOOT-gpu0-$tag-logs.txz" "$w" $(cat "$G/kept-$tag")
  tail -n 3 "$G/fidelity-$tag.txt" | cut -c1-300
}
mkdir -p $G
i=0
for spec in ${JOBS:-resnet50:2:0}; do
  i=$((i + 1)); IFS=: read -r r n s <<< "$spec"
  left=$((LIMIT - ($(date +%s) - T0)))
  [ "$left" -lt 60 ] && echo "no time left for $spec" && continue
  job "$i" "$r" "$n" "${s:-${SEEDS:-0}}" "$left" 2>&1 | tee -a "$G/sit.log"
done
cp $G/sit.log "$OUT/boot-$BOOT-gpu0.log"
echo "[$(date -u +%H:%M:%S)] done"
