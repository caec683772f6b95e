#!/usr/bin/env bash
# One device call of a sitting started by an earlier call (`next-sit*.sh` under setsid): wait up to $1 s (default
# 530) for it to end, copying its results and logs to $OUT every few seconds. A lent machine goes back after ~30 s
# idle and a later call then lands on a fresh one: this exits 3 at once when the sitting's tree is gone (session 54
# lost 533 s of device time waiting on a fresh machine). Usage, from the repository root on the device:
#   bash /tmp/work/benchmarks/sitting_poll.sh 530 /tmp/g27r /tmp/g27u
set -u
LIMIT=${1:-530}; shift || true
DIRS=("$@")
[ -d /tmp/work ] && [ -f /tmp/sit.log ] || { echo "no sitting here (/tmp/work or /tmp/sit.log missing): a fresh machine"; exit 3; }
copy() {
  cp /tmp/sit*.log "$OUT/" 2>/dev/null
  for d in "${DIRS[@]}"; do mkdir -p "$OUT/$(basename "$d")"; cp "$d"/*.json "$d"/*.txt "$OUT/$(basename "$d")/" 2>/dev/null; done
}
S=$SECONDS
while ! grep -q "all done" /tmp/sit.log && [ $((SECONDS - S)) -lt "$LIMIT" ]; do sleep 4; copy; done
copy
for f in /tmp/sit*.log; do echo "== $f"; tail -n 4 "$f" | cut -c1-300; done
