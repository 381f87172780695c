"""The seed-sensitivity study (Weber, Shekhar & Balasubramanian 2018) on symbol rewriting.

config.py   SweepConfig: what a run hashes; the data it implies
device.py   the runtime device: its name checked early, its presence only when used
train.py    stage `train`: chunks of seeds, each one stacked model → member checkpoints
members.py  member checkpoint files; load_members stacks them for decoding
predict.py  stage `predict`: one suite per shard → predictions/<suite>.parquet
results.py  predictions, training summaries and metrics.json from recorded files only
run.py      run_sweep and evaluate_external: the drivers
report.py   the report's content (rendered by genprobe.analysis.render)
"""

from genprobe.studies.seed_sensitivity.config import KIND, SweepConfig
from genprobe.studies.seed_sensitivity.members import load_members
from genprobe.studies.seed_sensitivity.run import evaluate_external, run_sweep

__all__ = ["KIND", "SweepConfig", "evaluate_external", "load_members", "run_sweep"]
