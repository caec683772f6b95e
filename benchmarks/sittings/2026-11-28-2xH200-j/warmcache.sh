# Session 56: fill resnet50's and mixnet_l's Inductor caches on a lent H200 (warm-up runs alone, one per GPU) and
# bring them back through $OUT, so later sittings carry them (.whl/cache-*.tgz) and skip the cold compile.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
BOOT=$(cut -c1-8 /proc/sys/kernel/random/boot_id); echo "[$(date -u +%H:%M:%S)] start on boot-$BOOT"
warm() {  # gpu, recipe, seconds, extra
  CUDA_VISIBLE_DEVICES=$1 timeout "$3" python benchmarks/timing_fidelity.py "recipes/$2.yaml" --seeds 0 \
    --work "/tmp/wc/fid-$2" --warm-up-only "${@:4}" > "$OUT/warm-$2.txt" 2>&1
  echo "[$(date -u +%H:%M:%S)] $2 warm-up rc=$?"; pkill -f "reportgen run recipes/$2.yaml"; sleep 1
  cp /tmp/wc/fid-$2/logs/warmup.log "$OUT/warmup-$2.log" 2>/dev/null
  tar -C "/tmp/wc/fid-$2" --warning=no-file-changed --ignore-failed-read -czf "$OUT/cache-$2.tgz" cache
  ls -la "$OUT/cache-$2.tgz"
}
warm 0 resnet50 200 --steps 60 &
warm 1 mixnet_l 235 --steps 40 --variant default &
wait; echo "[$(date -u +%H:%M:%S)] done"; tail -n 2 "$OUT"/warm-*.txt
