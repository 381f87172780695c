"""SAGGA's clusters are records of the one cluster analysis (`studies/search/clusters.py`),
the failure search's schema with `central`; a run made before that schema keeps its
`analysis/clusters.json`, read as it is."""

import json

import pandas as pd
from helpers import model_settings

from genprobe.runs.shards import Shard
from genprobe.studies.search.clusters import (
    CENTRAL,
    TASK_FEATURES,
    cluster_records,
    text_embeddings,
)
from genprobe.studies.search.embedding import make_embedder
from genprobe.studies.search.sagga.analysis import ClusterStage
from genprobe.studies.search.sagga.config import SaggaConfig
from genprobe.studies.search.sagga.results import CLUSTERS, read_clusters
from genprobe.studies.search.sagga.study import CLUSTER
from genprobe.tasks.integration.features import tree_features
from genprobe.tasks.integration.prefix import from_prefix

FAILURES = [
    "sin x", "mul INT+ 2 sin x", "sin mul INT+ 3 x", "cos x", "mul x cos x", "exp x",
    "exp mul INT+ 2 x", "mul x exp x", "pow x INT+ 3", "pow x INT+ 5", "ln x", "mul x ln x",
]  # fmt: skip
SOLVED = ["x", "INT+ 1", "mul INT+ 2 x", "add x INT+ 1"]
SCHEMA = {"size", "rows", "apart", "slice", "central"}
SLICE = {"text", "conditions", "coverage", "precision", "contrast"}


def _spec() -> dict:
    texts = [str(from_prefix(p.split())) for p in FAILURES]
    archive = [list(row) for row in zip(FAILURES, texts, strict=True)]
    return {"generations": 2, "archive": archive, "successes": SOLVED}


def test_the_cluster_stage_writes_records_of_the_one_schema(tmp_path):
    config = SaggaConfig(model_settings("py:test_sagga:py_answer"), basis="x", seed=5).as_search()
    embedder = make_embedder(config.embedding)
    outputs = ClusterStage(config).run(embedder, Shard(CLUSTER, "archive", _spec()), tmp_path)
    found = json.loads(outputs[CLUSTERS])
    assert (found["generations"], found["archive_size"]) == (2, len(FAILURES))
    clusters = found["clusters"]
    assert clusters and all(set(c) == SCHEMA and set(c["slice"]) == SLICE for c in clusters)
    rows = sorted(r for c in clusters for r in c["rows"])
    assert rows == list(range(len(FAILURES)))  # each failure in one cluster
    assert [c["size"] for c in clusters] == sorted((len(c["rows"]) for c in clusters), reverse=True)
    for c in clusters:
        assert c["central"] == [FAILURES[r] for r in c["rows"][:CENTRAL]]
    # the one function's records, SAGGA's setting (text embeddings, its seed, nested merged)
    described = tree_features([from_prefix(p.split()) for p in [*FAILURES, *SOLVED]])
    vectors = embedder.embed([text for _, text in _spec()["archive"]])
    records = cluster_records(text_embeddings(vectors, 5), described, len(FAILURES))
    assert [{k: v for k, v in c.items() if k != "central"} for c in clusters] == records
    # the failure search's setting gives the same schema, less SAGGA's `central`
    searched = cluster_records(TASK_FEATURES, described, len(FAILURES))
    assert all(set(c) == SCHEMA - {"central"} for c in searched)


def test_a_clusters_file_made_before_the_one_schema_is_read_as_it_is(tmp_path):
    old = {
        "generations": 3, "archive_size": 5,
        "clusters": [
            {"members": [3, 0, 4], "central": ["sin x", "cos x", "exp x"], "slice": "has sin",
             "coverage": 0.75, "precision": 1.0},
            {"members": [1, 2], "central": ["x", "ln x"], "slice": "everything",
             "coverage": 1.0, "precision": 0.5},
        ],
    }  # fmt: skip
    (tmp_path / "analysis").mkdir()
    (tmp_path / CLUSTERS).write_text(json.dumps(old))
    found = read_clusters(tmp_path)
    assert (found["generations"], found["archive_size"]) == (3, 5)
    assert found["clusters"] == [
        {"size": 3, "rows": [3, 0, 4], "central": ["sin x", "cos x", "exp x"],
         "slice": {"text": "has sin", "coverage": 0.75, "precision": 1.0}},
        {"size": 2, "rows": [1, 2], "central": ["x", "ln x"],
         "slice": {"text": "everything", "coverage": 1.0, "precision": 0.5}},
    ]  # fmt: skip
    # a file of the one schema is read unchanged
    new = {**old, "clusters": found["clusters"]}
    (tmp_path / CLUSTERS).write_text(json.dumps(new))
    assert read_clusters(tmp_path) == new


def test_an_empty_archive_has_no_clusters(tmp_path):
    config = SaggaConfig(model_settings("py:test_sagga:py_answer"), basis="x").as_search()
    spec = {"generations": 1, "archive": [], "successes": SOLVED}
    shard = Shard(CLUSTER, "archive", spec)
    outputs = ClusterStage(config).run(make_embedder("char"), shard, tmp_path)
    assert json.loads(outputs[CLUSTERS])["clusters"] == []
    assert cluster_records(TASK_FEATURES, pd.DataFrame(), 0) == []
