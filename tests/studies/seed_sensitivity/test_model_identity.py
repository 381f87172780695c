"""Runs made before architectures were plug-ins (their model's options stored as flat settings)
are read as the same configs and resume, their config.json untouched."""

import json

import pytest

from genprobe.errors import DifferentRunError
from genprobe.models.architectures.recurrent import RecurrentConfig
from genprobe.models.architectures.transformer import TransformerSeedConfig
from genprobe.runs.provenance import config_hash
from genprobe.runs.rundir import open_run
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.study import KIND
from genprobe.tasks import load_task
from genprobe.training.trainer import TrainConfig

TRAIN = {
    "batch_size": 64, "loss_normalization": "sequences", "lr": 0.125, "max_epochs": 20,
    "max_grad_norm": 5.0, "min_delta": 0.0, "patience": 2,
}  # fmt: skip
GRAMMAR = {
    "authors_b_quirk": False, "identity_weight": 0.15, "letters": "ABC", "n_symbols": 40,
    "n_variants": 2,
}  # fmt: skip
RECURRENT = {
    "attention": "bilinear", "attention_layer": True, "cell": "lstm", "dropout": 0.1, "emb": 32,
    "hidden": 32, "init_range": 0.1, "input_feeding": False,
}  # fmt: skip
COMMON = {
    "data_seed": 0, "eval_batch_size": 500, "seeds_per_shard": 25, "suite_size": 2000,
    "train_size": 100000, "validation_size": 2000,
}  # fmt: skip
# config.json identities written by genprobe at fb480ad, with their hashes, and the configs
# they are read as now
STORED = {
    "default": (
        "dac1d624c3809b4d",
        {**COMMON, **RECURRENT, "grammar": GRAMMAR, "seeds": [1, 2], "train": TRAIN},
        SweepConfig(seeds=(1, 2)),
    ),
    "scan-lstm": (
        "247a0c591d188231",
        {
            **COMMON,
            **RECURRENT,
            "attention": "none",
            "attention_layer": False,
            "dropout": 0.5,
            "emb": 200,
            "hidden": 200,
            "layers": 2,
            "seeds": list(range(1, 11)),
            "task": {"name": "scan", "options": {"split": "length"}},
            "train": {
                **TRAIN,
                "batch_size": 32,
                "lr": 0.001,
                "max_epochs": 15,
                "optimizer": "adam",
                "patience": 3,
            },
        },
        SweepConfig(
            seeds=tuple(range(1, 11)),
            task=load_task("scan", {"split": "length"}),
            model=RecurrentConfig(
                emb=200, hidden=200, layers=2, dropout=0.5, attention="none", attention_layer=False
            ),
            train=TrainConfig(optimizer="adam", lr=0.001, batch_size=32, patience=3, max_epochs=15),
        ),
    ),
    "transformer": (
        "72e9c81eaab6c845",
        {
            **COMMON,
            **RECURRENT,
            "arch": "transformer",
            "decoder_only": True,
            "emb": 64,
            "ffn": 128,
            "hidden": 64,
            "layers": 2,
            "positions": "rope",
            "seeds": [1, 2, 3],
            "task": {
                "name": "addition",
                "options": {
                    "format": "index_hints",
                    "hint_tokens": 0,
                    "test_lengths": "auto",
                    "train_digits": 10,
                },
            },
            "train": TRAIN,
        },
        SweepConfig(
            seeds=(1, 2, 3),
            task=load_task("addition"),
            model=TransformerSeedConfig(
                width=64, layers=2, heads=4, ffn=128, decoder_only=True, positions="rope"
            ),
        ),
    ),
    "gru-grid": (
        "a9db9e2268372062",
        {
            **COMMON,
            **RECURRENT,
            "cell": "gru",
            "input_feeding": True,
            "grammar": GRAMMAR,
            "init_seeds": [1, 2],
            "order_seeds": [1, 2],
            "seeds": [0, 1, 2, 3],
            "train": TRAIN,
        },
        SweepConfig(
            seeds=(0, 1, 2, 3),
            init_seeds=(1, 2),
            order_seeds=(1, 2),
            model=RecurrentConfig(cell="gru", input_feeding=True),
        ),
    ),
}


@pytest.mark.parametrize("name", STORED)
def test_a_run_with_flat_model_settings_is_read_as_before_and_resumes(name, tmp_path):
    digest, identity, config = STORED[name]
    assert config_hash(identity) == digest
    assert SweepConfig.from_identity(identity) == config
    stored = {"kind": KIND, "hash": digest, "config": identity}
    (tmp_path / "config.json").write_text(json.dumps(stored))
    assert open_run(tmp_path, KIND, config) == tmp_path
    assert json.loads((tmp_path / "config.json").read_text()) == stored


def test_another_model_is_refused_naming_the_option(tmp_path):
    digest, identity, _ = STORED["default"]
    (tmp_path / "config.json").write_text(
        json.dumps({"kind": KIND, "hash": digest, "config": identity})
    )
    other = SweepConfig(seeds=(1, 2), model=RecurrentConfig(hidden=64))
    with pytest.raises(DifferentRunError) as refused:
        open_run(tmp_path, KIND, other)
    assert refused.value.differences == [("model.options.hidden", 32, 64)]
