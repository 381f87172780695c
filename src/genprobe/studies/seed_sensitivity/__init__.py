"""The seed-sensitivity study (Weber, Shekhar & Balasubramanian 2018) on symbol rewriting.

study.py    its declarations (a sweep's, a language model's): run kind, stages, report
config.py   SweepConfig: what a run hashes; the data it implies
language_model.py
            LanguageModelConfig: a language model's run, its members the ways of asking it
device.py   the runtime device: its presence checked only when a stage uses it
memory.py   the estimated peak memory, against what is free, before anything is built
model_check.py
            the architecture's contract, checked before a run is made
train.py    stage `train`: chunks of seeds, each one stacked model → member checkpoints
curves.py   an over-time sweep's curves, one file per stacked model
members.py  member checkpoint files; load_members stacks them for decoding
predict.py  stage `predict`: one suite per shard → predictions/<suite>.parquet, judged
            outputs (a sweep's members decode; a language model's answer prompts)
results.py  predictions, training summaries and metrics.json from recorded files only
run.py      run_sweep, evaluate_external and evaluate_language_model: the drivers
grid.py     a grid of sweeps over settings, one run per cell
as_model.py a finished sweep as a model under test (`run:RUN_DIR`)
summary.py  the statistics of the result files → stats.json
tables.py   the results as tidy tables (`genprobe.studies.tables`)
report.py   the report's content (rendered by genprobe.analysis.render);
            over_time_report.py and grid_report.py: an over-time sweep's and a grid's
compare.py  several sweeps side by side

The names below other than KIND are imported on first use: `genprobe.studies` reads
`study.py` of every study, and reading it must not load torch.
"""

from __future__ import annotations

from genprobe.lazy import lazy_names
from genprobe.studies.seed_sensitivity.study import KIND

# a public name -> the module of this package that defines it
_DEFINED_IN = {
    "SweepConfig": "config",
    "LanguageModelConfig": "language_model",
    "load_members": "members",
    "evaluate_external": "run",
    "evaluate_language_model": "run",
    "run_sweep": "run",
}


__getattr__ = lazy_names(__name__, _DEFINED_IN)


__all__ = [
    "KIND",
    "LanguageModelConfig",
    "SweepConfig",
    "evaluate_external",
    "evaluate_language_model",
    "load_members",
    "run_sweep",
]
