# Session 59 (pre-registered in session 58's note): one fresh machine per device call (give_back after each), carry
# .whl (wheels: bash benchmarks/device_wheels.sh; this file and ../2026-11-29-1xH200-k/sit58s.sh copied there; cache-resnet50.txz once call 1 sent it):
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl;
#   export PYTHONPATH=/tmp/site:$PWD; JOBS=... bash .whl/next-sit59.sh
# Why: session 58's judged series (15 resnet50 comparisons, 5 machines, each sitting warmed the bare loop up first)
# read eager and compiled inside +-3 %, speedup undecided by 0.02 points ([-3.02, +0.47]: the t over the machines'
# medians), and it held no -p, so no busy figure. Projection (projection-resnet50-speedup.txt): 1 more machine like
# these brings the t inside in 86 % of draws, 3 in 93 %.
# Calls, in order, each on a fresh machine, JOBS="resnet50:3" SEEDS=1 (one round of 3 comparisons, each with a
# fresh -p per graph, so forward and backward busy are compared too); call 1 adds REPACK=1 (the ignored .whl does not
# survive between sessions: session 58 started cold) and its cache-resnet50.txz goes into .whl. If call 1's round
# leaves under 100 s of its 545, later calls take SEEDS=0 (step figures only). Until the device time is spent.
# Reading, fixed in advance: judged are the comparisons from session 58 on (both sides warmed up; for busy, session
# 59's), resnet50 pooled with timing_fidelity.py --report, the rule as it is (hull of the three-stage bootstrap and
# the Student-t over the machines' medians, +-3 % / +-3 pp, >= 6 comparisons). Reported, not judged: every file.
# mixnet_l (default) starts its judged series in a later session of its own: a cold cache costs a call there
# (warm-up 222 s, bare warm-up on top), and two comparisons of 40 block pairs fill a warm one.
SEEDS=${SEEDS:-1} JOBS=${JOBS:-resnet50:3} LIMIT=${LIMIT:-545} bash "$(dirname "$0")/sit58s.sh"
