#!/usr/bin/env bash
# GPU check of issue 26 (hardening): old code (.base/, the commit before) against this tree, on one GPU.
# Prepare here: mkdir .base && git archive <old commit> reportgen | tar -x -C .base  (.base/ is git-ignored locally:
# echo /.base/ >> .git/info/exclude), then on the device, with reportgen's dependencies installed to /tmp/site:
#   bash benchmarks/hardening/check.sh   (writes $OUT/bundles.tgz: both sides' hostile bundles, the new transformer)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
here=$PWD
alive() { local f=$1; [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && echo "ALIVE pid $(cat "$f")" || echo "gone"; }
for side in old new; do
  if [ $side = old ]; then code=$here/.base; else code=$here; fi
  export PYTHONPATH=/tmp/site:$code
  cd $code  # `python -m` puts the working directory first on sys.path
  echo "=== $side: $(python3 -c 'import reportgen,sys; print(reportgen.__file__)')"
  rm -f /tmp/hostile-orphan.pid /tmp/hang-orphan.pid
  /usr/bin/time -f "$side transformer wall %e s maxrss %M KB" python3 -m reportgen run $here/recipes/transformer.yaml -o /tmp/r-$side 2>&1 | tail -3
  /usr/bin/time -f "$side hostile wall %e s" python3 -m reportgen run $here/benchmarks/hardening/hostile.yaml -o /tmp/r-$side 2>&1 | tail -2
  sleep 2; echo "$side orphan after a normal run: $(alive /tmp/hostile-orphan.pid)"
  python3 -m reportgen run $here/benchmarks/hardening/hang.yaml -o /tmp/r-$side --timeout 25 2>&1 | tail -2
  sleep 2; echo "$side orphan after a timeout: $(alive /tmp/hang-orphan.pid)"
  for f in /tmp/hostile-orphan.pid /tmp/hang-orphan.pid; do [ -f $f ] && kill -9 "$(cat $f)" 2>/dev/null; done
  echo "$side trace: ghp_ occurrences $(zcat /tmp/r-$side/hostile/trace.json.gz | grep -o 'ghp_[A-Za-z0-9]*' | wc -l), redacted $(zcat /tmp/r-$side/hostile/trace.json.gz | grep -o 'redacted' | wc -l)"
  echo "$side manifest: hunter2 occurrences $(cat /tmp/r-$side/hostile/*.json /tmp/r-$side/hostile/recipe.yaml | grep -c hunter2)"
  python3 - "$side" <<'PY'
import json, sys
side = sys.argv[1]
a = json.load(open(f"/tmp/r-{side}/transformer/analysis.json"))
m = json.load(open(f"/tmp/r-{side}/transformer/manifest.json"))
met = m["metrics"]
print(side, "status", m["status"], "device", m["environment"].get("device_name"))
print(side, "eager median ms %.3f compiled median ms %.3f compile s %.1f" % (
    met["eager"]["median_ms"], met["compiled"]["median_ms"], met["compile_time_s"]))
k = a["kernels"]
print(side, "kernels", len(k["kernels"]), "kernel time per profiled window us %.1f" % k["total_us"])
for g in a["graphs"]:
    print(side, "graph", g["label"], "calls", g["calls"], "kernel_time_us %.1f" % g["kernel_time_us"],
          "busy_union %s%%" % g["busy_union_percent"], "kernels", len(g["kernels"]))
PY
  cd $here
done
cd /tmp && tar czf $OUT/bundles.tgz r-new/transformer r-new/hostile r-old/hostile 2>/dev/null; ls -la $OUT
