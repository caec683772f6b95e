#!/usr/bin/env bash
# Wheels that a lent GPU machine lacks for reportgen's run stage and benchmarks/timing_fidelity.py (it has torch,
# numpy, matplotlib, pyyaml, rich, tabulate; not pydantic, orjson, ijson), downloaded into DIR (default .whl, which
# git ignores here through .git/info/exclude) for its Python (3.12, manylinux x86_64). The ignored folder does not
# survive from one session to the next: run this first. On the machine:
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site:$PWD
# The versions: those session 58 ran (pydantic pins its core exactly).
set -euo pipefail
dir=${1:-.whl}
mkdir -p "$dir"
case $dir in /*) ;; *) grep -qx "/$dir/" .git/info/exclude 2> /dev/null || echo "/$dir/" >> .git/info/exclude ;; esac
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$dir" \
  pydantic==2.13.4 pydantic-core==2.46.4 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0 \
  orjson==3.13.0 ijson==3.6.0
ls "$dir"
