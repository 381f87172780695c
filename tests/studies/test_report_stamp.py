"""A study's report is written again only when what it is made from changed: a finished run's
rerun reads it (`Study.update_report`), without importing the report's modules."""

import json
from pathlib import Path

import pytest

from genprobe.runs.provenance import config_hash
from genprobe.studies.study import REPORT_STAMP, Study

WRITTEN: list[tuple[Path, dict]] = []


def write_report(run: Path, **settings) -> tuple[Path, Path]:
    """A report function of a study: counts its calls."""
    WRITTEN.append((run, settings))
    (run / "figures").mkdir(exist_ok=True)
    for name in ("report.md", "report.html", "summary.json", "figures/suites.png"):
        (run / name).write_text(f"{len(WRITTEN)}")
    return run / "report.md", run / "report.html"


STUDY = Study(
    kind="stamped", name="a stamped study", config="x:Config", run="x:run", commands=(),
    resumes="nothing", report=f"{__name__}:write_report", tables="x:y",
    report_settings=("threshold",), report_inputs=("archive.jsonl",),
    report_outputs=("summary.json",),
)  # fmt: skip


@pytest.fixture
def run(tmp_path):
    WRITTEN.clear()
    stored = {"kind": "stamped", "hash": config_hash({}), "config": {}}
    (tmp_path / "config.json").write_text(json.dumps(stored))
    (tmp_path / "shards" / "decode").mkdir(parents=True)
    (tmp_path / "shards" / "decode" / "a.json").write_text('{"files": {}}')
    (tmp_path / "archive.jsonl").write_text("{}\n")
    return tmp_path


def test_a_report_is_written_again_only_when_its_inputs_settings_or_files_changed(run):
    assert STUDY.update_report(run, threshold=0.9)
    assert not STUDY.update_report(run, threshold=0.9)  # the rerun of a finished run
    assert STUDY.report_current(run, threshold=0.9)
    assert len(WRITTEN) == 1 and (run / REPORT_STAMP).is_file()
    assert STUDY.update_report(run, threshold=0.8)  # another setting
    (run / "shards" / "decode" / "b.json").write_text('{"files": {}}')  # a new shard
    assert STUDY.update_report(run, threshold=0.8)
    (run / "archive.jsonl").write_text("{}\n{}\n")  # a file the report reads besides
    assert STUDY.update_report(run, threshold=0.8)
    (run / "summary.json").unlink()  # a file it writes that a command reads
    assert STUDY.update_report(run, threshold=0.8)
    assert not STUDY.update_report(run, threshold=0.8)
    (run / "summary.json").write_text("4")  # cut or flipped: not what the report wrote
    assert STUDY.update_report(run, threshold=0.8)
    (run / "report.md").write_text("")
    assert STUDY.update_report(run, threshold=0.8)
    assert not STUDY.update_report(run, threshold=0.8)
    (run / "figures" / "suites.png").write_text("")  # a figure it drew, cut
    assert STUDY.update_report(run, threshold=0.8)
    (run / "figures" / "suites.png").unlink()
    assert STUDY.update_report(run, threshold=0.8)
    assert not STUDY.update_report(run, threshold=0.8)
    STUDY.write_report(run, threshold=0.8)  # `genprobe report`: always
    assert len(WRITTEN) == 10


def test_a_report_written_by_other_code_is_written_again(run, monkeypatch):
    from genprobe.studies import study

    STUDY.update_report(run)
    monkeypatch.setattr(study, "code_digest", lambda: "other code")
    assert not STUDY.report_current(run)
    assert STUDY.update_report(run) and len(WRITTEN) == 2


def test_a_damaged_record_is_named_by_the_rerun_rather_than_hashed(run):
    from genprobe.errors import DamagedFileError
    from genprobe.runs.sealed import seal

    manifest = run / "shards" / "decode" / "a.json"
    manifest.write_text(json.dumps(seal({"files": {}})).replace("{}", '{"x": "y"}'))
    with pytest.raises(DamagedFileError, match=f"{manifest} is damaged"):
        STUDY.update_report(run)
    assert WRITTEN == []
