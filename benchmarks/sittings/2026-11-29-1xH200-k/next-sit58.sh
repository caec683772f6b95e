# Session 58 (pre-registered in session 57's note): one fresh machine per device call (give_back after each), carry
# .whl (wheels, cache-resnet50.txz, cache-mixnet_l.txz, this file and sit58s.sh copied there):
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl;
#   export PYTHONPATH=/tmp/site:$PWD; bash .whl/next-sit58.sh
# Calls, in order, each on a fresh machine: (1) JOBS="resnet50:3" REPACK=1: its cache, now with the bare loop's
# graphs (the bare warm-up, new in session 57), comes back and replaces .whl/cache-resnet50.txz; (2) JOBS="mixnet_l:warm
# resnet50:3": mixnet_l's cache gains the bare loop's graphs (replaces .whl/cache-mixnet_l.txz), then a resnet50 round;
# (3) JOBS="resnet50:3"; (4) JOBS="mixnet_l:2" (40 block pairs, the -k series) if ~480 s of device time are left,
# else another resnet50 round. Each round: --seeds 0, one round of 3 (resnet50, 60 block pairs) or 2 comparisons.
# On a two-GPU kind, -j/next-sit57.sh (GPU 0 resnet50, GPU 1 mixnet_l) with today's timing_fidelity.py.
# Check of session 57's fixes on the same runs: reportgen's kept kernel files equal the bare loop's (the report's
# "kernels ... the same in N of N comparisons"); the log's "warm-up bare loop:" line shows the bare loop's FX graph
# cache misses before the rounds, and no timed bare loop compiles.
# Reading, fixed in advance. Judged: the comparisons from session 58 on alone (every sitting warms the bare loop up
# first: neither side compiles in its timed process), each recipe pooled with timing_fidelity.py --report, the rule
# as it is (the hull of the three-stage bootstrap and the Student-t over the machines' medians, +-3 %, >= 6
# comparisons). Reported beside it, not judged: (a) every file so far; (b) those with the 30 earlier comparisons
# where neither side compiled (first_round.py --warm-json), which read inside after the fact (warm-resnet50-pooled.txt).
JOBS=${JOBS:-resnet50:3} LIMIT=${LIMIT:-545} bash "$(dirname "$0")/sit58s.sh"
