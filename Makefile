# On a fresh machine: `make install` (the package in .venv), `make demo` (a small real study
# ending in a report) and `make test` (adds the test tools and optional backends, then runs the
# suite). Each creates .venv and installs what it needs on first use.
VENV ?= .venv
# The pinned CPU wheel keeps a laptop install small; set TORCH= to keep a torch you have.
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin

.PHONY: install demo test lint reproduce grokking strong-data strong-model

# the package and what it needs to run
$(BIN)/genprobe: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(if $(TORCH),$(BIN)/pip install -q "$(TORCH)")
	$(BIN)/pip install -q -e .
	touch $@

# the test extras on top: pytest, hypothesis, ruff, and the optional backends the tests cover
# (Ray, TensorBoard, httpx, transformers)
$(VENV)/.test-extras: $(BIN)/genprobe
	$(BIN)/pip install -q -e ".[test]"
	touch $@

install: $(BIN)/genprobe

demo: $(BIN)/genprobe
	$(BIN)/genprobe rewriting sweep --seeds 6 --train-size 30000 --validation-size 1000 \
		--suite-size 1000 --max-epochs 30 --seeds-per-shard 3 --out runs/demo

# the tests on a worker per core (four at most), a file's tests on one worker, which builds its
# module fixtures once
test: $(VENV)/.test-extras
	$(BIN)/pytest -n auto --maxprocesses 4 --dist loadfile

lint: $(VENV)/.test-extras
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

# DEVICE=cuda: the same study on a GPU, all 50 seeds in one stacked model (docs/gpu.md).
DEVICE ?= cpu
reproduce: $(BIN)/genprobe
	$(BIN)/genprobe rewriting sweep --seeds 50 --device $(DEVICE) \
		$(if $(filter cuda%,$(DEVICE)),--seeds-per-shard 50 --out runs/weber-gpu,--out runs/weber)

# Grokking's seed study (docs/grokking.md): 100 seeds of the MLP on x+y mod 97 trained over
# time, with the distribution of the step at which they learn the rule.
grokking: $(BIN)/genprobe
	$(BIN)/genprobe sweep --task binary_operation --task-option operation=x+y \
		--task-option p=97 --task-option train_fraction=0.4 --arch mlp \
		--model-option hidden=64 --steps 1500 --full-batch --optimizer adamw --lr 0.01 \
		--weight-decay 1 --beta2 0.98 --max-grad-norm 0 --seeds 100 --seeds-per-shard 50 \
		--out runs/grokking

# The integration model strong in distribution that the brittleness study probes
# (docs/integration.md, "A strong model on 2 CPU cores"): BWD and FWD pairs of up to 6
# operators, pooled (`strong-data`: its test split is the brittleness study's --validation,
# its train split the --train-data), and `train --preset cpu`. Every step resumes where it
# stopped. `--engine fast`: the shipped model was trained on the data genprobe made before the
# lc engine (docs/integration.md, "Data generators"), and these commands remake it exactly.
WORKERS ?= $(shell nproc)
strong-data: $(BIN)/genprobe
	mkdir -p data
	$(BIN)/genprobe integration generate --method bwd --n 300000 --max-ops 6 --seed 21 \
		--engine fast --workers $(WORKERS) --out data/bwd6.txt
	$(BIN)/genprobe integration generate --method fwd --n 15000 --max-ops 6 --seed 22 \
		--engine fast --workers $(WORKERS) --out data/fwd6.txt
	$(BIN)/genprobe integration mix --part data/bwd6.txt --part data/fwd6.txt \
		--valid-fraction 0.005 --test-fraction 0.01 --out data/mix6.txt

strong-model: strong-data
	$(BIN)/genprobe integration train --preset cpu --data data/mix6.txt.train --out runs/strong-cpu
