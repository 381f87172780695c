"""Predictions stored before the judged schema (`valid`, no `role`: the committed golden sweep)
read as today's, and a run resumed from them keeps its old files beside the new ones."""

import shutil

import pandas as pd
import pytest
from study_runs import INPUTS, STUDIES, out_of, unpack

from genprobe.analysis.judged import COLUMNS
from genprobe.studies.seed_sensitivity.results import read_predictions

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    return unpack(tmp_path_factory.mktemp("golden")) / out_of("sweep")


def test_old_predictions_read_as_judged_answers(golden):
    stored = pd.concat(pd.read_parquet(p) for p in sorted((golden / "predictions").iterdir()))
    assert "valid" in stored and "role" not in stored  # the layout before the schema
    predictions = read_predictions(golden)
    assert list(predictions.columns) == [*COLUMNS, "seed", "length"]
    assert (predictions["member"] == "seed=" + predictions["seed"].astype(str)).all()
    assert set(predictions["outcome"]) <= {"correct", "incorrect"}
    right = predictions.set_index(["seed", "suite", "index"])["outcome"] == "correct"
    assert (
        right.sort_index().tolist()
        == stored.set_index(["seed", "suite", "index"])["valid"].sort_index().tolist()
    )


def test_a_resumed_old_run_reads_its_old_and_new_predictions_as_one(golden, cli, tmp_path):
    run = tmp_path / "sweep"
    shutil.copytree(golden, run)
    for path in (run / "shards" / "predict" / "long.json", run / "predictions" / "long.parquet"):
        path.unlink()  # as if killed before decoding `long`
    code, _, err = cli(*STUDIES["sweep"].argv(INPUTS), "--out", str(run))
    assert code == 0, err
    rewritten = pd.read_parquet(run / "predictions" / "long.parquet")
    assert "valid" not in rewritten and list(rewritten.columns[: len(COLUMNS)]) == list(COLUMNS)
    assert "valid" in pd.read_parquet(run / "predictions" / "short.parquet")  # kept as it was
    pd.testing.assert_frame_equal(read_predictions(run), read_predictions(golden))
