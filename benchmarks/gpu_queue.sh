#!/usr/bin/env bash
# What a lent GPU machine runs in one call (../shared/gpu-queue.md, items 1 and 2): the GPU
# identity tests, benchmarks/sweep_gpu.py (member-steps/s with host and counter uniforms at
# S = 50, 200, 1,000; LSTM and transformer members against their seeds alone), then the
# rewriting seed study with counter noise, for what is left of BUDGET seconds.
#
#     OUT=/tmp/gpu BUDGET=560 SEEDS=100 bash benchmarks/gpu_queue.sh     # on the GPU machine
#     OUT=/tmp/gpu DEVICE=cpu SMALL=1 bash benchmarks/gpu_queue.sh      # tried on a CPU first
#
# Logs and the study's metrics.json, stats.json and report.md land in $OUT. The repository
# runs from its source tree (PYTHONPATH), with the machine's own torch.
set -u
OUT=${OUT:-runs/gpu-queue}
BUDGET=${BUDGET:-560}
SEEDS=${SEEDS:-100}
DEVICE=${DEVICE:-cuda}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
start=$SECONDS
left() { echo $((BUDGET - (SECONDS - start))); }

if [ -n "${SMALL:-}" ]; then
    bench=(--device "$DEVICE" --members 2 3 --transformer-members 2 --steps 2 --repeats 1
           --identity-steps 2 --train-size 2000)
    study=(--train-size 500 --validation-size 50 --suite-size 50 --max-epochs 2)
else
    bench=(--members 50 200 1000 --steps 20 --repeats 1)
    study=()
fi

{ nvidia-smi -L || true; "$PYTHON" -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__)"; } \
    >"$OUT/environment.log" 2>&1
timeout 120 "$PYTHON" -m pytest -q -p no:cacheprovider tests/training/test_trainer.py -k gpu \
    >"$OUT/gpu_tests.log" 2>&1
echo "gpu tests: exit $? after $((SECONDS - start)) s" | tee -a "$OUT/steps.log"
(cd benchmarks && timeout 240 "$PYTHON" sweep_gpu.py "${bench[@]}") >"$OUT/sweep_gpu.log" 2>&1
echo "sweep_gpu: exit $? after $((SECONDS - start)) s" | tee -a "$OUT/steps.log"

run=$(mktemp -d)/study
study_start=$SECONDS
timeout $(($(left) - 15)) "$PYTHON" -m genprobe rewriting sweep --seeds "$SEEDS" \
    --seeds-per-shard "$SEEDS" --device "$DEVICE" --noise counter --out "$run" "${study[@]}" \
    >"$OUT/study.log" 2>&1
echo "study ($SEEDS seeds, counter noise): exit $? after $((SECONDS - study_start)) s" \
    | tee -a "$OUT/steps.log"
for file in metrics.json stats.json report.md; do
    [ -f "$run/$file" ] && cp "$run/$file" "$OUT/study_$file"
done
exit 0
