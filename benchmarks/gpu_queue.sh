#!/usr/bin/env bash
# What a lent GPU machine runs (../shared/gpu-queue.md), as one script: the items named in
# ITEMS, in that order, each under a time limit, until BUDGET seconds are spent.
#
#   tests    the GPU identity tests (tests/training/test_trainer.py -k gpu)
#   bench    benchmarks/sweep_gpu.py: LSTM and transformer members against their seeds alone,
#            member-steps/s with host and counter uniforms at S = 50, 200, 1,000
#   study    the rewriting seed study, SEEDS seeds in one stack, counter noise
#   chomsky  the Chomsky-hierarchy transformer of docs/results/transformers.md, 10 seeds, on
#            CHOMSKY_TASKS (reverse_string parity_check duplicate_string bucket_sort), EPOCHS
#            epochs each
#   grok     Nanda et al.'s grokking transformer (x+y mod 113, 30 %, weight decay 1, full batch):
#            GROK_SEEDS seeds in one stack for GROK_STEPS steps; its report, stats, members.csv
#            (when each seed memorized and grokked) and figures come back
#   beam     benchmarks/beam_throughput.py at the paper's size (random weights)
#   lc       issue 37: LC_N BWD pairs of the lc engine (Lample & Charton's distribution) made on
#            every core of the machine, the shipped model fine-tuned on them (LC_EPOCHS), and it
#            and the shipped model evaluated on their held-out 1 %; the fine-tuned model.pt
#            comes back as $OUT/lc_model.pt
#
#     OUT=/tmp/gpu ITEMS="tests bench" BUDGET=300 bash benchmarks/gpu_queue.sh   # a GPU machine
#     OUT=/tmp/gpu DEVICE=cpu SMALL=1 bash benchmarks/gpu_queue.sh               # tried on a CPU
#
# One log per item, and the studies' metrics.json (with the rewriting study's stats.json and
# report.md), are packed into $OUT/gpu_queue.tgz at the end (a device call brings back only a
# few files); $OUT/steps.log says how each item ended. The repository runs from its source tree
# (PYTHONPATH), with the machine's own torch.
set -u
OUT=${OUT:-runs/gpu-queue}
ITEMS=${ITEMS:-tests bench study}
BUDGET=${BUDGET:-560}
SEEDS=${SEEDS:-100}
EPOCHS=${EPOCHS:-40}
CHOMSKY_TASKS=${CHOMSKY_TASKS:-reverse_string parity_check duplicate_string bucket_sort}
GROK_SEEDS=${GROK_SEEDS:-40}
GROK_STEPS=${GROK_STEPS:-12000}
LC_N=${LC_N:-30000}
LC_EPOCHS=${LC_EPOCHS:-10}
DEVICE=${DEVICE:-cuda}
PYTHON=${PYTHON:-python3}
LOGS=$OUT/logs
mkdir -p "$LOGS"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
start=$SECONDS
left() { echo $((BUDGET - (SECONDS - start))); }

if [ -n "${SMALL:-}" ]; then
    bench=(--device "$DEVICE" --members 2 3 --transformer-members 2 --steps 2 --repeats 1
           --identity-steps 2 --train-size 2000)
    study=(--train-size 500 --validation-size 50 --suite-size 50 --max-epochs 2)
    chomsky=(--train-size 200 --validation-size 20 --suite-size 5 --seeds 2 --seeds-per-shard 2)
    beam=(--device "$DEVICE" --problems 2 --beam 2 --max-len 10 --repeats 1)
    GROK_SEEDS=2 GROK_STEPS=20
    LC_N=400 LC_EPOCHS=1
    lc_train=(--epoch-size 64 --valid-size 4 --max-len 64)
    lc_eval=(--n 4 --beam 2 --max-len 32)
else
    bench=(--members 50 200 1000 --steps 20 --repeats 1)
    study=()
    chomsky=(--seeds 10 --seeds-per-shard 10)
    beam=(--size paper --device "$DEVICE" --problems 64 --repeats 1)
    lc_train=()
    lc_eval=()
fi

# run ITEM LIMIT COMMAND...: the command under the smaller of LIMIT and the budget left
run() {
    local item=$1 limit=$2 began=$SECONDS
    shift 2
    [ "$(left)" -lt "$limit" ] && limit=$(left)
    if [ "$limit" -le 10 ]; then
        echo "$item: skipped, the budget is spent" | tee -a "$OUT/steps.log"
        return
    fi
    timeout "$limit" "$@" >>"$LOGS/$item.log" 2>&1
    echo "$item: exit $? after $((SECONDS - began)) s" | tee -a "$OUT/steps.log"
}

{ nvidia-smi -L || true; "$PYTHON" -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__)"; } \
    >"$LOGS/environment.log" 2>&1
for item in $ITEMS; do
    case $item in
    tests) run tests 120 "$PYTHON" -m pytest -q -p no:cacheprovider tests/training/test_trainer.py -k gpu ;;
    bench) run bench 300 bash -c 'cd benchmarks && "$0" sweep_gpu.py "$@"' "$PYTHON" "${bench[@]}" ;;
    study)
        dir=$(mktemp -d)/study
        run study 600 "$PYTHON" -m genprobe rewriting sweep --seeds "$SEEDS" --seeds-per-shard "$SEEDS" \
            --device "$DEVICE" --noise counter --out "$dir" "${study[@]}"
        for file in metrics.json stats.json report.md; do
            [ -f "$dir/$file" ] && cp "$dir/$file" "$LOGS/study_$file"
        done
        ;;
    chomsky)
        for task in $CHOMSKY_TASKS; do
            dir=$(mktemp -d)/$task
            run "chomsky_$task" 300 "$PYTHON" -m genprobe sweep --task "$task" \
                --task-option test_lengths=41-500:51 --arch transformer --hidden 32 --heads 4 \
                --ffn 128 --layers 2 --dropout 0 --positions sinusoidal --optimizer adamw \
                --lr 0.001 --warmup 100 --schedule cosine --max-epochs "$EPOCHS" --patience 3 \
                --validation-size 500 --suite-size 100 --device "$DEVICE" \
                --out "$dir" "${chomsky[@]}"
            [ -f "$dir/metrics.json" ] && cp "$dir/metrics.json" "$LOGS/chomsky_${task}_metrics.json"
        done
        ;;
    grok)
        dir=$(mktemp -d)/grok
        run grok 540 "$PYTHON" -m genprobe sweep --task binary_operation --task-option p=113 \
            --task-option train_fraction=0.3 --arch nanda_transformer --steps "$GROK_STEPS" \
            --full-batch --optimizer adamw --lr 0.001 --weight-decay 1 --beta2 0.98 \
            --max-grad-norm 0 --warmup 10 --seeds "$GROK_SEEDS" --seeds-per-shard "$GROK_SEEDS" \
            --first-seed 0 --device "$DEVICE" --out "$dir"
        run grok_export 60 "$PYTHON" -m genprobe export "$dir" --out "$dir/tables"
        for file in report.md stats.json tables/members.csv tables/curves.csv; do
            [ -f "$dir/$file" ] && cp "$dir/$file" "$LOGS/grok_$(basename "$file")"
        done
        [ -d "$dir/figures" ] && cp -r "$dir/figures" "$LOGS/grok_figures"
        ;;
    beam) run beam 300 "$PYTHON" benchmarks/beam_throughput.py "${beam[@]}" ;;
    lc)
        dir=$(mktemp -d)
        run lc_data 240 "$PYTHON" -m genprobe integration generate --method bwd --engine lc \
            --n "$LC_N" --max-ops 6 --seed 21 --workers "$(nproc)" --valid-fraction 0.005 \
            --test-fraction 0.01 --out "$dir/bwd6.txt"
        run lc_train 180 "$PYTHON" -m genprobe integration train --preset cpu \
            --init bundled:integration-cpu --data "$dir/bwd6.txt.train" --lr 5e-4 --warmup 1000 \
            --schedule cosine --epochs "$LC_EPOCHS" --max-minutes 2.5 --device "$DEVICE" \
            --out "$dir/finetuned" "${lc_train[@]}"
        for model in bundled:integration-cpu "ckpt:$dir/finetuned"; do
            run "lc_eval_${model%%:*}" 75 "$PYTHON" -m genprobe integration evaluate \
                --model "$model" --data "$dir/bwd6.txt.test" --k 1 10 --device "$DEVICE" \
                --out "$dir/eval-${model%%:*}" "${lc_eval[@]}"
        done
        cp "$dir/bwd6.txt.meta.json" "$LOGS/lc_data_meta.json" 2>/dev/null
        [ -f "$dir/finetuned/model.pt" ] && cp "$dir/finetuned/model.pt" "$OUT/lc_model.pt"
        ;;
    *) echo "unknown item $item (tests, bench, study, grok, chomsky, beam, lc)" | tee -a "$OUT/steps.log" ;;
    esac
done
tar -czf "$OUT/gpu_queue.tgz" -C "$OUT" logs && rm -r "$LOGS"
exit 0
