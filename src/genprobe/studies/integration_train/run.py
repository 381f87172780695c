"""An `integration train` run, end to end: the config checked, the data and the starting
weights (`--init`) read (an error in any writes nothing), the run directory opened
(`config.json`; another config in it is refused), then the trainer
(`genprobe.training.seq2seq_transformer`), which resumes from the run's `state.pt`, with the
study's validation. A finished run (its `state.pt` past the last epoch) is only opened: its
rerun reads no data and builds no network. `report.write_train_report` reads the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from genprobe.errors import ConfigError
from genprobe.models.checkpoints import load_transformer
from genprobe.runs.driver import writes_runs
from genprobe.runs.rundir import CONFIG_FILE, open_run
from genprobe.studies.integration_train.config import IntegrationTrainConfig
from genprobe.studies.integration_train.study import INTEGRATION_TRAIN
from genprobe.studies.integration_train.validation import greedy_fail_at_1
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig
from genprobe.training.seq2seq_transformer import (
    Trainer,
    Validate,
    read_training_data,
    trained,
)


@writes_runs
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
    config = config.validated().resolved()
    if (Path(out) / CONFIG_FILE).is_file():  # a run there: this config's (else refused)...
        run = open_run(out, INTEGRATION_TRAIN.kind, config)
        if trained(run, config.epochs):  # ...and finished: nothing to read or train
            return run
    data = read_training_data(config.data, config.max_len, config.valid_size)
    start = None if config.init is None else starting_weights(config)
    run = open_run(out, INTEGRATION_TRAIN.kind, config)
    with contextlib.ExitStack() as stack:
        if validate is None:
            verifier = stack.enter_context(
                Verifier(VerifierConfig(deadline=config.verify_deadline))
            )
            validate = greedy_fail_at_1(verifier, config.max_len)
        Trainer(config, run, data, start).run(validate, on_step, on_epoch, time_budget)
    return run


def starting_weights(config: IntegrationTrainConfig) -> dict[str, torch.Tensor]:
    """The weights of the checkpoint `config.init` (validated), which must be a model of the
    config's size.

    Raises:
        CheckpointError: the file is not a checkpoint genprobe reads.
        ConfigError: the checkpoint is a model of another size.
    """
    network, _ = load_transformer(config.init_file())
    wanted = config.model_config()
    if replace(network.config, dropout=wanted.dropout) != wanted:
        got = network.config
        shape = f"dim {got.dim}, {got.n_enc_layers}+{got.n_dec_layers} layers, {got.n_heads} heads"
        expected = f"a checkpoint of the --size {config.size} model"
        raise ConfigError("--init", expected, f"{config.init} ({shape})")
    return network.state_dict()
