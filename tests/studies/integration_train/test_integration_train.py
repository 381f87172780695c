"""`genprobe integration train`: learns, validates with the verifier, checkpoints, resumes."""

import itertools
import json
import shutil

import pytest
import sympy as sp
import torch
from helpers import damage, small_disk

from genprobe.errors import DamagedFileError, DiskFullError
from genprobe.studies.integration_train import report as study_report
from genprobe.studies.integration_train import run as study_run
from genprobe.studies.integration_train.config import PRESETS, IntegrationTrainConfig
from genprobe.studies.integration_train.run import run_training
from genprobe.tasks.integration import X, from_sympy, problem_prefix, to_prefix
from genprobe.training.seq2seq_transformer import Trainer
from genprobe.under_test.registry import ModelSpec, load_model


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """L&C text format: `count|sub Y' f<TAB>F` for F = c·x^n and c·sin(x) + x."""
    lines = []
    for c in range(1, 6):
        for F in [c * X**n for n in range(2, 6)] + [c * sp.sin(X) + X]:
            f = sp.diff(F, X)
            lines.append(
                f"1|{' '.join(problem_prefix(from_sympy(f)))}\t{' '.join(to_prefix(from_sympy(F)))}"
            )
    path = tmp_path_factory.mktemp("data") / "pairs.train"
    path.write_text("\n".join(lines) + "\n")
    return path


def train(cli, data, out, *extra):
    code, _, err = cli(
        "integration", "train", "--data", str(data), "--out", str(out),
        "--batch-size", "8", "--valid-size", "5", "--warmup", "5", "--lr", "3e-3",
        "--max-len", "40", "--device", "cpu", *extra,
    )  # fmt: skip
    return code, err


def test_training_lowers_the_loss_and_writes_a_usable_checkpoint(cli, data, tmp_path):
    out = tmp_path / "run"
    code, err = train(cli, data, out, "--epochs", "4", "--epoch-size", "64")
    assert code == 0, err
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in metrics] == [0, 1, 2, 3]
    assert metrics[-1]["train_loss"] < metrics[0]["train_loss"]
    assert all(0.0 <= m["valid_fail@1"] <= 1.0 and m["valid_size"] == 5 for m in metrics)
    model = load_model(f"ckpt:{out}")
    assert len(model.candidates([from_sympy(2 * X)], k=2)[0]) == 2


# the run `train(cli, data, out, *ONE_EPOCH)` asks for, trained without the verifier
ONE_EPOCH = ("--epochs", "1", "--epoch-size", "8")


def train_one_epoch(data, out):
    config = IntegrationTrainConfig.from_preset(
        None, str(data), batch_size=8, valid_size=5, warmup=5, lr=3e-3, max_len=40,
        device="cpu", epochs=1, epoch_size=8,
    )  # fmt: skip
    return run_training(config, out, validate=lambda network, problems: {"valid_fail@1": 0.5})


@pytest.fixture(scope="module")
def finished(data, tmp_path_factory):
    """A finished run of one epoch, its path; tests change copies of it."""
    return train_one_epoch(data, tmp_path_factory.mktemp("finished") / "run")


@pytest.fixture
def run(finished, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    return copy


def test_a_finished_runs_rerun_reads_no_data_trains_nothing_and_writes_no_file(
    cli, data, run, monkeypatch
):
    out = run

    def computes(*args, **kwargs):
        raise AssertionError("a finished run computed again")

    monkeypatch.setattr(study_run, "read_training_data", computes)
    monkeypatch.setattr(Trainer, "run", computes)
    assert train(cli, data, out, *ONE_EPOCH)[0] == 0  # the report
    files = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    monkeypatch.setattr(study_report, "write_train_report", computes)  # it is the run's
    code, err = train(cli, data, out, *ONE_EPOCH)
    assert code == 0, err
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == files


KEPT = ("model.pt", "metrics.jsonl", "shards/checkpoint/last.json")


def evaluate(cli, data, run, tmp_path):
    return cli(
        "integration", "evaluate", "--model", f"ckpt:{run / 'model.pt'}", "--data", str(data),
        "--n", "1", "--k", "1", "--beam", "1", "--max-len", "40", "--out", str(tmp_path / "e"),
    )  # fmt: skip


@pytest.mark.parametrize("how", ["flipped", "truncated", "missing"])
@pytest.mark.parametrize("damaged", KEPT)
def test_a_damaged_model_or_metrics_is_named_and_the_rerun_keeps_them_again(
    cli, data, finished, run, tmp_path, damaged, how
):
    """model.pt and metrics.jsonl are the run's checkpoint shard: damaged, or with their record
    gone, they are named by what reads them (report, `evaluate --model ckpt:RUN/model.pt`),
    never used; the rerun keeps them again from state.pt, training nothing."""
    damage(run / damaged, how)
    commands = {"report": lambda: cli("report", str(run)),
                "evaluate": lambda: evaluate(cli, data, run, tmp_path)}  # fmt: skip
    readers = {"metrics.jsonl": ["report"], "model.pt": ["evaluate"]}.get(damaged, commands)
    for reader in readers:
        code, _, err = commands[reader]()
        # `ckpt:RUN/model.pt` with no such file is refused as a path that does not exist
        assert code == 2 and len(err.splitlines()) == 1 and str(run / damaged) in err, err
    if damaged != "metrics.jsonl":
        with pytest.raises(DamagedFileError) as named:
            load_model(f"ckpt:{run}")
        assert named.value.path == run / damaged
    code, err = train(cli, data, run, *ONE_EPOCH)
    assert code == 0, err
    for path in KEPT:
        assert (run / path).read_bytes() == (finished / path).read_bytes(), path
    assert cli("report", str(run))[0] == 0 and evaluate(cli, data, run, tmp_path)[0] == 0


def test_a_checkpoint_outside_a_run_or_of_a_run_made_before_records_loads_as_it_is(
    finished, run, tmp_path
):
    alone = tmp_path / "alone" / "model.pt"
    alone.parent.mkdir()
    shutil.copy(finished / "model.pt", alone)
    load_model(f"ckpt:{alone}")
    shutil.rmtree(run / "shards")  # and config.json without a checksum: made before records
    config = json.loads((run / "config.json").read_text())
    del config["checksum"]
    (run / "config.json").write_text(json.dumps(config))
    load_model(f"ckpt:{run}")


def test_a_full_disk_at_a_save_is_disk_full_and_the_rerun_with_space_is_the_same(
    data, finished, tmp_path
):
    """torch.save reports a full disk as a RuntimeError; a checkpoint is written in one write
    of its bytes, whose error is the one-line DiskFullError, and nothing half-written stays."""
    with small_disk(tmp_path / "disk", "256k") as (disk, resize):
        out = disk / "run"
        with pytest.raises(DiskFullError, match=f"no space left to write {out / 'model.pt'}"):
            train_one_epoch(data, out)
        assert sorted(p.name for p in out.iterdir()) == ["config.json", "run.lock"]
        resize("64m")
        train_one_epoch(data, out)
        assert (out / "model.pt").read_bytes() == (finished / "model.pt").read_bytes()
        untimed = [{k: v for k, v in m.items() if "seconds" not in k and k != "elapsed"}
                   for m in (*metrics_of(out), *metrics_of(finished))]  # fmt: skip
        assert untimed[0] == untimed[1] and len(untimed) == 2


def test_the_same_run_twice_writes_the_same_model_pt_bytes(cli, data, tmp_path):
    """Not only equal tensors: equal files, so that two runs compare by their sha256 (state.pt
    holds the times training took, so it differs by those)."""
    runs = tmp_path / "one", tmp_path / "two"
    for out in runs:
        assert train(cli, data, out, "--epochs", "1", "--epoch-size", "8")[0] == 0
    assert (runs[0] / "model.pt").read_bytes() == (runs[1] / "model.pt").read_bytes()


def weights(out):
    return load_model(f"ckpt:{out}").network.state_dict()


def metrics_of(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def whole_and_resumed(cli, data, tmp_path, *extra):
    """The same 2-epoch run, once uninterrupted and once stopped after one step and resumed."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    common = ("--epochs", "2", "--epoch-size", "32", *extra)
    assert train(cli, data, whole, *common)[0] == 0
    assert train(cli, data, parts, *common, "--max-minutes", "0")[0] == 0
    first = metrics_of(parts)
    assert len(first) == 1 and first[0]["step"] == 1  # one step, validated and saved
    assert first[0]["partial"] == 0.25
    assert train(cli, data, parts, *common)[0] == 0
    return whole, parts


def assert_same_weights(a, b):
    expected, got = weights(a), weights(b)
    assert all(torch.equal(expected[name], got[name]) for name in expected)


def test_an_interrupted_run_resumes_where_it_stopped_and_ends_with_the_same_weights(
    cli, data, tmp_path
):
    whole, parts = whole_and_resumed(cli, data, tmp_path)
    summary = [(m["epoch"], m["step"], "partial" in m) for m in metrics_of(parts)]
    assert summary == [(0, 4, False), (1, 8, False)]
    assert_same_weights(whole, parts)
    code, err = train(cli, data, parts, "--epochs", "3", "--epoch-size", "32")
    assert code == 2 and "different run" in err


def test_a_rerun_resumes_from_state_pt_alone(cli, data, tmp_path):
    """model.pt and metrics.jsonl are written before state.pt: a run killed between them has
    newer ones, which the rerun replaces."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    common = ("--epochs", "2", "--epoch-size", "32")
    assert train(cli, data, whole, *common)[0] == 0
    assert train(cli, data, parts, *common, "--max-minutes", "0")[0] == 0  # saved at step 1
    for name in ("model.pt", "metrics.jsonl"):  # as if a later save was killed before state.pt
        (parts / name).write_bytes((whole / name).read_bytes())
    assert train(cli, data, parts, *common)[0] == 0
    assert_same_weights(whole, parts)
    assert [(m["epoch"], m["step"]) for m in metrics_of(parts)] == [(0, 4), (1, 8)]


def test_a_state_pt_saved_without_weights_and_metrics_still_resumes(cli, data, tmp_path):
    """Runs made before state.pt held them resume from model.pt and metrics.jsonl."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    common = ("--epochs", "2", "--epoch-size", "32")
    assert train(cli, data, whole, *common)[0] == 0
    assert train(cli, data, parts, *common, "--max-minutes", "0")[0] == 0
    state = torch.load(parts / "state.pt", weights_only=True)
    del state["network"], state["history"]
    torch.save(state, parts / "state.pt")
    assert train(cli, data, parts, *common)[0] == 0
    assert_same_weights(whole, parts)
    assert [(m["epoch"], m["step"]) for m in metrics_of(parts)] == [(0, 4), (1, 8)]


@pytest.mark.slow
def test_a_damaged_state_pt_is_named_and_training_starts_again(cli, data, tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    common = ("--epochs", "2", "--epoch-size", "32")
    assert train(cli, data, whole, *common)[0] == 0
    assert train(cli, data, parts, *common, "--max-minutes", "0")[0] == 0
    state = parts / "state.pt"
    state.write_bytes(state.read_bytes()[:1000])  # a copy cut short
    code, err = train(cli, data, parts, *common)
    assert code == 0
    assert [line for line in err.splitlines() if "warning" in line] == [
        f"genprobe: warning: {state} is damaged (not a whole torch file: File is not a zip "
        "file): set aside as state.pt.damaged; training starts again from the first step (its "
        "next save replaces model.pt)"
    ]
    assert (parts / "state.pt.damaged").stat().st_size == 1000
    assert_same_weights(whole, parts)
    assert [(m["epoch"], m["step"]) for m in metrics_of(parts)] == [(0, 4), (1, 8)]


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_mixed_precision_trains_and_resumes_exactly(cli, data, tmp_path, precision):
    """The autocast path GPUs take (bf16, or fp16 with a gradient scaler), run on the CPU."""
    whole, parts = whole_and_resumed(cli, data, tmp_path, "--precision", precision)
    assert_same_weights(whole, parts)
    losses = [m["train_loss"] for m in metrics_of(whole)]
    assert all(0 < loss < 10 for loss in losses) and losses[1] < losses[0]
    scaler = torch.load(parts / "state.pt", weights_only=True)["scaler"]
    assert bool(scaler) == (precision == "fp16")  # only fp16 scales the loss
    fp32 = weights(whole)  # and autocast really ran: fp32 weights differ
    assert train(cli, data, tmp_path / "fp32", "--epochs", "2", "--epoch-size", "32")[0] == 0
    assert any(not torch.equal(fp32[n], w) for n, w in weights(tmp_path / "fp32").items())


def test_an_unknown_precision_is_a_one_line_error(cli, data, tmp_path):
    code, err = train(cli, data, tmp_path / "run", "--precision", "fp8")
    assert code == 2 and "precision" in err and "Traceback" not in err


def test_too_few_pairs_for_the_validation_size_is_one_line_and_exit_2(cli, data, tmp_path):
    pairs = len(data.read_text().splitlines())
    code, err = train(cli, data, tmp_path / "run", "--valid-size", str(pairs))
    assert code == 2 and err.count("\n") == 1, err
    assert f"genprobe: error: {data}: {pairs} training pairs" in err and "--valid-size" in err
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


def test_the_valid_file_beside_the_train_file_validates_and_the_run_is_reported(
    cli, data, tmp_path
):
    folder = tmp_path / "data"
    folder.mkdir()
    lines = data.read_text().splitlines()
    (folder / "pairs.train").write_text("\n".join(lines[3:]) + "\n")
    (folder / "pairs.valid").write_text("\n".join(lines[:3]) + "\n")
    out = tmp_path / "run"
    code, err = train(cli, folder / "pairs.train", out, "--epochs", "1", "--epoch-size", "8")
    assert code == 0, err
    [metrics] = metrics_of(out)
    assert metrics["valid_size"] == 3 and metrics["valid_from"] == str(folder / "pairs.valid")
    assert "] loss " in err  # off a terminal, progress comes as plain lines
    page = (out / "report.html").read_text()
    assert "Validations" in page and "pairs.valid" in page and "<img" in page
    (out / "report.html").unlink()
    code, _, err = cli("report", str(out))
    assert code == 0 and (out / "report.html").read_text() == page, err


def test_the_cosine_schedule_warms_up_then_decays_to_zero_and_constant_stays():
    config = IntegrationTrainConfig(data="d", lr=1e-3, warmup=10, schedule="cosine")
    rates = [config.learning_rate(step, 110) for step in range(111)]
    assert rates[0] == pytest.approx(1e-4) and rates[9] == pytest.approx(1e-3)
    assert rates[10] == pytest.approx(1e-3) and rates[60] == pytest.approx(5e-4)
    assert all(a >= b for a, b in itertools.pairwise(rates[9:]))
    assert rates[110] == pytest.approx(0.0, abs=1e-12)
    constant = IntegrationTrainConfig(data="d", lr=1e-3, warmup=10)
    assert [constant.learning_rate(step, 110) for step in (9, 60, 110)] == [1e-3] * 3


def test_a_preset_gives_its_settings_and_an_option_given_beside_it_wins():
    config = IntegrationTrainConfig.from_preset("cpu", "d", epochs=3, lr=None)
    assert config.epochs == 3 and config.schedule == PRESETS["cpu"]["schedule"]
    assert config.lr == PRESETS["cpu"]["lr"]
    assert IntegrationTrainConfig.from_preset(None, "d", lr=None) == IntegrationTrainConfig("d")
    # the schedule joined the identity later: at its default, an older run's hash holds
    assert "schedule" not in IntegrationTrainConfig("d").identity()
    assert IntegrationTrainConfig("d", schedule="cosine").identity()["schedule"] == "cosine"


def test_an_option_given_beside_a_preset_wins_even_at_its_default(cli, data, tmp_path, monkeypatch):
    class Caught(Exception):
        pass

    def caught(config, *_):
        raise Caught(config)

    monkeypatch.setattr(study_run, "run_training", caught)
    with pytest.raises(Caught) as trained:
        cli("integration", "train", "--data", str(data), "--out", str(tmp_path / "r"),
            "--preset", "cpu", "--epochs", "10", "--weight-decay", "0.1")  # fmt: skip
    config = trained.value.args[0]
    assert (config.epochs, config.lr, config.weight_decay) == (10, PRESETS["cpu"]["lr"], 0.1)


@pytest.mark.parametrize(
    "option, value",
    [("--dropout", "1"), ("--clip", "0"), ("--weight-decay", "-1"), ("--verify-deadline", "0"),
     ("--epoch-size", "0"), ("--warmup", "-1"), ("--lr", "inf")],
)  # fmt: skip
def test_a_setting_out_of_range_is_one_line_and_writes_nothing(cli, data, tmp_path, option, value):
    code, err = train(cli, data, tmp_path / "run", option, value)
    assert code == 2 and err.count("\n") == 1 and option in err, err
    assert not (tmp_path / "run").exists()


def test_every_preset_is_a_valid_config_of_a_known_size():
    gpu = IntegrationTrainConfig.from_preset("gpu", "d").validated()
    assert gpu.model_config().dim == 512 and gpu.batch_size == 512  # docs/results/integration_gpu
    for name in PRESETS:
        IntegrationTrainConfig.from_preset(name, "d").validated()


def test_progress_is_reported_every_few_steps_and_at_each_epochs_end(data, tmp_path):
    config = IntegrationTrainConfig(str(data), epochs=2, epoch_size=200, batch_size=8, valid_size=5)
    reported = []
    run_training(
        config,
        tmp_path / "run",
        on_step=lambda done, total, loss: reported.append((done, total, loss)),
        validate=lambda network, problems: {"valid_fail@1": 1.0},
    )
    steps = [done for done, _, _ in reported]
    assert steps == [1, 21, 25] * 2  # 25 steps per epoch, every REPORT_EVERY = 20th and the last
    assert all(isinstance(loss, float) and loss > 0 for _, _, loss in reported)


def test_a_cosine_run_resumes_to_the_same_weights_and_an_unknown_preset_is_one_line(
    cli, data, tmp_path
):
    whole, parts = whole_and_resumed(cli, data, tmp_path, "--schedule", "cosine")
    assert_same_weights(whole, parts)
    code, err = train(cli, data, tmp_path / "run", "--preset", "gpu-huge")
    assert code == 2 and err.count("\n") == 1 and "--preset" in err


def test_init_starts_from_the_models_weights_and_names_them_in_the_runs_identity(
    cli, data, tmp_path
):
    tuned, fresh = tmp_path / "tuned", tmp_path / "fresh"
    one_tiny_step = ("--lr", "1e-9", "--epochs", "1", "--max-minutes", "0")
    assert train(cli, data, tuned, "--init", "bundled:integration-cpu", *one_tiny_step)[0] == 0
    assert train(cli, data, fresh, *one_tiny_step)[0] == 0
    shipped = load_model("bundled:integration-cpu").network.state_dict()
    assert all(torch.allclose(w, shipped[n], atol=1e-6) for n, w in weights(tuned).items())
    assert not all(torch.allclose(w, shipped[n], atol=1e-2) for n, w in weights(fresh).items())
    identity = json.loads((tuned / "config.json").read_text())["config"]
    assert identity["init"] == "bundled:integration-cpu"
    assert identity["init_sha256"] == ModelSpec.read("bundled:integration-cpu").fingerprint()
    assert "init" not in json.loads((fresh / "config.json").read_text())["config"]


def test_validated_is_the_config_itself_and_resolved_names_the_starting_weights():
    """As every `RunConfig`'s `validated`; the digest of `--init` is filled where the run is
    opened (`resolved`)."""
    config = IntegrationTrainConfig("d", init="bundled:integration-cpu")
    assert config.validated() is config and config.init_sha256 is None
    digest = ModelSpec.read("bundled:integration-cpu").fingerprint()
    assert config.resolved().init_sha256 == digest
    assert IntegrationTrainConfig("d").resolved() == IntegrationTrainConfig("d")


def test_a_fine_tuning_run_resumes_from_its_own_state_not_the_starting_weights(cli, data, tmp_path):
    whole, parts = whole_and_resumed(cli, data, tmp_path, "--init", "bundled:integration-cpu")
    assert_same_weights(whole, parts)


@pytest.mark.parametrize(
    ("init", "said"),
    [
        ("ckpt:no/such/run", "--init must be ckpt:PATH, bundled:NAME or lc:PATH naming a "
         "checkpoint that exists. Got 'ckpt:no/such/run' instead."),
        ("sympy", "--init must be ckpt:PATH, bundled:NAME or lc:PATH"),
        ("bundled:integration-cpu --size medium", "--init must be a checkpoint of the --size "
         "medium model. Got 'bundled:integration-cpu (dim 128, 2+2 layers, 4 heads)' instead."),
    ],
)  # fmt: skip
def test_a_starting_model_that_is_missing_or_of_another_size_is_one_line(
    cli, data, tmp_path, init, said
):
    spec, *more = init.split()
    code, err = train(cli, data, tmp_path / "run", "--init", spec, *more)
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not (tmp_path / "run").exists()
