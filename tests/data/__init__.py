"""Test data shipped with the repository: every path a test reads is declared here, inside the checkout."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent
H100_FIXTURE = DATA_DIR / "h100-mixnet_l-train-amp"
H200_MIXNET_TRACE = DATA_DIR / "h200-mixnet_l" / "trace.json.gz"
H100_BACK_TO_BACK_TRACE = DATA_DIR / "h100-mixnet_l-back-to-back" / "trace.json.gz"
BUNDLES_DIR = DATA_DIR / "bundles"
CPU_HISTORY = DATA_DIR / "cpu-history-addmul"
"""A results directory with three real runs of addmul.yaml: two under torch 2.13.0, one under 2.14.1 (latest)."""
H100_HOST_PROBE = DATA_DIR / "h100-host-probe" / "bare_loops.json"
RECIPES_DIR = DATA_DIR / "recipes"
BAD_RECIPES_DIR = DATA_DIR / "bad_recipes"
DDP_GLOO_TRACES = tuple(DATA_DIR / "ddp-gloo-2ranks" / f"rank{rank}.json.gz" for rank in (0, 1))
"""Each rank's profiled compiled steps of a real two-rank run of recipes/ddp_tiny.yaml (DDP, gloo, CPU, torch 2.13)."""
NCCL_TRACES = {
    strategy: tuple(DATA_DIR / "h200-nccl-2ranks" / f"{strategy}-rank{rank}.json.gz" for rank in (0, 1))
    for strategy in ("ddp", "fsdp2", "ddp-skew")
}
"""Each rank's three profiled compiled steps of recipes/resnet50_ddp.yaml (`ddp`) and recipes/transformer_fsdp2.yaml
(`fsdp2`) on 2 x H200 over NCCL (torch 2.11, 2026-11-27): NCCL kernels carry their collective's sizes. `ddp-skew`, a
later run of resnet50_ddp: rank 0 ran 18 ms ahead, and two all-reduces it launched before its profiler started (the
warm-up step's, waiting for rank 1) ran inside its first step window."""
