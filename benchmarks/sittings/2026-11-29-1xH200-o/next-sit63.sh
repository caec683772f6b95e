# Session 63 (pre-registered in session 62's note): one fresh machine per device call (give_back after each, and
# between calls too), carry .whl (wheels: bash benchmarks/device_wheels.sh; cache-resnet50.txz and
# cache-mixnet_l.txz as session 62 left them):
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl; export
#   PYTHONPATH=/tmp/site:$PWD; JOBS=... [NEED_ROUND=...] bash benchmarks/sittings/2026-11-29-1xH200-o/next-sit63.sh
# Why: session 62 found reportgen's run child and a bare process on one cache launching 19 of resnet50's 164 Triton
# kernels with other configs (each side's FX-graph-cache entry keeps its own), but timed under both configs they
# differ by +30.8 us per step (0.13 % of a 23 ms compiled step): not the +1.78 % offset. Python work and calls into C
# per step are equal. From this sitting on (registered before these comparisons):
#   - the bare loop's first-call benchmarks take GPU-only windows, as reportgen's run child's do (session 61's rule);
#   - the bare loop profiles its own steps after timing them, as the run does (`fidelity_children.profiled_figures`),
#     and `--report` prints both sides' device time per profiled step and the kernels that differ by name.
# Calls, in order:
#   1: JOBS="resnet50:2:0 resnet50:2:0"                 (a warm-up, then 2 rounds of 2 comparisons)
#   2: JOBS="mixnet_l:2:0" NEED_ROUND=450               (mixnet_l's comparisons 5 and 6: its step figures judged)
#   3 (if 500 s are left): JOBS="mixnet_l:2:1" NEED_ROUND=480  (with a fresh -p per graph: mixnet_l's busy)
#   else: JOBS="resnet50:2:0" with LIMIT lowered to what is left.
# Reading, fixed in advance:
# - judged as registered: resnet50 (every comparison from session 58 on, busy from 59) and mixnet_l default (from
#   session 62's comparisons, 40 block pairs, judged from 6): timing_fidelity.py --report, the hull of the
#   three-stage bootstrap and the Student-t over machines' medians, +-3 % / +-3 pp.
# - device or host (shown, not judged): over this sitting's resnet50 comparisons (at least 4), the median of
#   reportgen's compiled device time per profiled step against the bare loop's. If it is >= +1 % (and the step
#   offset in those comparisons too), the offset is on the device: the kernels that differ by name say where
#   (cuDNN's algorithms, say), and session 64 times them. If it lies within +-0.5 % while the compiled step offset
#   of the same comparisons stays >= +1 %, the offset is on the host: session 64 looks at what a count cannot see
#   on the CPU side (allocator calls, threads), with the run's steps against the bare loop's in turn.
#   Between the two: undecided, more comparisons.
LIMIT=${LIMIT:-545} NEED_ROUND=${NEED_ROUND:-200} bash benchmarks/sitting_jobs.sh
