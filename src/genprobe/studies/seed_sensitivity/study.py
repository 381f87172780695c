"""The seed-sensitivity study's declarations (`genprobe.studies.study`): a sweep's, and a
language model's."""

from pathlib import Path

from genprobe.studies.study import Study

KIND = "seed-sweep"
# Runs made before tasks were plug-ins: only the rewriting task, under this kind.
LEGACY_KIND = "rewriting-sweep"
DATA = "data"  # the driver's own shard: the examples of each role (`data/<role>.jsonl`)
TRAIN = "train"  # one shard per chunk of seeds, each one stacked model (`train.py`)
PREDICT = "predict"  # one shard per suite (`predict.py`)
METRICS = "metrics"  # the driver's own shard: `metrics.json`, made from the others' files
METRICS_FILE = "metrics.json"

SEED_SENSITIVITY = Study(
    kind=KIND,
    name="a seed sweep",
    config="genprobe.studies.seed_sensitivity.config:SweepConfig",
    run="genprobe.studies.seed_sensitivity.run:run_sweep",
    commands={
        "sweep": "genprobe.cli.sweep:sweep",
        "rewriting sweep": "genprobe.cli.rewriting:rewriting_sweep",
    },
    resumes="the finished shards are kept and a seed chunk in training goes on from its "
    "last save, at most a minute back",
    report="genprobe.studies.seed_sensitivity.report:write_report",
    tables="genprobe.studies.seed_sensitivity.tables:run_tables",
    stages=(DATA, TRAIN, PREDICT, METRICS),
    report_settings=("threshold", "grokking_threshold"),
    older_kinds=(LEGACY_KIND,),
    report_outputs=("stats.json",),
)

# A language model's run of the study (`genprobe evaluate --model hf:|openai:`): its members
# are the ways of asking it, its predictions and reports a sweep's (`language_model.py`).
LANGUAGE_MODEL = Study(
    kind="language-model",
    name="a language model's run of the seed study",
    config="genprobe.studies.seed_sensitivity.language_model:LanguageModelConfig",
    run="genprobe.studies.seed_sensitivity.run:evaluate_language_model",
    # `evaluate RUN_DIR --input FILE` adds a suite to a finished sweep, said the same
    commands={
        "evaluate": "genprobe.cli.sweep:evaluate",
        "rewriting evaluate": "genprobe.cli.sweep:evaluate",
    },
    resumes="the suites answered are kept, and an endpoint's answers come from its answer cache",
    report="genprobe.studies.seed_sensitivity.report:write_report",
    tables="genprobe.studies.seed_sensitivity.tables:run_tables",
    stages=(DATA, PREDICT, METRICS),
    report_settings=("threshold",),
    report_outputs=("stats.json",),
)

GRID_FILE = "grid.json"  # a grid of sweeps (`grid.py`): a folder with its axes and cells


def is_grid(path: str | Path) -> bool:
    """Whether `path` holds a grid of sweeps (told without loading the study's modules)."""
    return (Path(path) / GRID_FILE).is_file()
