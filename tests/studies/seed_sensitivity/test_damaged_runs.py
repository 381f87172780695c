"""A sweep's run directory with a damaged file: the file is named in one line with how to get
it back; a rerun computes again what it lost and keeps the rest; nothing damaged is read; a
member holding objects other than tensors is refused in one line, never unpickled."""

import shutil

import pytest
from helpers import damage, rerecord, save_refused

from genprobe.errors import DamagedFileError
from genprobe.studies.seed_sensitivity.members import member_path
from genprobe.studies.seed_sensitivity.results import read_metrics
from genprobe.training.trainer import SweepTrainer

SWEEP = (
    "sweep", "--task", "reverse_string", "--seeds", "2", "--seeds-per-shard", "1",
    "--train-size", "40", "--validation-size", "10", "--suite-size", "10", "--max-epochs", "2",
    "--workers", "1", "--no-report",
)  # fmt: skip
AGAIN = "rerun the command that made it (same run directory) to compute shard"


def sweep(cli, run):
    return cli(*SWEEP, "--out", str(run))


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished tiny sweep, its path; tests damage copies of it."""
    from genprobe.cli import main

    run = tmp_path_factory.mktemp("finished") / "run"
    main([*SWEEP, "--out", str(run)])  # returns: exit code 0
    return run


@pytest.fixture
def run(finished, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    return copy


class Killed(Exception):
    pass


@pytest.mark.slow
def test_a_damaged_resume_state_is_named_and_its_stack_trains_again_from_the_start(
    cli, finished, tmp_path, monkeypatch
):
    save = SweepTrainer._save

    def killed_after_saving_seed_2(trainer):
        save(trainer)
        if 2 in trainer.results:
            raise Killed

    run = tmp_path / "run"
    monkeypatch.setattr(SweepTrainer, "_save", killed_after_saving_seed_2)
    with pytest.raises(Killed):
        sweep(cli, run)  # seed 1 trained, seed 2 saved after its first epoch, then killed
    monkeypatch.undo()
    state = run / "scratch" / "train" / "seeds=2-2" / "state.pt"
    damage(state, "truncated")
    kept = (run / member_path(1)).stat().st_mtime_ns

    code, _, err = cli(*SWEEP, "--workers", "2", "--out", str(run))  # said by the driver
    assert code == 0
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert warnings == [
        f"genprobe: warning: {state} is damaged (not a whole torch file: File is not a zip "
        "file): set aside as state.pt.damaged; shard train/seeds=2-2 starts again from the "
        "beginning"
    ]
    assert not (run / "scratch").exists()  # the damaged state went with its shard's scratch
    assert (run / member_path(1)).stat().st_mtime_ns == kept  # seed 1 is not trained again
    for seed in (1, 2):  # and seed 2 ends as if nothing had happened
        path = member_path(seed)
        assert (run / path).read_bytes() == (finished / path).read_bytes()


@pytest.mark.slow
def test_a_damaged_member_is_refused_by_evaluate_and_trained_again_by_a_rerun(cli, run):
    member = run / member_path(1)
    good = member.read_bytes()
    damage(member, "flipped")
    code, _, err = evaluate(cli, run)
    assert code == 2
    assert err == (
        f"genprobe: error: {member} is damaged (its sha256 differs from the one "
        f"shards/train/seeds=1-1.json records); {AGAIN} train/seeds=1-1 again\n"
    )
    code, _, err = sweep(cli, run)
    assert code == 0, err
    assert f"genprobe: warning: {member} is damaged" in err
    assert member.read_bytes() == good
    assert evaluate(cli, run)[0] == 0


@pytest.mark.slow
def test_a_member_holding_other_objects_is_refused_by_evaluate_in_one_line(cli, run):
    member = run / member_path(1)
    save_refused(member, state={})
    rerecord(run, member)  # as its shard's own bytes: no sha256 stops it before it is loaded
    code, _, err = evaluate(cli, run)
    assert code == 2
    assert err == (
        f"genprobe: error: {member}: not a checkpoint genprobe can load (a torch.save file of "
        "tensors and plain data)\n"
    )  # not torch's traceback, which advises weights_only=False


def evaluate(cli, run):
    return cli("evaluate", str(run), "--input", str(run / "data" / "test.jsonl"), "--name",
               "again", "--no-report")  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("how", ["missing", "truncated", "flipped"])
def test_report_names_a_missing_or_damaged_predictions_file_and_exits_2(cli, run, how):
    predictions = run / "predictions" / "test.parquet"
    good = predictions.read_bytes()
    damage(predictions, how)
    code, _, err = cli("report", str(run))
    problem = "is missing" if how == "missing" else "is damaged"
    assert code == 2
    assert err.startswith(f"genprobe: error: {predictions} {problem}")
    assert err.endswith(f"; {AGAIN} predict/test again\n") and err.count("\n") == 1
    assert not (run / "report.html").exists()
    assert sweep(cli, run)[0] == 0  # the sweep computes that suite again, and nothing else
    assert predictions.read_bytes() == good
    assert cli("report", str(run))[0] == 0


OVER_TIME = (
    "sweep", "--task", "binary_operation", "--task-option", "p=11", "--arch", "mlp",
    "--model-option", "hidden=16", "--model-option", "emb=8", "--steps", "20", "--full-batch",
    "--seeds", "1", "--workers", "1", "--no-report",
)  # fmt: skip


@pytest.fixture(scope="module")
def over_time(tmp_path_factory):
    """A finished tiny sweep over training time (its one shard writes a member, a training
    summary and curves), its path; tests damage copies of it."""
    from genprobe.cli import main

    run = tmp_path_factory.mktemp("over_time") / "run"
    main([*OVER_TIME, "--out", str(run)])  # returns: exit code 0
    return run


@pytest.mark.parametrize(
    "damaged", [member_path(1), "training/seeds=1-1.json", "curves/seeds=1-1.parquet"]
)
def test_a_rerun_names_a_damaged_training_file_once_and_each_rerun_names_it_again(
    cli, over_time, tmp_path, damaged
):
    run = tmp_path / "run"
    shutil.copytree(over_time, run)
    file = run / damaged
    for _ in range(2):  # the same damage in a second command of this process is named again
        damage(file, "flipped")
        code, _, err = cli(*OVER_TIME, "--out", str(run))
        assert code == 0, err
        assert err.count(f"genprobe: warning: {file} is damaged") == 1, err
        assert err.count("warning") == 1, err  # and nothing else is
        assert file.read_bytes() == (over_time / damaged).read_bytes()


@pytest.mark.parametrize(
    "edit, problem",
    [
        (('"max_epochs": 2', '"max_epochs": 3'), "its config does not give the hash"),
        (('"torch": "', '"torch": "9'), "its checksum differs from its contents"),
    ],
)
def test_an_edited_config_that_still_parses_is_damage_for_report_and_rerun(cli, run, edit, problem):
    """A setting or a recorded fact changed in config.json is never printed or kept."""
    config = run / "config.json"
    assert edit[0] in config.read_text()
    config.write_text(config.read_text().replace(*edit, 1))
    edited, before = config.read_bytes(), sorted(p for p in run.rglob("*") if p.is_file())
    for command in (("report", str(run)), (*SWEEP, "--out", str(run))):
        code, _, err = cli(*command)
        assert code == 2 and err.startswith(f"genprobe: error: {config} is damaged ({problem}")
        assert len(err.splitlines()) == 1, err
    assert config.read_bytes() == edited
    assert sorted(p for p in run.rglob("*") if p.is_file()) == before


@pytest.mark.parametrize("manifest", ["shards/train/seeds=1-1.json", "shards/predict/test.json"])
def test_a_deleted_manifest_is_named_by_report_and_export_and_the_rerun_makes_it_again(
    cli, run, finished, tmp_path, manifest
):
    (run / manifest).unlink()
    stage, key = manifest.removeprefix("shards/").removesuffix(".json").split("/")
    named = f"genprobe: error: {run / manifest} is missing; {AGAIN} {stage}/{key} again\n"
    for command in (("report", str(run)), ("export", str(run), "--out", str(tmp_path / "x"))):
        assert cli(*command)[::2] == (2, named)
    if stage == "train":  # evaluate, which writes the run, reads its members: not a member
        assert evaluate(cli, run)[::2] == (2, named)  # named missing beside it, nor trained
    code, _, err = sweep(cli, run)
    assert code == 0, err
    assert (run / manifest).is_file()
    assert (run / member_path(1)).read_bytes() == (finished / member_path(1)).read_bytes()
    assert cli("report", str(run))[0] == 0


@pytest.mark.parametrize("how", ["flipped", "truncated", "missing"])
@pytest.mark.parametrize("damaged", ["data/roles.json", "shards/data/roles.json"])
def test_damaged_data_is_named_by_report_and_the_rerun_makes_it_again(
    cli, run, finished, damaged, how
):
    """The examples each role holds, and what they are (which a report prints), are the data
    shard's: damaged or with its record gone, they are named, never read; the rerun remakes them."""
    damage(run / damaged, how)
    code, _, err = cli("report", str(run))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("genprobe: error: ") and "data/roles.json" in err, err
    code, _, err = sweep(cli, run)
    assert code == 0, err
    for path in ("data/roles.json", "data/train.jsonl", "shards/data/roles.json"):
        assert (run / path).read_bytes() == (finished / path).read_bytes(), path
    assert cli("report", str(run))[0] == 0


@pytest.mark.parametrize("how", ["flipped", "truncated", "missing"])
def test_a_damaged_curve_is_named_by_report_and_export(cli, over_time, tmp_path, how):
    run = tmp_path / "run"
    shutil.copytree(over_time, run)
    curve = run / "curves" / "seeds=1-1.parquet"
    damage(curve, how)
    for command in (("report", str(run)), ("export", str(run), "--out", str(tmp_path / "x"))):
        code, _, err = cli(*command)
        assert code == 2 and err.startswith(f"genprobe: error: {curve} "), err
        assert len(err.splitlines()) == 1 and AGAIN in err, err


@pytest.mark.parametrize("how", ["flipped", "truncated", "missing"])
@pytest.mark.parametrize("damaged", ["metrics.json", "shards/metrics/all.json"])
def test_damaged_metrics_are_named_when_read_and_the_rerun_makes_them_again(
    cli, run, finished, damaged, how
):
    """metrics.json (what a sweep's summary lists its suites from) is the metrics shard:
    damaged, or with its record gone, it is named, never read; the rerun makes it again."""
    damage(run / damaged, how)
    with pytest.raises(DamagedFileError) as named:
        read_metrics(run)
    assert named.value.path == run / damaged
    code, _, err = sweep(cli, run)
    assert code == 0, err
    for path in ("metrics.json", "shards/metrics/all.json"):
        assert (run / path).read_bytes() == (finished / path).read_bytes(), path
    assert read_metrics(run) == read_metrics(finished)


def test_evaluate_decodes_again_a_suite_whose_record_is_gone_rather_than_leaving_it_out(cli, run):
    (run / "shards" / "predict" / "test.json").unlink()
    code, _, err = evaluate(cli, run)
    assert code == 0, err
    assert (run / "shards" / "predict" / "test.json").is_file()
    assert {"test", "again"} <= set(read_metrics(run)["suites"])
