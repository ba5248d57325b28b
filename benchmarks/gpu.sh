#!/usr/bin/env bash
# The GPU round in one command: checks, the main job, then benchmarks/run.py.
# Run from the repository root on a GPU machine (jaxblitz from this checkout,
# JAX with CUDA and, for the side-by-side, a CUDA PyTorch already installed):
#   bash benchmarks/gpu.sh OUTDIR [run.py flags, default: --quick --batches all]
# Writes OUTDIR/{gpu.txt,check.log,train.log,run.log,results_gpu.json,
# BENCHMARKS_gpu.md,compat.log,launch.json,launch.log}.
set -uo pipefail
out=${1:?usage: bash benchmarks/gpu.sh OUTDIR [run.py flags]}
shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--quick --batches all)
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false # PyTorch shares the card
py=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv | tee "$out/gpu.txt"
$py -c 'import jax, torch; print("jax", jax.__version__, jax.devices(), "torch", torch.__version__, torch.cuda.is_available())' | tee -a "$out/gpu.txt"
$py benchmarks/check_device.py 2>&1 | tee "$out/check.log"
( time $py -m jaxblitz.cli --dataset digits --epochs 2 --log-every 200 \
    --out-dir "$out/digits" --fresh --no-progress ) 2>&1 | tail -25 | tee "$out/train.log"
rm -rf "$out/digits"
$py benchmarks/run.py "${flags[@]}" --out "$out/results_gpu.json" \
    --markdown "$out/BENCHMARKS_gpu.md" 2>&1 | grep -v "^WARNING" | tee "$out/run.log"
# compat eager and PyTorch on CUDA, then the launch costs and the kernels of a
# step and an eval batch (BENCHMARKS.md, "Launches on the GPU").
$py benchmarks/bench_compat.py --batches 4,128 --repeats 3 2>&1 | grep -v "^WARNING" \
    | tee "$out/compat.log"
$py benchmarks/bench_launch.py --profile --out "$out/launch.json" 2>&1 \
    | grep -v "^WARNING" | tee "$out/launch.log"
