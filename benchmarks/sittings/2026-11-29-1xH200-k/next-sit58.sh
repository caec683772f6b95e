# Session 58 (pre-registered in session 57's note): one fresh machine per device call (give_back after each), carry
# .whl (wheels, cache-resnet50.txz, cache-mixnet_l.txz, this file and sit57s.sh copied there):
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl;
#   export PYTHONPATH=/tmp/site:$PWD; bash .whl/next-sit58.sh
# resnet50 first: one round of 3 comparisons a machine, --seeds 0, 60 block pairs, until 4 machines or the device
# time left is under ~480 s; then mixnet_l --variant default, 2 comparisons of 40 block pairs, --seeds 0 (the 40-pair
# series of -k), on a machine of its own. On a two-GPU kind, -j/next-sit57.sh (GPU 0 resnet50, GPU 1 mixnet_l).
# Check of session 57's kernel fix, on the same runs: reportgen's kept kernel files equal the bare loop's (164 of
# 164 for resnet50; the report's "kernels ... the same in N of N comparisons").
# Reading, fixed in advance and unchanged: pool every file of a recipe so far (one step count) with
# timing_fidelity.py --report; the rule as it is (the hull of the three-stage bootstrap and the Student-t over the
# machines' medians, +-3 %, >= 6 comparisons).
JOBS=${JOBS:-resnet50:3} LIMIT=${LIMIT:-545} bash "$(dirname "$0")/sit57s.sh"
