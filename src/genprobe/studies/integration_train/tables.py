"""A training run's results as a tidy table (`genprobe.studies.tables` reads any run's):

curves  one row per validation (after every epoch, and at a time-budget stop): epoch,
        step, training loss, Fail@1 on the validation problems, seconds
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from genprobe.studies.integration_train.results import read_metrics, read_train_config


def run_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The run's tables by name: curves.

    Raises:
        RunDirError: not a training run, or no validation recorded yet.
    """
    read_train_config(run)  # a run of this study
    return {"curves": read_metrics(run)}
