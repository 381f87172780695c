"""`genprobe integration sagga` end to end: SymPy as the model under test (where does a CAS
fail?), every model kind, the time budget, the analysis stages resumed, bad input (kill -9
mid-search: tests/studies/test_every_study.py)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pandas as pd
import pytest
from helpers import MinuteClock, damage, model_settings

from genprobe.errors import DamagedFileError, GenprobeWarning
from genprobe.runs.executor import LocalExecutor
from genprobe.studies.search.sagga.config import SaggaConfig
from genprobe.studies.search.sagga.report import write_sagga_report
from genprobe.studies.search.sagga.results import read_archive, read_mutants, read_results
from genprobe.studies.search.sagga.run import run_sagga

pytestmark = pytest.mark.slow

# the search's sizes; 1 mutant of each central member for a nearby success, not 20: only
# test_the_analysis_has_budgets_of_work_of_its_own_not_the_searchs_time reads what it finds
SMALL = ["--generation-size", "24", "--seed-size", "6", "--workers", "2", "--nearby-attempts", "1"]


def py_answer(problem: str, k: int):
    """py: model: right on polynomials of degree < 2 written plainly, wrong elsewhere."""
    del k
    return {"1": ["x"], "x": ["x^2/2"]}.get(problem, ["x"])


def test_sympy_search_archives_cas_failures_and_reports_them(cli, tmp_path):
    run = tmp_path / "run"
    # SMALL, but half the mutants: SymPy integrates each, and each of its failures again to tag it
    small = ["--generation-size", "12", *SMALL[2:]]
    code, _, err = cli(
        "integration", "sagga", "--model", "sympy", "--out", str(run), "--basis", "x",
        "--mutation-params", "uniform", "--generations", "2", "--model-deadline", "2", *small,
    )  # fmt: skip
    assert code == 0, err
    state = json.loads((run / "search.json").read_text())
    assert state["stop"] == "generations" and state["generations"] == 2
    archive = read_archive(run)
    assert archive["problem"].is_unique  # novel by canonical form
    generations = pd.concat(
        pd.read_parquet(p) for p in sorted((run / "generations").glob("*.parquet"))
    )
    failed = generations[(generations["status"] == "failed") & (generations["fitness"] >= 0.01)]
    assert set(failed["problem"]) == set(archive["problem"])
    assert (generations.loc[generations["status"] != "failed", "fitness"] == 0).all()
    summary = json.loads((run / "summary.json").read_text())
    effort = summary["effort"]
    assert effort["attempts"] == sum(s["attempts"] for s in state["stats"])
    assert effort["mutants"] == len(generations)
    assert effort["queries"] + effort["cache_hits"] == effort["mutants"]
    deadlines = effort["deadlines"]
    assert deadlines["mutation"]["items"] == effort["simplified"] <= effort["attempts"]
    assert deadlines["verification"]["items"] == generations["outcome"].notna().sum()  # k = 1
    if not effort["deadline_warnings"]:
        assert "Warning:" not in (run / "report.html").read_text()
    assert summary["archive_size"] == len(archive)
    assert sum(c["size"] for c in summary["clusters"]) == len(archive)
    page = (run / "report.html").read_text()
    assert "Search effort" in page and "model queries" in page
    assert len(archive)  # SymPy fails on c**(x**2) (no elementary antiderivative), for one
    assert "Failure clusters" in page
    assert set(summary["tags"]) <= {"exploit", "robustness", "unknown"}
    assert sum(summary["tags"].values()) == len(archive)
    assert deadlines["tagging"]["items"] == len(archive)  # every failure tagged once
    assert "failures archived" in err
    # off a terminal, progress comes as plain lines, one per step
    assert "] generation 1: verifying" in err
    assert "] generation 2: " in err and "] tagging " in err


@pytest.mark.parametrize("kind", ["ckpt", "lc", "py", "openai"])
def test_every_model_kind_runs_a_search(cli, kind, checkpoint, lc_checkpoint, endpoint, tmp_path):
    specs = {
        "ckpt": f"ckpt:{checkpoint}",
        "lc": f"lc:{lc_checkpoint}",
        "py": "py:test_sagga:py_answer",
        "openai": f"openai:test@{endpoint().url}",
    }
    run = tmp_path / "run"
    # tagging asks SymPy, whatever the model: 3 failures, not all
    code, _, err = cli(
        "integration", "sagga", "--model", specs[kind], "--out", str(run), "--basis", "polynomial",
        "--generations", "1", "--beam", "2", "--max-len", "12", "--cache-dir",
        str(tmp_path / "cache"), "--tag-limit", "3", *SMALL,
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["generations"] == 1 and summary["effort"]["mutants"] > 0
    assert (run / "report.html").exists()
    # the default mutant form is left out, so runs made before the option resume
    assert "mutant_form" not in json.loads((run / "config.json").read_text())["config"]


def test_automatic_mutants_are_recorded_and_reported(cli, tmp_path):
    run = tmp_path / "run"
    code, _, err = cli(
        "integration", "sagga", "--model", "py:test_sagga:py_answer", "--out", str(run),
        "--basis", "polynomial", "--generations", "1", "--mutant-form", "automatic", *SMALL,
    )  # fmt: skip
    assert code == 0, err
    assert json.loads((run / "config.json").read_text())["config"]["mutant_form"] == "automatic"
    assert "automatic mutants" in (run / "report.md").read_text()
    # the default form, left out of config.json: test_every_model_kind_runs_a_search


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mutation-params", "robust"], "--mutation-params must be one of"),
        # its old spelling is read (and named as it is now)
        (["--preset", "robust"], "did you mean robustness"),
        (["--mutant-form", "auto"], "did you mean automatic"),
        (["--basis", "polynomial_robust"], "did you mean polynomial_robustness"),
        (["--fitness", "target_length"], "--target-length"),
        (["--seed-selection", "kmean"], "did you mean kmeans"),
        (["--generation-size", "0"], "--generation-size"),
        (["--tau", "inf"], "--tau must be a number ≥ 0"),
        (["--minutes", "inf"], "--minutes must be positive minutes"),
        (["--mutation-deadline", "0"], "--mutation-deadline must be positive seconds"),
        (["--preset", "robustness", "--mutation-params", "uniform"],
         "--mutation-params is given twice: as --preset (its old name) and as "
         "--mutation-params"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(cli, tmp_path, args, message):
    code, _, err = cli(
        "integration", "sagga", "--model", "sympy", "--out", str(tmp_path / "r"), *args
    )
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "r").exists()


def test_a_malformed_basis_file_names_its_line(cli, tmp_path):
    basis = tmp_path / "basis.txt"
    basis.write_text("2*x + 1\nx +* 2\n")
    code, _, err = cli(
        "integration", "sagga", "--model", "sympy", "--out", str(tmp_path / "r"),
        "--basis-file", str(basis),
    )  # fmt: skip
    assert code == 2 and f"{basis}:2" in err and err.count("\n") == 1, err


def test_a_search_killed_in_its_analysis_resumes_it(cli, tmp_path):
    def args(out):
        return [
            "integration", "sagga", "--model", "py:test_sagga:py_answer", "--out", str(out),
            "--basis", "x", "--generations", "2", "--verify-chunk", "5", *SMALL,
        ]  # fmt: skip

    killed = tmp_path / "killed"
    command = [sys.executable, "-m", "genprobe", *args(killed)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(command, env=env)
    clustered = killed / "shards" / "cluster" / "archive.json"
    while process.poll() is None and not clustered.exists():
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL  # clusters written, tags or nearby successes to come
    before = clustered.read_text()
    code, _, err = cli(*args(killed))  # the same command, in this process
    assert code == 0, err
    assert clustered.read_text() == before  # not clustered again
    results = read_results(killed)
    assert results.clusters and results.archive["tag"].notna().all()
    assert (killed / "report.html").exists()

    # the same generations analysed without a kill give the same clusters
    analysis = shutil.ignore_patterns("analysis", "cluster", "tag", "nearby", "summary.json")
    fresh = shutil.copytree(killed, tmp_path / "fresh", ignore=analysis)
    code, _, err = cli(*args(fresh))
    assert code == 0, err
    clusters = "analysis/clusters.json"
    assert (fresh / clusters).read_text() == (killed / clusters).read_text()


def test_a_failure_search_with_sagga_s_breeder_finds_what_integration_sagga_finds(cli, tmp_path):
    given = [
        "--model", "py:test_sagga:py_answer", "--basis", "x", "--generations", "2",
        "--generation-size", "24", "--workers", "2", "--nearby-attempts", "1", "--tag-limit", "4",
    ]  # fmt: skip
    sagga, search = tmp_path / "sagga", tmp_path / "search"
    code, _, err = cli("integration", "sagga", *given, "--seed-size", "6", "--out", str(sagga))
    assert code == 0, err
    searched = [
        "search", *given, "--task", "integration", "--breeder", "sagga", "--population", "6",
        "--selection", "kmeans", "--fitness", "length_penalty", "--seed", "43",
        "--out", str(search),
    ]  # fmt: skip
    code, _, err = cli(*searched)
    assert code == 0, err
    stored = (search / "config.json").read_text()
    assert json.loads(stored)["kind"] == "search"
    code, _, err = cli(*searched)  # a rerun only reads, under the same config
    assert code == 0 and "reading its files" in err, err
    assert (search / "config.json").read_text() == stored
    found = read_results(search)
    pd.testing.assert_frame_equal(found.archive, read_results(sagga).archive)
    assert found.clusters == read_results(sagga).clusters and found.config.breeder == "sagga"
    assert "SAGGA: where" in (search / "report.md").read_text()


# the analysis left with (almost) no work: the tests of the search alone
SEARCH_ONLY = {"tag_limit": 0, "nearby_attempts": 0}


def _py_config(**changes):
    return SaggaConfig(
        model_settings("py:test_sagga:py_answer"), basis="x", generations=2, generation_size=24,
        seed_size=6, workers=2, verify_chunk=5, **{"nearby_attempts": 2, **changes},
    )  # fmt: skip


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """A finished search, its analysis left with (almost) no work: copied by the tests that
    damage it."""
    return run_sagga(_py_config(**SEARCH_ONLY), tmp_path_factory.mktemp("searched") / "run")


def test_a_damaged_generation_file_is_named_and_that_generation_computed_again(searched, tmp_path):
    run = shutil.copytree(searched, tmp_path / "run")
    archive = read_archive(run)
    generation = run / "generations" / "00001.parquet"
    good = generation.read_bytes()
    damage(generation, "truncated")
    with pytest.raises(DamagedFileError, match=f"{generation} is damaged"):
        read_mutants(run, 2)  # what the report reads
    with pytest.warns(GenprobeWarning, match=f"{generation} is damaged"):
        run_sagga(_py_config(**SEARCH_ONLY), run)
    assert generation.read_bytes() == good
    pd.testing.assert_frame_equal(read_archive(run), archive)


def test_the_budget_stops_a_generation_between_its_shards_and_a_rerun_goes_on(tmp_path):
    # the clock is read at the start, after the proposal (1 minute), after the first verify
    # shard (2 minutes: past the budget)
    stopped = run_sagga(_py_config(minutes=1.5), tmp_path / "stopped", clock=MinuteClock())
    state = json.loads((stopped / "search.json").read_text())
    assert state["stop"] == "time budget" and state["generations"] == 0
    proposed = json.loads((stopped / "generations" / "00001" / "proposed.json").read_text())
    assert sum(row["readable"] for row in proposed["rows"]) > 5  # more than one verify shard
    [verified] = (stopped / "shards" / "verify").glob("00001-*.json")
    assert not (stopped / "generations" / "00001.parquet").exists()
    write_sagga_report(stopped)  # a report of what there is: no generation finished
    assert json.loads((stopped / "summary.json").read_text())["archive_size"] == 0

    before = verified.read_text()
    run_sagga(_py_config(), stopped)
    assert verified.read_text() == before  # the finished shard was not run again
    state = json.loads((stopped / "search.json").read_text())
    assert state["stop"] == "generations" and state["generations"] == 2


def test_a_search_stopped_by_its_budget_is_finished_and_its_rerun_only_reads(tmp_path, monkeypatch):
    """The budget is the run's, over its invocations: the same command again computes nothing
    and changes no file (it searched and analysed again for as long, issue 65); test_loop: a
    larger budget goes on."""
    config = replace(_py_config(minutes=1.5), workers=1)
    run = run_sagga(config, tmp_path / "run", clock=MinuteClock())
    state = json.loads((run / "search.json").read_text())
    assert state["stop"] == "time budget" and state["search_seconds"] == 180
    files = {path: path.read_bytes() for path in run.rglob("*") if path.is_file()}

    def no_shards(*args):
        raise AssertionError("a finished search ran a shard")

    with monkeypatch.context() as patched:
        patched.setattr(LocalExecutor, "map", no_shards)
        log = []
        run_sagga(config, run, log=log.append, clock=MinuteClock())
    assert any("stopped by the time budget after generation 0: reading" in line for line in log)
    assert {path: path.read_bytes() for path in run.rglob("*") if path.is_file()} == files


def test_the_analysis_has_budgets_of_work_of_its_own_not_the_searchs_time(tmp_path):
    log = []
    config = _py_config(tag_limit=3, nearby_attempts=2)
    run = run_sagga(config, tmp_path / "run", log=log.append)
    archive = read_results(run).archive
    assert len(archive) > 3 and archive["tag"].notna().sum() == 3
    assert "tagging 3 failures (exploit or robustness; --tag-limit 3, at most 3 s of" in "".join(
        log
    )
    nearby = [json.loads(p.read_text()) for p in sorted((run / "analysis" / "nearby").iterdir())]
    assert nearby and all(0 < n["tried"] <= 2 * len(n["members"]) for n in nearby)
    assert any("2 mutants of each of their 3 central members" in line for line in log)

    # a rerun with other budgets tags only what is new and searches again with the new count
    run_sagga(replace(config, tag_limit=5, nearby_attempts=0), run, log=log.append)
    assert read_results(run).archive["tag"].notna().sum() == 5
    nearby = [json.loads(p.read_text()) for p in sorted((run / "analysis" / "nearby").iterdir())]
    assert all(n["tried"] == 0 and n["found"] is None for n in nearby)
    # the search's time budget spent: the analysis still runs, whole, on its own budgets
    stopped = run_sagga(
        replace(config, minutes=20, generations=5), tmp_path / "stopped", clock=MinuteClock()
    )
    state = json.loads((stopped / "search.json").read_text())
    assert state["stop"] == "time budget" and state["generations"] >= 1
    assert read_results(stopped).archive["tag"].notna().sum() == 3


def test_the_report_reads_files_only_renders_again_and_refuses_an_unfinished_analysis(
    cli, tmp_path, monkeypatch
):
    run = run_sagga(_py_config(), tmp_path / "run")
    write_sagga_report(run)
    first = (run / "summary.json").read_text()
    assert json.loads(first)["clusters"]  # the py model fails most mutants of x

    def no_shards(*args):
        raise AssertionError("the report ran a stage")

    monkeypatch.setattr(LocalExecutor, "map", no_shards)
    (run / "summary.json").unlink()
    code, _, err = cli("report", str(run))
    assert code == 0, err
    assert (run / "summary.json").read_text() == first
    # `integration sagga-report` renders a finished search again, and names what is none
    (run / "report.html").unlink()
    code, _, err = cli("integration", "sagga-report", str(run))
    assert code == 0 and (run / "report.html").exists(), err
    code, _, err = cli("integration", "sagga-report", str(tmp_path / "nothing"))
    assert code == 2 and "not a run directory" in err
    # killed before its nearby successes: the analysis is not finished
    for made in (run / "shards" / "nearby", run / "analysis" / "nearby"):
        shutil.rmtree(made)
    (run / "shards" / "nearby.json").unlink()
    code, _, err = cli("integration", "sagga-report", str(run))
    assert code == 2 and err.count("\n") == 1 and "rerun the search" in err, err


def test_a_generation_scores_from_parts_written_before_deadlines_were_counted(tmp_path):
    from genprobe.studies.search.sagga.generation import ScoreStage, build_fitness, score_shard

    config = replace(_py_config(**SEARCH_ONLY), generations=1)
    run = run_sagga(config, tmp_path / "run")
    parts = run / "generations" / "00001"
    proposed = json.loads((parts / "proposed.json").read_text())
    verified = [json.loads(p.read_text()) for p in sorted(parts.glob("verified-*.json"))]
    del proposed["effort"]["deadlines"]
    for part in verified:
        for row in part["rows"]:
            del row["deadlines"]
    shard = score_shard(1, proposed, verified)
    searched = config.as_search()
    outputs = ScoreStage(searched).run(build_fitness(searched), shard, tmp_path)
    stats = json.loads(outputs["generations/00001.json"])
    assert stats["deadlines"] == {"verification": {"items": 0, "over_budget": 0, "hung": 0}}
    assert outputs["generations/00001.parquet"] == (run / "generations/00001.parquet").read_bytes()


def test_a_failure_search_with_sagga_s_breeder_tags_as_many_failures_as_integration_sagga(
    cli, tmp_path
):
    """--tag-limit left out means SAGGA's 200 with its breeder, as `integration sagga`'s
    default, not every failure."""
    code, _, err = cli(
        "search", "--model", "py:test_sagga:py_answer", "--task", "integration",
        "--breeder", "sagga", "--basis", "x", "--generations", "1", "--generation-size", "6",
        "--population", "3", "--workers", "1", "--nearby-attempts", "0",
        "--out", str(tmp_path / "search"),
    )  # fmt: skip
    assert code == 0, err
    assert "--tag-limit 200," in err


# what a search's result files hold, the seconds each invocation spent aside
SPENT = ("search_seconds", "search_wall_seconds")


def _result_files(run):
    state = json.loads((run / "search.json").read_text())
    return {
        "search.json": {key: value for key, value in state.items() if key not in SPENT},
        "analysis/clusters.json": (run / "analysis" / "clusters.json").read_text(),
        "archive.parquet": read_archive(run).to_dict("list"),
    }


@pytest.mark.parametrize("how", ["flipped", "truncated", "missing"])
@pytest.mark.parametrize(
    "damaged",
    [
        "archive.parquet", "search.json", "analysis/clusters.json", "shards/progress/search.json",
        "shards/progress/archive.json", "shards/cluster/archive.json",
    ],
)  # fmt: skip
def test_a_damaged_result_file_is_named_by_the_report_and_the_rerun_makes_it_again(
    searched, cli, tmp_path, damaged, how
):
    """The archive and search.json (rewritten after each generation) are the driver's shards,
    the clusters the cluster shard's: damaged, or with their record damaged or gone, they are
    named in one line (not "no finished generation yet", not an unfinished analysis), never
    read; the rerun makes them again."""
    run = shutil.copytree(searched, tmp_path / "run")
    damage(run / damaged, how)
    code, _, err = cli("integration", "sagga-report", str(run))
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"genprobe: error: {run / damaged} "), err
    run_sagga(_py_config(**SEARCH_ONLY), run)
    assert _result_files(run) == _result_files(searched)
    code, _, err = cli("integration", "sagga-report", str(run))
    assert code == 0, err
