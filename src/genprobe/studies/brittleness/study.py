"""The brittleness study's declaration (`genprobe.studies.study`)."""

from genprobe.studies.probe.study import DECODE, LARGE_SEARCH, SUITES
from genprobe.studies.study import Study

TRAINING = "training"  # what the model was trained on (`run.py`): one shard, its file
TRAINING_FILE = "training.json"
# the stages of runs made before the study ran as a probe, read as they are (`results.py`)
SUITE = "suite"  # one shard per suite table built
SOLVE = "solve"  # decode and verify a chunk of a suite's problems
BUDGET = "budget"  # the large search on the simple primitives

BRITTLENESS = Study(
    kind="integration-brittleness",
    name="a brittleness study",
    config="genprobe.studies.brittleness.config:BrittlenessConfig",
    run="genprobe.studies.brittleness.run:run_brittleness",
    # `integration evaluate` is its in-distribution suite alone, on one dataset
    commands={
        "integration evaluate": "genprobe.cli.brittleness:evaluate",
        "integration brittleness": "genprobe.cli.brittleness:brittleness",
    },
    resumes="the finished shards are kept",
    report="genprobe.studies.brittleness.report:write_report",
    tables="genprobe.studies.brittleness.tables:run_tables",
    stages=(TRAINING, SUITES, DECODE, LARGE_SEARCH, SUITE, SOLVE, BUDGET),
    report_outputs=("summary.json", "examples.parquet"),
)
