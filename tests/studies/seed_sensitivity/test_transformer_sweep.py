"""The seed study with the stacked transformer and with an init × order seed grid."""

import json

import pandas as pd
import pytest
import torch

from genprobe.errors import ConfigError
from genprobe.models.architectures.transformer import TransformerSeedConfig
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.members import load_members
from genprobe.tasks import load_task
from genprobe.training.config import MemberSeeds

ADDITION = ["--task", "addition", "--task-option", "train_digits=3"]
ADDITION += ["--task-option", "test_lengths=4-5", "--task-option", "format=reversed"]
SMALL = ["--arch", "transformer", "--hidden", "16", "--heads", "2", "--ffn", "32"]
SMALL += ["--layers", "1", "--max-epochs", "2", "--train-size", "300"]
SMALL += ["--validation-size", "30", "--suite-size", "20", "--optimizer", "adamw"]


@pytest.mark.slow
def test_a_grid_sweep_trains_every_cell_and_splits_the_variance(cli, tmp_path):
    run = tmp_path / "grid"
    args = [*ADDITION, *SMALL, "--decoder-only", "--positions", "alibi"]
    args += ["--random-positions", "40", "--init-seeds", "3", "--order-seeds", "2"]
    code, _, err = cli("sweep", *args, "--out", str(run), "--json")
    assert code == 0, err
    config = json.loads((run / "config.json").read_text())["config"]
    assert config["seeds"] == list(range(6)) and config["init_seeds"] == [1, 2, 3]
    assert config["order_seeds"] == [1, 2] and config["model"]["arch"] == "transformer"
    members = load_members(run)
    assert members.members == 6 and members.config.decoder_only
    predictions = pd.read_parquet(run / "predictions" / "length_5.parquet")
    assert sorted(predictions["seed"].unique()) == list(range(6))
    stats = json.loads((run / "stats.json").read_text())
    assert set(stats["variance"]) == {"test", "length_4", "length_5"}
    assert stats["variance"]["test"]["n_init"] == 3 and stats["variance"]["test"]["n_order"] == 2
    report = (run / "report.md").read_text()
    assert "## Where the variance comes from" in report
    assert "6 members (the grid of 3 initialization seeds × 2 data-order seeds)" in report
    assert "decoder-only transformer with randomized alibi positions" in report


@pytest.mark.slow
def test_a_grid_member_is_the_seed_of_a_plain_sweep_on_the_diagonal(cli, tmp_path):
    # Member (init 2, order 2) of a grid is seed 2 of a plain sweep: same weights.
    grid, plain = tmp_path / "grid", tmp_path / "plain"
    common = [*ADDITION, *SMALL, "--max-epochs", "1"]
    assert (
        cli("sweep", *common, "--init-seeds", "2", "--order-seeds", "2", "--out", str(grid))[0] == 0
    )
    assert cli("sweep", *common, "--seeds", "2", "--out", str(plain))[0] == 0
    cell = load_members(grid).member_state(3)  # init 2, order 2: the last of the 2 × 2 grid
    seed = load_members(plain).member_state(1)  # seed 2
    assert all(torch.equal(cell[name], tensor) for name, tensor in seed.items())
    assert cli("compare", str(grid), str(plain), "--out", str(tmp_path / "cmp"))[0] == 0
    assert (
        "encoder-decoder transformer with sinusoidal positions"
        in (tmp_path / "cmp" / "report.md").read_text()
    )


def test_grid_members_get_their_init_and_order_seeds():
    config = SweepConfig(seeds=(0, 1, 2, 3, 4, 5), init_seeds=(7, 8), order_seeds=(1, 2, 3))
    streams = config.streams()
    # a grid member's subset seed is its number: no two members share a subset
    assert streams[0] == MemberSeeds(7, 1, 0) and streams[5] == MemberSeeds(8, 3, 5)
    assert SweepConfig.from_identity(config.identity()) == config
    plain = SweepConfig(seeds=(4, 5)).streams()
    assert plain == {4: MemberSeeds(4, 4, 4), 5: MemberSeeds(5, 5, 5)}


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"seeds": (0, 1), "init_seeds": (1,), "order_seeds": None}, "order_seeds"),
        ({"seeds": (0, 1, 2), "init_seeds": (1,), "order_seeds": (1, 2)}, "seeds"),
        ({"seeds": (0, 1), "init_seeds": (1, 1), "order_seeds": (1,)}, "init_seeds"),
        ({"seeds": (0,), "model": "transformer"}, "model"),
    ],
)
def test_bad_sweep_settings_name_the_field(settings, field):
    with pytest.raises(ConfigError, match=field):
        SweepConfig(**settings)


def test_a_transformer_run_is_rebuilt_from_its_identity():
    transformer = SweepConfig(
        seeds=(1,), task=load_task("addition"), model=TransformerSeedConfig(width=64, heads=8)
    )
    assert transformer.identity()["model"]["arch"] == "transformer"
    assert transformer.identity()["model"]["options"]["width"] == 64
    assert SweepConfig.from_identity(transformer.identity()) == transformer
