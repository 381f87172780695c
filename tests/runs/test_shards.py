"""The spine: shards recorded atomically with manifests, skipped when done, resumed after a
crash, refused outside the run; worker processes give the files one process gives."""

import hashlib
import json
import re

import pytest
from helpers import damage, write_run_config
from shard_stages import (
    BrokenSetup,
    HalfThenWhole,
    Interrupted,
    RefusedSetup,
    Squares,
    Unavailable,
    Writes,
)  # fmt: skip

from genprobe.errors import ConfigError, DamagedFileError, GenprobeWarning, RunDirError
from genprobe.runs import atomic
from genprobe.runs.driver import writes_runs
from genprobe.runs.executor import LocalExecutor, run_stage
from genprobe.runs.provenance import config_hash
from genprobe.runs.rundir import lock_run
from genprobe.runs.sealed import seal
from genprobe.runs.shards import Shard, ShardStore


def squares(n: int = 5) -> list[Shard]:
    return [Shard("square", f"{i:02d}", {"n": i}) for i in range(n)]


def files(run) -> dict[str, bytes]:
    """Every file of a run but the manifests (which record hosts and seconds)."""
    return {
        p.relative_to(run).as_posix(): p.read_bytes()
        for p in sorted(run.rglob("*"))
        if p.is_file() and "shards" not in p.relative_to(run).parts
    }


def test_a_stage_records_files_and_manifests_then_skips_what_is_done(tmp_path):
    ran = []
    assert run_stage(tmp_path, Squares(), squares(), on_done=ran.append) == 5
    assert [s.key for s in ran] == ["00", "01", "02", "03", "04"]
    assert json.loads((tmp_path / "squares" / "03.json").read_text()) == {"n": 3, "square": 9}

    manifest = json.loads((tmp_path / "shards" / "square" / "03.json").read_text())
    assert manifest["shard"] == "square/03" and manifest["device"] == "abacus"
    assert manifest["spec"] == squares()[3].digest and manifest["seconds"] >= 0
    for path, digest in manifest["files"].items():
        assert hashlib.sha256((tmp_path / path).read_bytes()).hexdigest() == digest
    assert [m["shard"] for m in ShardStore(tmp_path).manifests("square")][:2] == [
        "square/00",
        "square/01",
    ]
    assert not list(tmp_path.rglob("*.tmp")) and not (tmp_path / "scratch").exists()

    assert run_stage(tmp_path, Squares(fail_on=("00",)), squares()) == 0  # nothing reruns
    # nothing pending: the task is not even asked where it would run
    assert run_stage(tmp_path, Unavailable(), squares()) == 0
    with pytest.raises(RuntimeError, match="no such device"):
        run_stage(tmp_path, Unavailable(), squares(6))


def test_a_crash_mid_stage_then_a_rerun_runs_only_the_missing_shards(tmp_path):
    crashed, whole = tmp_path / "crashed", tmp_path / "whole"
    with pytest.raises(Interrupted):
        run_stage(crashed, Squares(fail_on=("02",)), squares())
    store = ShardStore(crashed)
    assert [store.done(s) for s in squares()] == [True, True, False, False, False]

    ran = []
    assert run_stage(crashed, Squares(), squares(), on_done=ran.append) == 3
    assert [s.key for s in ran] == ["02", "03", "04"]
    run_stage(whole, Squares(), squares())
    assert files(crashed) == files(whole)


def test_a_finished_shard_is_read_back_as_its_task_returned_it(tmp_path):
    shard, *_ = squares(2)
    store = ShardStore(tmp_path)
    with pytest.raises(RunDirError, match="not done"):
        store.read(shard)
    run_stage(tmp_path, Squares(), [shard])
    assert store.read(shard) == Squares().run(None, shard, tmp_path)


def test_a_shard_resumes_from_its_scratch_which_goes_once_it_is_done(tmp_path):
    shard = Shard("work", "only")
    with pytest.raises(Interrupted):
        run_stage(tmp_path, HalfThenWhole(), [shard])
    assert (tmp_path / "scratch" / "work" / "only" / "half.txt").exists()
    assert run_stage(tmp_path, HalfThenWhole(), [shard]) == 1
    assert (tmp_path / "whole" / "only.txt").read_text() == "first half + second half"
    assert not (tmp_path / "scratch").exists()


def test_a_shard_whose_spec_changed_runs_again(tmp_path):
    run_stage(tmp_path, Squares(), [Shard("square", "x", {"n": 2})])
    assert json.loads((tmp_path / "squares" / "x.json").read_text())["square"] == 4
    assert run_stage(tmp_path, Squares(), [Shard("square", "x", {"n": 3})]) == 1
    assert json.loads((tmp_path / "squares" / "x.json").read_text())["square"] == 9


def test_a_missing_output_file_makes_its_shard_run_again(tmp_path):
    run_stage(tmp_path, Squares(), squares(2))
    (tmp_path / "squares" / "01.parquet").unlink()
    with pytest.warns(GenprobeWarning, match="01.parquet is missing; computing shard square/01"):
        assert ShardStore(tmp_path).pending(squares(2)) == [squares(2)[1]]


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_a_damaged_output_file_is_named_and_its_shard_alone_runs_again(tmp_path, how):
    run_stage(tmp_path, Squares(), squares(3))
    whole = files(tmp_path)
    damage(tmp_path / "squares" / "01.parquet", how)
    store = ShardStore(tmp_path)
    expected = f"{tmp_path / 'squares' / '01.parquet'} is damaged"
    with pytest.raises(DamagedFileError, match="compute shard square/01 again") as raised:
        store.outputs("square")
    assert str(raised.value).startswith(expected)
    with pytest.raises(DamagedFileError, match="square/01"):
        store.read(squares(3)[1])
    assert store.outputs("square", ".json") == [
        tmp_path / "squares" / f"{i:02d}.json" for i in range(3)
    ]  # the readable files of a stage are still read
    ran = []
    with pytest.warns(GenprobeWarning, match=f"{expected}.*; computing shard square/01 again"):
        assert run_stage(tmp_path, Squares(), squares(3), on_done=ran.append) == 1
    assert ran == [squares(3)[1]] and files(tmp_path) == whole


def test_a_damaged_manifest_is_named_and_its_shard_runs_again(tmp_path):
    run_stage(tmp_path, Squares(), squares(2))
    manifest = tmp_path / "shards" / "square" / "01.json"
    damage(manifest, "truncated")
    with pytest.raises(DamagedFileError, match=f"{manifest} is not a readable shard manifest"):
        ShardStore(tmp_path).outputs("square")
    with pytest.warns(GenprobeWarning, match=f"{manifest} is not a readable shard manifest"):
        assert run_stage(tmp_path, Squares(), squares(2)) == 1
    assert len(ShardStore(tmp_path).outputs("square")) == 4


@pytest.mark.parametrize(
    "path, message",
    [
        ("../escaped.txt", "outside its run"),
        ("/tmp/absolute.txt", "outside its run"),
        ("config.json", "the driver owns"),
        ("shards/square/00.json", "the driver owns"),
        ("scratch/x", "the driver owns"),
    ],
)
def test_a_shard_writing_outside_the_run_or_over_the_drivers_files_is_refused(
    tmp_path, path, message
):
    run = tmp_path / "run"
    task = Writes({"fine.txt": b"ok", path: b"bad"})
    with pytest.raises(RunDirError, match=message):
        run_stage(run, task, [Shard("bad", "one")])
    assert not (tmp_path / "escaped.txt").exists()
    assert not (run / "fine.txt").exists()  # checked before anything is written
    assert not (run / "shards" / "bad").exists()


def test_a_write_that_fails_leaves_no_partial_file_and_no_manifest(tmp_path, monkeypatch):
    real = atomic.os.replace
    calls = []

    def replace_once(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk full")
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace_once)
    with pytest.raises(OSError, match="disk full"):
        run_stage(tmp_path, Squares(), squares(1))
    assert (tmp_path / "squares" / "00.json").exists()
    assert not (tmp_path / "squares" / "00.parquet").exists()
    assert not list(tmp_path.rglob("*.tmp")) and not (tmp_path / "shards").exists()
    monkeypatch.setattr(atomic.os, "replace", real)
    assert run_stage(tmp_path, Squares(), squares(1)) == 1


def test_two_worker_processes_write_the_files_one_process_writes(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert run_stage(one, Squares(), squares(), LocalExecutor(workers=1)) == 5
    assert run_stage(two, Squares(), squares(), LocalExecutor(workers=2)) == 5
    assert files(one) == files(two) and len(files(one)) == 10
    for a, b in zip(
        ShardStore(one).manifests("square"), ShardStore(two).manifests("square"), strict=True
    ):
        assert (a["files"], a["spec"], a["device"]) == (b["files"], b["spec"], b["device"])


def test_an_error_in_a_worker_reaches_the_driver_as_itself(tmp_path):
    with pytest.raises(Interrupted):
        run_stage(tmp_path, Squares(fail_on=("01",)), squares(4), LocalExecutor(workers=2))
    assert not ShardStore(tmp_path).done(squares()[1])
    assert run_stage(tmp_path, Squares(), squares(4), LocalExecutor(workers=2)) >= 1
    assert all(ShardStore(tmp_path).done(s) for s in squares(4))
    with pytest.raises(Interrupted, match="setup"):
        run_stage(tmp_path / "b", BrokenSetup(), squares(4), LocalExecutor(workers=2))
    # a user error (whose arguments are not its message) too, not a broken process pool
    with pytest.raises(ConfigError, match="--model must be a checkpoint file") as raised:
        run_stage(tmp_path / "c", RefusedSetup(), squares(4), LocalExecutor(workers=2))
    assert raised.value.got == "ckpt:gone.pt"


def test_shard_names_are_short_file_names_and_workers_at_least_one():
    with pytest.raises(ValueError):
        Shard("train", "../up")
    with pytest.raises(ConfigError):
        LocalExecutor(workers=0)


def test_a_manifest_edited_so_that_it_still_parses_is_damaged_not_a_list_of_other_files(
    tmp_path,
):
    run_stage(tmp_path, Squares(), squares(2))
    manifest = tmp_path / "shards" / "square" / "01.json"
    manifest.write_text(manifest.read_text().replace("squares/01.parquet", "squares/81.parquet"))
    damaged = re.escape(f"{manifest} is damaged (its checksum differs from its contents)")
    with pytest.raises(DamagedFileError, match=f"{damaged}; .* compute shard square/01 again"):
        ShardStore(tmp_path).outputs("square")
    with pytest.warns(GenprobeWarning, match=f"{damaged}; computing shard square/01 again"):
        assert run_stage(tmp_path, Squares(), squares(2)) == 1
    assert not (tmp_path / "squares" / "81.parquet").exists()
    assert len(ShardStore(tmp_path).outputs("square")) == 4


def test_a_shard_made_under_another_config_is_not_this_runs(tmp_path):
    """Two commands with different configs on one directory: the second's shards have the
    first's specs (a chunk of seeds), and are still not taken as the first's results."""
    write_run_config(tmp_path, "squares", {"lr": 0.3})
    run_stage(tmp_path, Squares(), squares(2))
    write_run_config(tmp_path, "squares", {"lr": 0.125})
    made_under = f"was made under another config ({config_hash({'lr': 0.3})}, not this run's"
    with pytest.raises(DamagedFileError, match=re.escape(made_under)):
        ShardStore(tmp_path).outputs("square")
    with pytest.warns(GenprobeWarning, match=re.escape(made_under)):
        assert run_stage(tmp_path, Squares(), squares(2)) == 2
    assert len(ShardStore(tmp_path).outputs("square")) == 4


def test_a_deleted_manifest_is_named_not_its_results_left_out_and_the_rerun_makes_it(tmp_path):
    run_stage(tmp_path, Squares(), squares(3))
    whole = files(tmp_path)
    manifest = tmp_path / "shards" / "square" / "01.json"
    manifest.unlink()
    store = ShardStore(tmp_path)
    missing = re.escape(f"{manifest} is missing; ") + ".* compute shard square/01 again"
    for read in (store.outputs, store.manifests):
        with pytest.raises(DamagedFileError, match=missing):
            read("square")
    assert run_stage(tmp_path, Squares(), squares(3)) == 1
    assert files(tmp_path) == whole


def test_a_stage_that_grows_keeps_the_shards_it_had(tmp_path):
    run_stage(tmp_path, Squares(), squares(2))
    run_stage(tmp_path, Squares(), squares(3))
    assert ShardStore(tmp_path).planned("square") == ["00", "01", "02"]
    run_stage(tmp_path, Squares(), squares(2))  # a rerun of the smaller run forgets none
    assert ShardStore(tmp_path).planned("square") == ["00", "01", "02"]


def test_a_manifest_that_lost_its_checksum_in_a_sealed_run_is_damaged(tmp_path):
    """A flipped byte in the word "checksum" must not make a manifest read as one written
    before records were sealed, in a run that seals them."""
    stored = {"kind": "squares", "hash": config_hash({}), "config": {}}
    (tmp_path / "config.json").write_text(json.dumps(seal(stored)))
    run_stage(tmp_path, Squares(), squares(2))
    manifest = tmp_path / "shards" / "square" / "01.json"
    manifest.write_text(manifest.read_text().replace('"checksum"', '"chec{sum"'))
    damaged = re.escape(f"{manifest} is damaged (its checksum differs from its contents)")
    with pytest.raises(DamagedFileError, match=damaged):
        ShardStore(tmp_path).outputs("square")


def test_a_required_file_is_read_checked_and_its_absence_says_what_makes_it(tmp_path):
    stored = {"kind": "squares", "hash": config_hash({}), "config": {}}
    (tmp_path / "config.json").write_text(json.dumps(seal(stored)))
    store = ShardStore(tmp_path)
    with pytest.raises(RunDirError, match=re.escape("has no table.json yet: run the table")):
        store.required("table", "table.json", "run the table")
    store.keep(Shard("table", "all"), {"table.json": b"[1, 2]"})
    assert store.required("table", "table.json", "run the table").read_bytes() == b"[1, 2]"
    damage(tmp_path / "table.json", "flipped")
    with pytest.raises(DamagedFileError, match=re.escape(str(tmp_path / "table.json"))):
        store.required("table", "table.json", "run the table")


@pytest.mark.parametrize(
    "edit", [lambda t: t.replace('"keys"', '"kezs"'), lambda t: t.replace("01", "07")]
)
def test_a_damaged_stage_record_is_named_to_readers_and_written_again_by_a_driver(tmp_path, edit):
    run_stage(tmp_path, Squares(), squares(3))
    record = tmp_path / "shards" / "square.json"
    record.write_text(edit(record.read_text()))
    with pytest.raises(DamagedFileError, match=re.escape(str(record))):
        ShardStore(tmp_path).outputs("square")

    @writes_runs
    def rerun():
        lock_run(tmp_path)
        return run_stage(tmp_path, Squares(), squares(3))

    with pytest.warns(GenprobeWarning, match=re.escape(f"{record} ") + ".* written again"):
        assert rerun() == 0  # nothing to compute: the record alone is mended
    assert ShardStore(tmp_path).planned("square") == ["00", "01", "02"]

    @writes_runs
    def rerun_reading_nothing():  # a finished run's rerun that reads none of the stage
        lock_run(tmp_path)

    record.write_text(edit(record.read_text()))
    with pytest.warns(GenprobeWarning, match=re.escape(f"{record} ") + ".* written again"):
        rerun_reading_nothing()
    assert ShardStore(tmp_path).planned("square") == ["00", "01", "02"]
