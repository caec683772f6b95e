# Session 60 (pre-registered in session 59's note): one fresh machine per device call (give_back after each), carry
# .whl (wheels: bash benchmarks/device_wheels.sh; this file, sit60s.sh and benchmarks' step_calls.py are in the tree;
# copy this file and sit60s.sh into .whl; cache-resnet50.txz from session 58's call 1 if .whl kept it, else the first
# call starts with resnet50:warm):
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl;
#   export PYTHONPATH=/tmp/site:$PWD; JOBS=... bash .whl/next-sit60.sh
# Why: session 59's judged resnet50 series (30 comparisons, 10 machines) reads compiled +1.75 % [+0.44, +3.89]:
# undecided, and more machines like these would not decide it (projection: 5 more, 1 % of draws). The 12 comparisons
# of the rounds with a fresh -p per graph read compiled +3.45 % (SE 0.90), the 18 without +0.76 % (SE 0.47); eager
# +0.81 against -0.18 %. That split was chosen after the data (seeded-resnet50.txt). This sitting tests it on the same
# machines: each call runs one round with -p and one without, in turn, so a machine's offset cancels.
# Calls, in order (each JOBS as written; a round needs 2 comparisons for an interval):
#   1: JOBS="resnet50:2:1 resnet50:2:0 resnet50:calls"  (step_calls.py last, about 100 s: counts per step in the two
#      processes; the pair of rounds first, so that a slow machine loses the count rather than a round)
#   2: JOBS="resnet50:2:0 resnet50:2:1"
#   3: JOBS="resnet50:2:1 resnet50:2:0"
#   4 (if 420 s of device time are left): JOBS="resnet50:2:0 resnet50:2:1", LIMIT lowered to fit
# Reading, fixed in advance:
# - the seed question: per machine, compiled's mean comparison median (first_round.py --by seeded on this session's
#   files) with -p minus without; the mean over machines with its Student-t interval. Reported as it comes. If that
#   interval lies above 0 the -p processes slow reportgen's side: from then on the step figures are judged from rounds
#   without -p and busy from rounds with (a change of method, made before the rounds it applies to). If it holds 0,
#   the offset is reportgen's own and session 61 looks for it (step_calls' counts and per-thread CPU say where next).
# - the judged series stays as pre-registered: every comparison from session 58 on (busy: from session 59 on), resnet50
#   pooled with timing_fidelity.py --report, the rule unchanged (hull of the three-stage bootstrap and the Student-t
#   over the machines' medians, +-3 % / +-3 pp, >= 6 comparisons). Reported, not judged: every file.
# - step_calls: reportgen's child against the bare process, function entries per eager and compiled step (exact) and
#   per-thread CPU per step (shown, not judged).
# mixnet_l (default) still waits for its session of its own (a cold warm-up is 222 s, then 2 comparisons of 40 pairs).
LIMIT=${LIMIT:-545} NEED_ROUND=${NEED_ROUND:-200} bash "$(dirname "$0")/sit60s.sh"
