"""Any run's results as tidy tables (`genprobe.read_tables`) and `genprobe export`: a seed
sweep, a grid of seeds, a brittleness run, a SAGGA search and a training run, each table
checked against the run's own result files; what is not a run is one line and exit 2."""

import json

import pandas as pd
import pytest

from genprobe import export_tables, read_tables
from genprobe.analysis.judged import COLUMNS
from genprobe.runs.provenance import config_hash
from genprobe.studies import STUDIES
from genprobe.studies.search.sagga.results import read_archive
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.studies.seed_sensitivity.results import read_predictions, read_training
from genprobe.studies.study import load_function


def py_answer(problem: str, k: int):
    """py: model: right at rank 2 on x + 1 (as SymPy prints it), wrong elsewhere."""
    del k
    return ["x", "x^2/2 + x"] if problem == "x + 1" else ["x"]


def polynomial_answer(problem: str, k: int):
    """py: model: right on 1 and x, wrong elsewhere."""
    del k
    return {"1": ["x"], "x": ["x^2/2"]}.get(problem, ["x"])


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, tiny_sweep):
    return run_sweep(tiny_sweep(seeds=(1, 2, 3)), tmp_path_factory.mktemp("runs") / "sweep")


def test_every_study_declares_a_tables_function():
    for study in STUDIES:
        assert callable(load_function(study.tables))


def test_a_sweep_reads_as_one_row_per_example_member_and_suite(sweep):
    tables = read_tables(sweep)
    assert list(tables) == ["scores", "members", "curves", "judged"]
    judged, scores = tables["judged"], tables["scores"]  # the predictions, as judged outputs
    predictions = read_predictions(sweep)
    assert len(judged) == len(predictions) == 3 * 5 * 12  # seeds × suites × examples
    assert not judged.duplicated(["seed", "suite", "index"]).any()
    # by seed, then the task's suites in its order, then index
    assert judged["seed"].is_monotonic_increasing
    assert list(dict.fromkeys(judged["suite"])) == [
        "standard", "repeat", "short", "long", "uncharacteristic"
    ]  # fmt: skip
    merged = judged.merge(predictions, on=["seed", "suite", "index"], suffixes=("", "_file"))
    assert (merged["output"] == merged["output_file"]).all()
    assert (merged["outcome"] == merged["outcome_file"]).all()
    assert list(judged.columns) == [*COLUMNS, "seed", "length"]
    assert judged["member"].tolist() == [f"seed={seed}" for seed in judged["seed"]]
    assert (judged["role"] == "answer").all() and (judged["rank"] == 1).all()

    metrics = json.loads((sweep / "metrics.json").read_text())["seeds"]
    assert len(scores) == 3 * 5 and (scores["n"] == 12).all()
    for row in scores.itertuples():
        assert row.accuracy == pytest.approx(metrics[str(row.seed)]["accuracy"][row.suite])

    training = read_training(sweep)
    members, curves = tables["members"], tables["curves"]
    assert members["seed"].tolist() == [1, 2, 3]
    assert members["epochs"].tolist() == [training[s]["epochs"] for s in ("1", "2", "3")]
    assert len(curves) == sum(len(t["validation"]) for t in training.values())
    kept = curves[curves["kept"]]
    assert kept["seed"].tolist() == [1, 2, 3]
    assert kept["epoch"].tolist() == [training[s]["best_epoch"] for s in ("1", "2", "3")]


def test_a_grid_of_seeds_names_each_members_init_and_order_seeds(tmp_path, tiny_sweep):
    config = tiny_sweep(seeds=(0, 1, 2, 3), init_seeds=(7, 8), order_seeds=(1, 2))
    tables = read_tables(run_sweep(config, tmp_path / "grid"))
    cells = {0: (7, 1), 1: (7, 2), 2: (8, 1), 3: (8, 2)}
    for table in tables.values():
        at = table.columns.get_loc("seed")  # judged: after the schema's columns
        assert list(table.columns[at : at + 3]) == ["seed", "init", "order"]
        for row in table.itertuples():
            assert (row.init, row.order) == cells[row.seed]


@pytest.mark.parametrize("format", ["csv", "parquet"])
def test_export_writes_every_table_and_reads_back_the_same(sweep, tmp_path, cli, format):
    out = tmp_path / "tables"
    code, _, err = cli("export", str(sweep), "--format", format, "--out", str(out))
    assert code == 0, err
    tables = read_tables(sweep)
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.{format}" for n in tables)
    for name, table in tables.items():
        path = out / f"{name}.{format}"
        if format == "csv":  # an empty output stays "", a missing reference is missing
            missing = {c: [""] for c in ("reference", "reference_logprob", "logprob")}
            back = pd.read_csv(path, keep_default_na=False, na_values=missing)
        else:
            back = pd.read_parquet(path)
        pd.testing.assert_frame_equal(back, table, check_dtype=False)


def test_export_goes_into_the_run_by_default(sweep):
    paths = export_tables(sweep)
    assert [p.relative_to(sweep).as_posix() for p in paths] == [
        "tables/scores.csv", "tables/members.csv", "tables/curves.csv", "tables/judged.csv",
    ]  # fmt: skip
    assert not list((sweep / "tables").glob("*.tmp"))  # written atomically


@pytest.mark.parametrize(
    "config, args, message",
    [
        (None, [], "is not a run directory (no config.json)"),
        ({"kind": "unheard-of", "hash": config_hash({}), "config": {}}, [], "which no study knows"),
        ("sweep", ["--format", "xlsx"], "--format must be one of csv, parquet. Got 'xlsx'"),
    ],
)
def test_export_of_no_known_run_or_format_is_one_line_and_writes_nothing(
    sweep, tmp_path, cli, config, args, message
):
    run = sweep if config == "sweep" else tmp_path / "run"
    if config not in (None, "sweep"):
        run.mkdir()
        (run / "config.json").write_text(json.dumps(config))
    out = tmp_path / "out"
    code, _, err = cli("export", str(run), *args, "--out", str(out))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.slow
def test_a_brittleness_run_reads_as_problems_candidates_and_scores(cli, validation, tmp_path):
    run = tmp_path / "run"
    code, _, err = cli(
        "integration", "brittleness", "--model", "py:test_tables:py_answer", "--out", str(run),
        "--validation", str(validation), "--suites", "in-distribution", "--preset", "quick",
        "--n", "6", "--k", "1", "2", "--workers", "1",
    )  # fmt: skip
    assert code == 0, err
    tables = read_tables(run)
    assert list(tables) == ["examples", "candidates", "scores", "judged"]
    examples, candidates, scores = tables["examples"], tables["candidates"], tables["scores"]
    stored = pd.read_parquet(run / "examples.parquet")
    assert len(examples) == len(stored) and "candidates" not in examples
    assert (examples["model"] == "py:test_tables:py_answer").all()
    assert len(candidates) == examples["n_candidates"].sum()
    right = candidates[candidates["outcome"] == "correct"].merge(examples, on=["suite", "row"])
    assert right["problem"].tolist() == ["add INT+ 1 x"] and right["rank"].tolist() == [2]
    assert right["first_correct_rank"].tolist() == [2]
    summary = json.loads((run / "summary.json").read_text())
    for policy in ("strict", "generous"):
        ours = scores[scores["policy"] == policy].drop(columns=["model", "policy"])
        assert ours.to_dict("records") == summary["fail"][policy]
    exported = export_tables(run, "csv", tmp_path / "csv")
    assert [p.name for p in exported] == [
        "examples.csv", "candidates.csv", "scores.csv", "judged.csv"
    ]  # fmt: skip


@pytest.mark.slow
def test_a_sagga_search_reads_as_mutants_archive_and_generations(cli, tmp_path):
    run = tmp_path / "run"
    code, _, err = cli(
        "integration", "sagga", "--model", "py:test_tables:polynomial_answer", "--out", str(run),
        "--basis", "x", "--preset", "uniform", "--generations", "2", "--generation-size", "24",
        "--seed-size", "6", "--workers", "2",
    )  # fmt: skip
    assert code == 0, err
    tables = read_tables(run)
    assert list(tables) == ["examples", "archive", "generations"]
    mutants = pd.concat(pd.read_parquet(p) for p in sorted((run / "generations").glob("*.parquet")))
    assert len(tables["examples"]) == len(mutants)
    assert tables["archive"]["problem"].tolist() == read_archive(run)["problem"].tolist()
    assert tables["generations"]["generation"].tolist() == [1, 2]
    for path in export_tables(run, "csv", tmp_path / "csv"):  # answers (lists) as JSON
        assert len(pd.read_csv(path)) == len(tables[path.stem])
    answers = pd.read_csv(tmp_path / "csv" / "examples.csv")["answers"].map(json.loads)
    assert answers.tolist() == [list(a) for a in tables["examples"]["answers"]]


@pytest.mark.slow
def test_a_training_run_reads_as_its_validation_curve(tiny_model):
    curves = read_tables(tiny_model)["curves"]
    lines = (tiny_model / "metrics.jsonl").read_text().splitlines()
    assert curves.to_dict("records") == [json.loads(line) for line in lines]
