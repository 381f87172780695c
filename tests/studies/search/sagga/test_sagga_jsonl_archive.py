"""A SAGGA run's archive is archive.parquet; a run made before it holds archive.jsonl (the
committed SAGGA run, `tests/golden/`, is one). A finished one's rerun only reads it; one killed
mid-search resumes to the archive it would have had, written as archive.parquet, and
archive.jsonl goes."""

import json
import shutil

import pandas as pd
import pytest
from study_runs import INPUTS, STUDIES, out_of, unpack

from genprobe.studies.search.sagga.results import read_archive, read_clusters, read_results

pytestmark = pytest.mark.slow

# what the search writes after its generations: a run killed in its search has none of it
ANALYSIS = ("analysis", "cluster", "tag", "nearby", "figures", "summary.json", "report.*")


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    run = unpack(tmp_path_factory.mktemp("golden")) / out_of("sagga")
    assert (run / "archive.jsonl").is_file() and not (run / "archive.parquet").exists()
    return run


def _as_before(cluster: dict) -> dict:
    """A cluster of the one schema, as a file made before it is read (`read_clusters`)."""
    kept = {key: cluster["slice"][key] for key in ("text", "coverage", "precision")}
    return {**{key: cluster[key] for key in ("size", "rows", "central")}, "slice": kept}


def _rerun(cli, run):
    code, _, err = cli(*STUDIES["sagga"].argv(INPUTS), "--out", str(run))
    assert code == 0, err


def test_a_finished_run_made_before_is_read_as_it_is(committed, cli, tmp_path):
    run = shutil.copytree(committed, tmp_path / "run")
    _rerun(cli, run)
    assert (run / "archive.jsonl").read_bytes() == (committed / "archive.jsonl").read_bytes()
    assert not (run / "archive.parquet").exists()


def test_a_run_made_before_killed_after_a_generation_resumes_into_archive_parquet(
    committed, cli, tmp_path
):
    # as earlier code left a search killed while scoring generation 3 (its model answers and
    # verdicts kept)
    run = shutil.copytree(committed, tmp_path / "run", ignore=shutil.ignore_patterns(*ANALYSIS))
    for name in (
        "shards/generation/00003.json",
        "generations/00003.parquet",
        "generations/00003.json",
    ):
        (run / name).unlink()
    rows = (run / "archive.jsonl").read_text().splitlines(keepends=True)
    kept = [row for row in rows if json.loads(row)["generation"] < 3]
    (run / "archive.jsonl").write_text("".join(kept))
    state = json.loads((run / "search.json").read_text())
    state.update(stop="running", generations=2, stats=state["stats"][:2])
    (run / "search.json").write_text(json.dumps(state))
    assert len(read_archive(run)) < len(read_archive(committed))

    _rerun(cli, run)
    assert not (run / "archive.jsonl").exists()
    pd.testing.assert_frame_equal(read_archive(run), read_archive(committed))
    # clustered again, in the one schema: the clusters of the committed run's file (made
    # before it, read as it is), with the rest of the schema
    again = read_clusters(run)["clusters"]
    assert all("apart" in c and "conditions" in c["slice"] for c in again)
    assert [_as_before(c) for c in again] == read_clusters(committed)["clusters"]
    pd.testing.assert_frame_equal(read_results(run).archive, read_results(committed).archive)
