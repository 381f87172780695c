"""Inputs a sweep's model cannot take (longer than its table of positions): the probe and the
search decode the rest, give those no answer, and count them apart from the model's failures."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from helpers import model_settings

from genprobe.errors import ModelCapabilityError
from genprobe.models.architectures import load_architecture
from genprobe.studies import report_run
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.results import read_results
from genprobe.studies.probe.run import run_probe
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.search import run_search
from genprobe.studies.seed_sensitivity import evaluate_external, run_sweep
from genprobe.tasks.registry import load_task, task_probes
from genprobe.tasks.tokens import encode_inputs
from genprobe.under_test.registry import load_model

OPTIONS = {"width": 16, "heads": 2, "ffn": 32, "decoder_only": True, "positions": "learned"}


@pytest.fixture(scope="module")
def sweep(tiny_sweep, tmp_path_factory):
    """Two seeds of parity whose learned positions hold exactly what the sweep decodes."""
    task = load_task("parity_check", {"test_lengths": "12"})
    config = tiny_sweep(seeds=(1, 2), task=task, model=load_architecture("transformer", OPTIONS))
    table = config.model_shape().max_positions
    config = replace(config, model=replace(config.model, max_positions=table))
    return run_sweep(config, tmp_path_factory.mktemp("run") / "sweep"), table


def _fits(task, src: np.ndarray, table: int) -> np.ndarray:
    """Input, BOS, the longest output and EOS within the table (decoder-only)."""
    length = (src > 0).sum(axis=1)
    return np.array([n + task.max_output_length(int(n)) + 1 for n in length]) <= table


def test_a_probe_leaves_out_the_inputs_the_model_cannot_take(sweep, tmp_path):
    run, table = sweep
    config = ProbeConfig(
        model_settings(f"run:{run}"), families=("longer_by_1", "longer_by_20"), size=16
    )
    out = run_probe(config, tmp_path / "probe")
    report_run(out)
    results = read_results(out)
    task = load_model(f"run:{run}").task
    src = encode_inputs(task.source_vocab, [(None, line.split()) for line in results["input"]], "")
    assert results["readable"].tolist() == _fits(task, src, table).tolist()
    untaken = results[~results["readable"]]
    assert len(untaken) and set(untaken["suite"]) == {"family-longer_by_20"}
    assert (untaken["output"] == "").all() and (untaken["outcome"] == "unparseable").all()

    report = (out / "report.md").read_text()
    header = next(line for line in report.splitlines() if line.startswith("| suite |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    row = next(line for line in report.splitlines() if line.startswith("| family-longer_by_20"))
    cells = dict(zip(columns, (c.strip() for c in row.strip("|").split("|")), strict=True))
    assert int(cells["cannot take"]) == untaken["index"].nunique()
    taken = results[results["readable"] & (results["suite"] == "family-longer_by_20")]
    right = taken.groupby("member")["outcome"].apply(lambda o: (o == "correct").mean())
    assert float(cells["median"]) == pytest.approx(100 * right.median(), abs=0.05)


def test_a_search_never_scores_an_input_the_model_cannot_take(sweep, tmp_path):
    run, table = sweep
    config = SearchConfig(model_settings(f"run:{run}"), generations=3, population=8, base_size=16)
    out = run_search(config, tmp_path / "search")
    report_run(out)
    task = load_model(f"run:{run}").task
    frames = [pd.read_parquet(path) for path in sorted((out / "generations").glob("*.parquet"))]
    evaluated = pd.concat(frames, ignore_index=True)
    src = encode_inputs(task.source_vocab, [(None, line.split()) for line in evaluated["text"]], "")
    assert _fits(task, src, table).all()
    stats = json.loads((out / "search.json").read_text())["stats"]
    untaken = sum(generation["unreadable"] for generation in stats)
    assert untaken > 0  # longer_by_20 mutants
    assert (
        f"{untaken:,} inputs (base inputs and mutants) never scored"
        in (out / "report.md").read_text()
    )


def test_evaluating_a_sweep_on_inputs_it_cannot_take_is_one_line_and_decodes_nothing(
    sweep, cli, tmp_path
):
    run, table = sweep
    task = load_model(f"run:{run}").task
    probes = task_probes(task)
    base = task.generate("validation", 6, seed=0).src
    longer = probes.families()["longer_by_20"].perturb(base, np.random.default_rng(0)).src
    src = np.concatenate([np.pad(base, ((0, 0), (0, longer.shape[1] - base.shape[1]))), longer])
    untaken = np.flatnonzero(~_fits(task, src, table))
    assert len(untaken)
    file = tmp_path / "mine.jsonl"
    file.write_text("".join(json.dumps({"input": line}) + "\n" for line in probes.input_text(src)))
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    code, _, err = cli("evaluate", str(run), "--input", str(file), "--name", "mine")
    assert code == 2 and len(err.strip().splitlines()) == 1
    first = untaken[0]
    longest = max(n for n in range(1, table) if _fits(task, np.ones((1, n)), table)[0])
    assert f"{file}:{first + 1}: input of {(src[first] > 0).sum()} tokens" in err
    assert f"longer than the {longest} the model can take" in err
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


def test_the_api_refuses_inputs_the_model_cannot_take_by_row(sweep):
    run, table = sweep
    src = np.ones((2, table), dtype=np.int64)
    src[0, 5:] = 0
    with pytest.raises(ModelCapabilityError, match=r"cannot take 1 of the 2 inputs.*row 2"):
        evaluate_external(run, src, "mine")


def test_a_probe_counts_the_lines_of_its_input_file_the_model_cannot_take(sweep, tmp_path):
    run, table = sweep
    file = tmp_path / "mine.jsonl"
    file.write_text("".join(json.dumps({"input": " ".join("1" * n)}) + "\n" for n in (3, table)))
    config = ProbeConfig(
        model_settings(f"run:{run}"), families=(), task_suites=False, inputs=(str(file),), size=4
    )
    results = read_results(run_probe(config, tmp_path / "probe"))
    mine = results[results["suite"] == "input-mine"].drop_duplicates("index")
    assert mine["readable"].tolist() == [True, False]


def test_padding_wider_than_the_table_is_not_decoded(sweep):
    run, table = sweep
    model = load_model(f"run:{run}")
    src = model.task.generate("validation", 5, seed=0).src
    wide = np.pad(src, ((0, 0), (0, table)))  # every row fits; the array's width does not
    assert model.readable(wide).all()
    ranked, tight = model.candidates(wide, 2), model.candidates(src, 2)
    assert np.array_equal(ranked.out, tight.out) and np.array_equal(ranked.score, tight.score)
    gold = model.task.solve(src)
    np.testing.assert_array_equal(
        model.score(wide, gold, (gold >= 0).sum(axis=1)),
        model.score(src, gold, (gold >= 0).sum(axis=1)),
    )
