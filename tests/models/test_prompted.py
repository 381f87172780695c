"""A causal language model under test of a token task (`hf:PATH`): members are prompt formats ×
few-shot draws × samples, candidates are the model's completions read strictly, and the probe
study runs on it. On a tiny random GPT-2 the test saves (tests/helpers.py)."""

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("transformers")

from helpers import offline_hub_cache, save_in_hub_cache, save_tiny_gpt2

from genprobe.decoding.sampling import source_seed
from genprobe.errors import ConfigError
from genprobe.prompts import draw_shots, format_family, parse_answers, render, text_form
from genprobe.studies.probe.decode import decoded
from genprobe.studies.probe.results import read_large_search, read_results
from genprobe.tasks.registry import load_task
from genprobe.under_test.adapters.causal_lm import load_causal_lm
from genprobe.under_test.adapters.prompted import PromptedModel, PromptGrid

TASK = load_task("addition", {"format": "plain", "train_digits": 2, "test_lengths": "3"})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), positions=512)


@pytest.fixture(scope="module")
def model(saved):
    grid = PromptGrid(formats=2, shots=2, shot_draws=2, seed=3)
    return PromptedModel(load_causal_lm(saved), TASK, grid)


@pytest.fixture(scope="module")
def src():
    return TASK.generate("validation", 6, seed=0).src


def test_members_are_the_grid_of_formats_draws_and_samples(saved):
    lm = load_causal_lm(saved)
    greedy = PromptedModel(lm, TASK, PromptGrid(formats=2, shots=1, shot_draws=3))
    assert greedy.members == tuple(f"format={f} draw={d}" for f in range(2) for d in range(3))
    sampled = PromptedModel(lm, TASK, PromptGrid(formats=1, samples=2))
    assert sampled.members == ("format=0 draw=0 sample=0", "format=0 draw=0 sample=1")
    assert greedy.subset([4, 1]).members == ("format=1 draw=1", "format=0 draw=1")
    with pytest.raises(ConfigError, match="shot-draws"):
        PromptGrid(shot_draws=2)


def test_a_members_candidates_are_its_completions_read_strictly(model, src):
    ranked = model.candidates(src, 1)
    assert ranked.out.shape[:3] == (4, len(src), 1)
    for m, cell in enumerate(model.cells):
        prompts = model.prompts(cell, src)
        completions = model.lm.complete(prompts, model._token_limit(src), stop=["\n"])
        answers = parse_answers(TASK, src, [texts[0] for texts in completions])
        for i, answer in enumerate(answers):
            assert ranked.finished[m, i, 0] == (answer.ids is not None)
            got = ranked.out[m, i, 0][: ranked.length[m, i, 0]]
            assert tuple(got) == (answer.ids or ())
    # the members ask differently: other formats, other examples
    first, last = (model.prompts(cell, src)[0] for cell in (model.cells[0], model.cells[-1]))
    assert first != last


def test_each_row_records_the_prompt_its_member_rendered(model, src):
    """The prompt column is `render` of the member's format and its draw's shots."""
    results = decoded(model, TASK, src, 1)
    formats = format_family(2, seed=3)
    for cell in model.cells:
        rows = results[results["member"] == cell.label()]
        shots = draw_shots(TASK, 2, cell.draw, 3, src)
        rendered = [render(TASK, formats[cell.format], shots[i], src[i]) for i in range(len(src))]
        assert list(rows["prompt"]) == rendered
    assert results["prompt"].nunique() == len(results)  # every member asks every input its way


def test_beam_gives_k_ranked_candidates_per_member(model, src):
    ranked = model.candidates(src[:2], 3)
    assert ranked.out.shape[:3] == (4, 2, 3)
    parsed = ranked.finished
    rank = np.broadcast_to(np.arange(3.0), parsed.shape)
    assert np.array_equal(ranked.score[parsed], -rank[parsed])
    assert np.isneginf(ranked.score[~parsed]).all()
    prompts = model.prompts(model.cells[0], src[:2])
    beams = model.lm.complete(
        prompts, model._token_limit(src[:2]), method="beam", beams=3, stop=["\n"]
    )
    for i, texts in enumerate(beams):
        answers = parse_answers(TASK, np.repeat(src[i : i + 1], 3, axis=0), texts)
        for r, answer in enumerate(answers):
            assert parsed[0, i, r] == (answer.ids is not None)
            assert tuple(ranked.out[0, i, r][: ranked.length[0, i, r]]) == (answer.ids or ())
        # each candidate weighed as written after its prompt
        expected = model.lm.logprob([prompts[i]] * len(texts), texts)
        np.testing.assert_allclose(ranked.logprob[0, i, : len(texts)], expected, rtol=1e-5)


def test_score_is_the_log_probability_of_the_answer_after_its_prompt(model, src):
    gold = TASK.solve(src)
    length = (gold >= 0).sum(axis=1)
    scores = model.score(src, gold, length)
    assert scores.shape == (4, len(src)) and np.isfinite(scores).all()
    cell = model.cells[1]
    lead = model.formats[cell.format].lead
    answers = [lead + text for text in text_form(TASK).outputs(gold)]
    expected = model.lm.logprob(model.prompts(cell, src), answers)
    np.testing.assert_allclose(scores[1], expected)


def test_samples_are_the_distinct_completions_drawn_ranked_by_log_probability(model, src):
    ranked = model.sampled(src, 5, 1.5, seed=2)
    assert ranked.out.shape[:3] == (4, len(src), 5)
    limit, varied = model._token_limit(src), False
    for m, cell in enumerate(model.cells):
        prompts = model.prompts(cell, src)
        for i in range(len(src)):
            drawn = []  # sample j of input i, drawn alone from its seed
            for j in range(5):
                seed = source_seed(2, [j, -1, *src[i][src[i] > 0].tolist()])
                [[text]] = model.lm.complete(
                    prompts[i : i + 1], limit, method="sample", seed=[seed], temperature=1.5,
                    stop=["\n"],
                )  # fmt: skip
                drawn.append(text)
            present = ranked.present[m, i]
            assert set(ranked.text[m, i][present]) <= set(drawn)
            answers = parse_answers(TASK, np.repeat(src[i : i + 1], 5, axis=0), drawn)
            distinct = {a.ids for a in answers}
            assert present.sum() == len(distinct)  # unparseable ones are one candidate
            kept = ranked.logprob[m, i][present]
            assert (np.diff(kept) <= 0).all()  # the most probable first
            expected = model.lm.logprob(
                [prompts[i]] * present.sum(), list(ranked.text[m, i][present])
            )
            np.testing.assert_allclose(kept, expected, rtol=1e-5)
            varied |= len(set(drawn)) > 1
    assert varied  # at T = 1.5 an input's samples differ (the tiny model's are unparseable)


def test_an_inputs_samples_do_not_depend_on_its_batch(model, src):
    together = model.sampled(src, 3, 1.0, seed=0)
    alone = model.sampled(src[2:3], 3, 1.0, seed=0)
    assert (together.text[:, 2] == alone.text[:, 0]).all()
    other = model.sampled(src, 3, 1.0, seed=1)
    assert (other.text != together.text).any()


@pytest.mark.parametrize("where", ["folder", "hub"])
def test_the_probe_study_runs_on_a_language_model(where, cli, saved, tmp_path, monkeypatch):
    spec = f"hf:{saved}"
    if where == "hub":  # a hub name, from the Hugging Face cache, is recorded as given
        save_in_hub_cache(saved, offline_hub_cache(monkeypatch, tmp_path / "hub"), "org/tiny")
        spec = "hf:org/tiny"
    out = tmp_path / "probe"
    args = ["probe", "--model", spec, "--task", "addition",
            "--task-option", "format=plain", "--task-option", "train_digits=2",
            "--task-option", "test_lengths=3", "--families", "operand_swap", "--no-task-suites",
            "--size", "5", "--formats", "2", "--shots", "1", "--out", str(out)]  # fmt: skip
    code, _, err = cli(*args)
    assert code == 0, err
    config = json.loads((out / "config.json").read_text())["config"]
    assert config["formats"] == 2 and config["shots"] == 1 and config["model"] == spec
    results = pd.read_parquet(out / "results" / "family-operand_swap.parquet")
    assert sorted(results["member"].unique()) == ["format=0 draw=0", "format=1 draw=0"]
    assert set(results["outcome"]) <= {"correct", "incorrect", "unparseable"}
    assert results["prompt"].notna().all()
    code, _, err = cli("export", str(out), "--out", str(tmp_path / "tables"))
    assert code == 0, err
    exported = pd.read_csv(tmp_path / "tables" / "results.csv", keep_default_na=False)
    assert exported["prompt"].tolist() == read_results(out)["prompt"].tolist()


def test_a_probe_samples_a_language_models_candidates(cli, saved, tmp_path):
    out = tmp_path / "probe"
    args = ["probe", "--model", f"hf:{saved}", "--task", "addition",
            "--task-option", "format=plain", "--task-option", "train_digits=2",
            "--task-option", "test_lengths=3", "--families", "operand_swap", "--no-task-suites",
            "--size", "3", "--k", "3", "--temperature", "1.5", "--search-budget", "4",
            "--search-temperatures", "1", "--out", str(out)]  # fmt: skip
    code, _, err = cli(*args)
    assert code == 0, err
    base = read_results(out).query("suite == 'base'")
    model = PromptedModel(load_causal_lm(saved), TASK, PromptGrid())
    src = TASK.generate("validation", 3, seed=0).src
    drawn = model.sampled(src, 3, 1.5, seed=0)
    assert [list(c) for c in base["candidate_completions"]] == drawn.text[0].tolist()
    searched = read_large_search(out).query("suite == 'base' and decoding == 'T=1'")
    again = model.sampled(src, 4, 1.0, seed=0)
    member, row, rank = np.nonzero(again.present)
    assert list(searched["answer"]) == list(again.text[member, row, rank])
    assert (
        "the distinct outputs among 3 samples at temperature 1.5" in (out / "report.md").read_text()
    )


def test_prompt_settings_and_a_missing_task_are_one_line_errors(cli, saved, tmp_path):
    code, _, err = cli("probe", "--model", f"hf:{saved}", "--out", str(tmp_path / "a"))
    assert code == 2 and "--task" in err and "Traceback" not in err
    code, _, err = cli("probe", "--model", f"hf:{tmp_path / 'none'}", "--task", "addition",
                       "--out", str(tmp_path / "b"))  # fmt: skip
    assert code == 2 and "folder" in err
    code, _, err = cli("probe", "--model", "hf:./none", "--task", "addition",
                       "--out", str(tmp_path / "b"))  # fmt: skip
    assert code == 2 and "folder of a saved model that exists, or a Hugging Face hub name" in err
    assert not (tmp_path / "b").exists()
    code, _, err = cli("probe", "--model", "sympy", "--task", "integration", "--formats", "3",
                       "--out", str(tmp_path / "c"))  # fmt: skip
    assert code == 2 and "--formats" in err and "language model" in err


def test_a_completions_limit_counts_the_models_own_tokens(tmp_path):
    """SCAN's longest answer is 626 characters but fewer tokens of a tokenizer that learned its
    actions: the limit is in those tokens, so a model of 512 positions is asked, not refused."""
    scan = load_task("scan", {"split": "length"})
    form = text_form(scan)
    examples = scan.generate("length_train", 2000, seed=0)
    pairs = zip(form.inputs(examples.src), form.outputs(examples.tgt), strict=True)
    lines = [f"{x} {y}" for x, y in pairs]
    lm = load_causal_lm(save_tiny_gpt2(tmp_path, positions=512, corpus=lines))
    src = scan.generate("length_test", 4, seed=0).src
    model = PromptedModel(lm, scan, PromptGrid())
    longest = scan.max_output_length(int((src > 0).sum(axis=1).max()))
    widest = max(lm.count_tokens(form.separator + word) for word in scan.target_vocab)
    assert model._token_limit(src) == longest * widest + 2
    assert longest * max(map(len, scan.target_vocab)) + 2 > 512
    ranked = model.candidates(src, 1)
    assert ranked.out.shape[:3] == (1, 4, 1)


@pytest.mark.parametrize(
    ("model", "options", "named"),
    [
        ("hf", ["--api", "completions"], "--api must be left out"),
        ("hf", ["--api", "completions", "--cache-dir", "CACHE", "--concurrency", "8"],
         "--api/--cache-dir/--concurrency must be left out"),
        ("hf", ["--timeout", "60", "--retries", "4"], "--timeout/--retries must be left out"),
        ("sympy", ["--cache-dir", "CACHE"], "--cache-dir must be left out"),
    ],
)  # fmt: skip
def test_endpoint_settings_for_a_model_that_is_no_endpoint_are_refused(
    cli, saved, tmp_path, model, options, named
):
    spec, task = (f"hf:{saved}", "addition") if model == "hf" else ("sympy", "integration")
    cache = tmp_path / "cache"
    options = [str(cache) if option == "CACHE" else option for option in options]
    out = tmp_path / "probe"
    code, _, err = cli("probe", "--model", spec, "--task", task, "--out", str(out), *options)
    assert code == 2 and named in err and "not an OpenAI-compatible endpoint" in err, err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists() and not cache.exists()


def test_a_hub_name_the_cache_lacks_is_one_line_and_writes_nothing(cli, tmp_path, monkeypatch):
    offline_hub_cache(monkeypatch, tmp_path / "hub")
    out = tmp_path / "probe"
    code, _, err = cli("probe", "--model", "hf:org/absent", "--task", "addition",
                       "--out", str(out))  # fmt: skip
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "org/absent: not a folder" in err and "HF_HUB_OFFLINE is set" in err
    assert not out.exists()


def test_an_input_whose_prompt_leaves_no_room_for_its_answer_is_not_asked(saved, tmp_path):
    grid = PromptGrid(formats=2, shots=2, shot_draws=1, seed=3)
    wide = PromptedModel(load_causal_lm(saved), TASK, grid)
    parts = [TASK.generate(split, 4, seed=0).src for split in ("validation", "length_3")]
    src = np.concatenate([np.pad(p, ((0, 0), (0, 8 - p.shape[1]))) for p in parts])
    # the tokens every member's prompt of each input takes, and the room its answer needs
    tokens = np.max([[len(ids) for ids in wide.lm.tokenizer(wide.prompts(cell, src))["input_ids"]]
                     for cell in wide.cells], axis=0)  # fmt: skip
    room = np.array([wide._token_limit(src[i : i + 1]) for i in range(len(src))])
    need = tokens + room
    positions = int(need.max()) - 1  # the longest inputs do not fit, the others do
    narrow = PromptedModel(
        load_causal_lm(save_tiny_gpt2(tmp_path, positions=positions)), TASK, grid
    )
    readable = narrow.readable(src)
    assert readable.tolist() == (need <= positions).tolist()
    assert readable.any() and not readable.all()

    ranked = narrow.candidates(src, 1)  # asked only what fits, not refused
    alone = narrow.candidates(src[readable], 1)
    assert np.array_equal(ranked.out[:, readable], alone.out)
    assert (ranked.prompt[:, readable] == alone.prompt).all()
    assert not ranked.finished[:, ~readable].any()
    assert (ranked.prompt[:, ~readable] == None).all()  # noqa: E711 (an object array)
    gold = TASK.solve(src)
    scores = narrow.score(src, gold, (gold >= 0).sum(axis=1))
    assert np.isnan(scores[:, ~readable]).all() and not np.isnan(scores[:, readable]).any()


def test_a_probe_lists_a_suite_the_model_can_take_no_input_of(cli, tmp_path):
    """A GPT-2 of 64 positions and prompts of three shots: 5-digit sums do not fit at all."""
    lm = save_tiny_gpt2(tmp_path / "lm", positions=64)
    out = tmp_path / "probe"
    args = ["probe", "--model", f"hf:{lm}", "--task", "addition", "--task-option",
            "train_digits=2", "--task-option", "test_lengths=2,5", "--families", "operand_swap",
            "--size", "6", "--formats", "2", "--shots", "3", "--out", str(out)]  # fmt: skip
    code, _, err = cli(*args)
    assert code == 0, err
    results = read_results(out)
    untaken = results[~results["readable"]]
    assert set(untaken["suite"]) == {"task-length_5"} and untaken["prompt"].isna().all()
    report = (out / "report.md").read_text()
    header = next(line for line in report.splitlines() if line.startswith("| suite |"))
    row = next(line for line in report.splitlines() if line.startswith("| task-length_5 "))
    cells = dict(zip(header.split("|"), row.split("|"), strict=True))
    assert cells[" cannot take "].strip() == cells[" inputs "].strip() == "6"
    assert cells[" median "].strip() == "–"
