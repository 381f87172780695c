"""An `integration train` run, end to end: the config checked and the data read (an error in
either writes nothing), the run directory opened (`config.json`; another config in it is
refused), then the trainer (`genprobe.training.seq2seq_transformer`), which resumes from the
run's `state.pt`, with the study's validation. `report.write_train_report` reads the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from genprobe.runs.rundir import open_run
from genprobe.studies.integration_train.config import IntegrationTrainConfig
from genprobe.studies.integration_train.study import INTEGRATION_TRAIN
from genprobe.studies.integration_train.validation import greedy_fail_at_1
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.training.seq2seq_transformer import Trainer, Validate, read_training_data


def run_training(
    config: IntegrationTrainConfig,
    out: str | Path,
    on_step: Callable[[int, int, float], None] | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
    time_budget: float | None = None,
    validate: Validate | None = None,
) -> Path:
    """Train (or resume) in `out`; returns the run directory. `validate` replaces the greedy
    Fail@1 (`validation.greedy_fail_at_1`); the rest as `Trainer.run`.

    Raises:
        ConfigError: a setting out of range.
        DataFormatError: data the trainer cannot read (file and line where there is one).
        RunDirError: `out` holds another run.
    """
    config = config.validated()
    data = read_training_data(config.data, config.max_len, config.valid_size)
    run = open_run(out, INTEGRATION_TRAIN.kind, config)
    with contextlib.ExitStack() as stack:
        if validate is None:
            verifier = stack.enter_context(
                Verifier(VerifierConfig(deadline=config.verify_deadline))
            )
            validate = greedy_fail_at_1(verifier, config.max_len)
        Trainer(config, run, data).run(validate, on_step, on_epoch, time_budget)
    return run
