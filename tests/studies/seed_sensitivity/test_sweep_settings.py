"""What a sweep's config derives from the settings a command gives: its members (seeds from a
first one, or a grid of init × order seeds), the training split whole where no size is given,
a full batch, a learning rate per optimizer; and a command line that asks for them."""

import importlib

import pytest

from genprobe.errors import ConfigError
from genprobe.studies.seed_sensitivity import SweepConfig
from genprobe.tasks.registry import load_task
from genprobe.training.config import TrainConfig

SCAN_LENGTH = load_task("scan", {"split": "length"})  # a finite training split of 16,990
REVERSE = load_task("reverse_string")  # an endless one, 20,000 by default


def test_the_members_are_seeds_from_the_first_or_the_grid_of_init_and_order_seeds():
    config = SweepConfig(seeds=(0,))
    assert config.with_members(3, first_seed=5).seeds == (5, 6, 7)
    grid = config.with_members(3, first_seed=5, init_seeds=2, order_seeds=3)
    assert grid.seeds == tuple(range(6))  # a grid numbers its cells
    assert (grid.init_seeds, grid.order_seeds) == ((5, 6), (5, 6, 7))
    assert SweepConfig.member_count(50, 2, 3) == 6 and SweepConfig.member_count(50) == 50


@pytest.mark.parametrize(
    "counts, message",
    [
        ((0,), "seeds must be >= 1. Got 0"),
        ((5, 2, None), "order_seeds must be given with init_seeds (a grid takes both)"),
        ((5, None, 2), "init_seeds must be given with order_seeds"),
        ((5, 0, 2), "init_seeds must be >= 1. Got 0"),
    ],
)
def test_member_counts_below_one_or_half_a_grid_are_refused(counts, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SweepConfig.member_count(*counts)


def _unexpected(*args, **kwargs):
    raise AssertionError("the task is loaded before the seed counts are checked")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (("--seeds", "0"), "--seeds must be >= 1. Got 0 instead."),
        (("--init-seeds", "0", "--order-seeds", "2"), "--init-seeds must be >= 1. Got 0 instead."),
    ],
)
def test_a_seed_count_below_one_is_refused_before_any_work(
    cli, monkeypatch, tmp_path, given, message
):
    """Before the task is loaded or its data drawn: one line, exit 2, nothing written."""
    # the sweep's modules imported first, so that none binds the stand-in for good
    importlib.import_module("genprobe.studies.seed_sensitivity.grid")
    monkeypatch.setattr("genprobe.tasks.registry.load_task", _unexpected)
    out = tmp_path / "run"
    code, _, err = cli("sweep", "--task", "scan", *given, "--out", str(out))
    assert (code, err) == (2, f"genprobe: error: {message}\n")
    assert not out.exists()


@pytest.mark.parametrize(
    "task, train_size, full_batch, expected",
    [
        (SCAN_LENGTH, None, False, (16_990, 64)),  # the finite split whole
        (SCAN_LENGTH, None, True, (16_990, 16_990)),
        (SCAN_LENGTH, 20_000, True, (20_000, 16_990)),  # a batch holds what the split holds
        (REVERSE, None, True, (20_000, 20_000)),  # an endless split's own size
        (REVERSE, 500, False, (500, 64)),
    ],
)
def test_the_sizes_follow_from_the_task(task, train_size, full_batch, expected):
    config = SweepConfig(seeds=(0,), task=task).with_sizes(train_size, full_batch)
    assert (config.train_size, config.train.batch_size) == expected


@pytest.fixture
def made(monkeypatch):
    """The configs a `sweep` command would run, caught before anything trains."""
    configs = []
    monkeypatch.setattr(
        "genprobe.studies.seed_sensitivity.run_sweep",
        lambda config, out, *args: configs.append(config) or out,
    )
    monkeypatch.setattr("genprobe.cli.sweep.finish", lambda *args: None)
    return configs


def test_the_command_line_gives_its_settings_to_the_configs(cli, made, tmp_path):
    code, _, err = cli(
        "sweep", "--task", "binary_operation", "--arch", "mlp", "--full-batch",
        "--init-seeds", "2", "--order-seeds", "3", "--first-seed", "5", "--optimizer", "adam",
        "--hidden", "16", "--no-report", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 0, err
    (config,) = made
    assert (config.seeds, config.init_seeds, config.order_seeds) == (
        tuple(range(6)), (5, 6), (5, 6, 7),
    )  # fmt: skip
    assert config.train == TrainConfig(batch_size=4_704, optimizer="adam", lr=0.001)
    assert config.train_size == 4_704 and config.model.options()["hidden"] == 16


def test_each_cell_of_a_grid_takes_the_sizes_of_its_own_task(cli, made, tmp_path):
    code, _, err = cli(
        "sweep", "--task", "binary_operation", "--arch", "mlp", "--full-batch", "--seeds", "2",
        "--vary", "task.train_fraction=0.3,0.5", "--no-report", "--out", str(tmp_path / "grid"),
    )  # fmt: skip
    assert code == 0, err
    sizes = [(config.train_size, config.train.batch_size) for config in made]
    assert sizes == [(2_823, 2_823), (4_704, 4_704)]  # 30 % and 50 % of 9,409 equations


OLD_FLAGS = ("--optimizer", "adam", "--lr", "0.01", "--task-option", "train_fraction=0.3",
             "--hidden", "16", "--model-option", "layers=2")  # fmt: skip
ADDRESSED = ("--set", "train.optimizer=adam", "--set", "train.lr=0.01",
             "--set", "task.train_fraction=0.3", "--set", "model.hidden=16",
             "--set", "model.layers=2")  # fmt: skip


@pytest.mark.parametrize("given", [OLD_FLAGS, ADDRESSED, OLD_FLAGS[:4] + ADDRESSED[4:]])
def test_a_setting_named_where_it_lives_is_its_old_flag(cli, made, tmp_path, given):
    """`--set train.lr=0.01` is `--lr 0.01`, `task.NAME` is --task-option, `model.NAME`
    --model-option (or the model flag): the same config, whichever way, mixed too."""
    code, _, err = cli("sweep", "--task", "binary_operation", "--arch", "mlp", "--seeds", "2",
                       *given, "--no-report", "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    (config,) = made
    assert (config.train.optimizer, config.train.lr) == ("adam", 0.01)
    assert config.task.options()["train_fraction"] == 0.3
    assert (config.model.options()["hidden"], config.model.options()["layers"]) == (16, 2)


def test_set_train_optimizer_takes_its_own_learning_rate(cli, made, tmp_path):
    code, _, err = cli("sweep", "--task", "binary_operation", "--arch", "mlp", "--seeds", "2",
                       "--set", "train.optimizer=adamw", "--no-report",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    assert made[0].train == TrainConfig(optimizer="adamw", lr=0.001)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (("--lr", "0.1", "--set", "train.lr=0.5"),
         "training setting lr is given twice: as --lr 0.1 and as --set train.lr=0.5"),
        (("--task-option", "train_fraction=0.5", "--set", "task.train_fraction=0.3"),
         "task option train_fraction is given twice: as --task-option train_fraction=0.5 and "
         "as --set task.train_fraction=0.3"),
        (("--hidden", "8", "--set", "model.hidden=8"),
         "model option hidden is given twice: as --hidden 8 and as --set model.hidden=8"),
        (("--set", "train.lr=1", "--set", "train.lr=2"),
         "--set must be each setting once. Got 'train.lr' instead."),
        (("--set", "lr=1"),
         "--set must be task.NAME=VALUE, train.NAME=… or model.NAME=…. Got 'lr=1' instead."),
        (("--set", "train.lr=0.1", "--vary", "train.lr=0.1,0.2"),
         "--set must be a setting that --vary does not vary. Got 'train.lr' instead."),
        (("--set", "train.lr=fast"), "training setting lr must be a number. Got 'fast' instead."),
    ],
)  # fmt: skip
def test_a_setting_given_both_ways_or_malformed_is_one_line_and_nothing_written(
    cli, made, tmp_path, given, message
):
    out = tmp_path / "run"
    code, _, err = cli("sweep", "--task", "binary_operation", "--arch", "mlp", *given,
                       "--out", str(out))  # fmt: skip
    assert (code, err) == (2, f"genprobe: error: {message}\n")
    assert not out.exists() and not made


@pytest.mark.parametrize("given", [("--symbols", "30"), ("--set", "task.n_symbols=30")])
def test_rewriting_sweeps_grammar_flags_are_its_task_options(cli, made, tmp_path, given):
    code, _, err = cli("rewriting", "sweep", "--seeds", "2", *given, "--no-report",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    assert made[0].task.options()["n_symbols"] == 30
    assert made[0].task.options()["identity_weight"] == 0.15  # the paper's, left out


@pytest.mark.parametrize(
    ("given", "typed"),
    [
        (("--symbols", "30", "--set", "task.n_symbols=20"), "--symbols 30"),
        (("--authors-b-quirk", "--set", "task.authors_b_quirk=false"), "--authors-b-quirk"),
    ],
)
def test_a_grammar_flag_and_its_set_are_refused_naming_the_flag_as_typed(
    cli, made, tmp_path, given, typed
):
    out = tmp_path / "run"
    code, _, err = cli("rewriting", "sweep", *given, "--out", str(out))
    name = given[-1].split("=")[0].removeprefix("task.")
    value = given[-1].split("=")[1]
    assert (code, err) == (
        2,
        f"genprobe: error: task option {name} is given twice: as {typed} and as --set "
        f"task.{name}={value}\n",
    )
    assert not out.exists() and not made
