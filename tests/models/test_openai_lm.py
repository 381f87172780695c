"""`openai:MODEL@URL` of any token task, against a real OpenAI-compatible server:
`transformers serve` on a tiny GPT-2 (tests/models/conftest.py), behind a proxy that counts
the requests. Greedy answers are the same model's greedy completions run locally."""

import json

import pandas as pd
import pytest

pytest.importorskip("httpx")
pytest.importorskip("transformers")

from genprobe.decoding.sampling import source_seed
from genprobe.errors import ModelCapabilityError
from genprobe.prompts import parse_answers
from genprobe.studies.probe.decode import decoded
from genprobe.studies.probe.results import read_results
from genprobe.studies.seed_sensitivity.results import read_predictions
from genprobe.tasks.integration.task import IntegrationTask
from genprobe.tasks.registry import load_task
from genprobe.tasks.tokens import encode_inputs
from genprobe.under_test.adapters.causal_lm import load_causal_lm
from genprobe.under_test.adapters.integration_tokens import as_sequence_model
from genprobe.under_test.adapters.openai import OpenAIModel, from_spec
from genprobe.under_test.adapters.prompted import PromptedModel, PromptGrid

OPTIONS = {"format": "plain", "train_digits": 2, "test_lengths": "3"}
TASK = load_task("addition", OPTIONS)
TASK_ARGS = [arg for name, value in OPTIONS.items() for arg in ("--task-option", f"{name}={value}")]


@pytest.fixture(autouse=True)
def cache_home(tmp_path, monkeypatch):
    """The default answer cache ($XDG_CACHE_HOME/genprobe/openai) inside the test's folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    return tmp_path / "cache-home" / "genprobe" / "openai"


def model(url, grid=None, **settings):
    return from_spec(f"tiny@{url}", task=TASK, prompts=grid or PromptGrid(formats=2, shots=1))


@pytest.fixture(scope="module")
def src():
    return TASK.generate("validation", 4, seed=0).src


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_greedy_completions_are_the_models_own(served_lm, proxy, src, api):
    folder, _ = served_lm
    lm = from_spec(f"tiny@{proxy.url}", task=TASK, prompts=PromptGrid(formats=2), api=api).lm
    prompts = model(proxy.url).prompts(model(proxy.url).cells[1], src)
    got = lm.complete(prompts, 24, stop=["\n"])
    assert got == load_causal_lm(folder).complete(prompts, 24, stop=["\n"])
    route = "/v1/chat/completions" if api == "chat" else "/v1/completions"
    assert [path for path, _ in proxy.bodies] == [route] * len(prompts)
    bodies = [body for _, body in proxy.bodies]  # in the order they arrived (concurrently)
    asked = [body["messages"] if api == "chat" else body["prompt"] for body in bodies]
    expected = [[{"role": "user", "content": p}] if api == "chat" else p for p in prompts]
    assert sorted(map(json.dumps, asked)) == sorted(map(json.dumps, expected))
    for body in bodies:
        assert body["temperature"] == 0 and body["n"] == 1 and body["stop"] == ["\n"]
        assert body["max_tokens"] == 24 and "seed" not in body


def test_a_members_candidates_are_the_servers_completions_read_strictly(proxy, src):
    prompted = model(proxy.url, PromptGrid(formats=2, shots=1, samples=2, seed=1))
    ranked = prompted.candidates(src, 1)
    assert ranked.out.shape[:3] == (4, len(src), 1)
    sent = [body for _, body in proxy.bodies]
    assert sorted({(b["temperature"], b["seed"]) for b in sent}) == [(1.0, 0), (1.0, 1)]
    for m, cell in enumerate(prompted.cells):
        answers = parse_answers(TASK, src, list(ranked.text[m, :, 0]))
        for i, answer in enumerate(answers):
            assert ranked.finished[m, i, 0] == (answer.ids is not None)
            assert tuple(ranked.out[m, i, 0][: ranked.length[m, i, 0]]) == (answer.ids or ())
        asked = {b["messages"][0]["content"] for b in sent if b["seed"] == cell.sample}
        assert set(prompted.prompts(cell, src)) <= asked


def test_k_candidates_are_n_samples_ranked_as_returned(proxy, src):
    """transformers serve ignores `n`: one answer per request, the other ranks missing."""
    ranked = model(proxy.url, PromptGrid()).candidates(src[:2], 3)
    assert ranked.out.shape[:3] == (1, 2, 3)
    assert {(b["n"], b["temperature"]) for _, b in proxy.bodies} == {(3, 1.0)}
    assert not ranked.finished[:, :, 1:].any() and (ranked.text[:, :, 1:] == "").all()


def test_samples_are_asked_at_the_temperature_each_input_with_seeds_of_its_own(proxy, src):
    prompted = model(proxy.url, PromptGrid(formats=2))
    ranked = prompted.sampled(src[:2], 3, 0.7, seed=4)
    sent = [body for _, body in proxy.bodies]
    assert len(sent) == 2 * 2 * 3 and {(b["temperature"], b["n"]) for b in sent} == {(0.7, 1)}
    for m, cell in enumerate(prompted.cells):
        for i, prompt in enumerate(prompted.prompts(cell, src[:2])):
            ids = src[i][src[i] > 0].tolist()
            asked = [b for b in sent if b["messages"][0]["content"] == prompt]
            assert sorted(b["seed"] for b in asked) == sorted(
                source_seed(4, [j, -1, *ids]) for j in range(3)
            )
            # no log-probabilities: the distinct answers in the order drawn, the first first
            first = next(b for b in asked if b["seed"] == source_seed(4, [0, -1, *ids]))
            assert ranked.text[m, i, 0] == prompted.lm.complete(
                [prompt], first["max_tokens"], method="sample", seed=[first["seed"]],
                temperature=0.7, stop=["\n"],
            )[0][0]  # fmt: skip


def test_it_gives_no_log_probabilities_so_the_model_cannot_score(served_lm, proxy, src):
    prompted = model(proxy.url)
    assert prompted.can_score is False
    with pytest.raises(ModelCapabilityError, match=proxy.url):
        prompted.lm.logprob(["1+2="], ["3"])
    local = PromptedModel(load_causal_lm(served_lm[0]), TASK, PromptGrid())
    assert local.can_score is True


def test_integration_keeps_its_own_model_and_prompt_settings_are_refused_there(proxy):
    assert isinstance(as_sequence_model(f"openai:tiny@{proxy.url}").model, OpenAIModel)
    with pytest.raises(Exception, match="--formats"):
        from_spec(f"tiny@{proxy.url}", prompts=PromptGrid(formats=2))
    asked = as_sequence_model(f"openai:tiny@{proxy.url}", TASK, prompts=PromptGrid(formats=3))
    assert isinstance(asked, PromptedModel) and len(asked.members) == 3


def probe(cli, url, out, *options):
    args = ["probe", "--model", f"openai:tiny@{url}", "--task", "addition", *TASK_ARGS,
            "--families", "operand_swap", "--size", "5", "--formats", "2",
            "--out", str(out), *options]  # fmt: skip
    return cli(*args)


def test_the_probe_study_runs_on_an_endpoint_and_a_rerun_asks_nothing(
    cli, proxy, tmp_path, cache_home
):
    code, _, err = probe(cli, proxy.url, tmp_path / "probe")
    assert code == 0, err
    results = read_results(tmp_path / "probe")
    assert sorted(results["member"].unique()) == ["format=0 draw=0", "format=1 draw=0"]
    assert set(results["outcome"]) <= {"correct", "incorrect", "unparseable"}
    sent = len(proxy.bodies)
    assert sent == results.groupby("member")["input"].nunique().sum()
    # every row's record: its prompt (the member's, for that input) was asked, the cache holds
    # it with the raw answer, which is the row's completion; output and outcome are what was
    # read from it and the verdict
    records = [json.loads(path.read_text()) for path in cache_home.glob("*.json")]
    answered = {r["body"]["messages"][0]["content"]: r["texts"][0] for r in records}
    assert len(records) == sent
    prompted = model(proxy.url, PromptGrid(formats=2))
    for cell in prompted.cells:
        rows = results[results["member"] == cell.label()]
        src = encode_inputs(TASK.source_vocab, [(None, x.split()) for x in rows["input"]], "-")
        assert list(rows["prompt"]) == prompted.prompts(cell, src)
        assert [answered[p] for p in rows["prompt"]] == list(rows["completion"])
        read = parse_answers(TASK, src, list(rows["completion"]))
        assert [" ".join(TASK.target_vocab[i] for i in a.ids or ()) for a in read] == [
            output if finished else "" for output, finished in zip(
                rows["output"], rows["outcome"] != "unparseable", strict=True)
        ]  # fmt: skip
    code, _, err = probe(cli, proxy.url, tmp_path / "again")
    assert code == 0, err
    assert len(proxy.bodies) == sent
    pd.testing.assert_frame_equal(read_results(tmp_path / "again"), results)


def test_the_completions_api_and_a_cache_of_ones_own_from_the_command_line(
    cli, proxy, tmp_path, cache_home
):
    code, _, err = probe(cli, proxy.url, tmp_path / "chat")
    assert code == 0, err
    chat, proxy.most_in_flight = len(proxy.bodies), 0
    cache = tmp_path / "my-cache"
    code, _, err = probe(cli, proxy.url, tmp_path / "completions", "--api", "completions",
                         "--cache-dir", str(cache), "--concurrency", "1")  # fmt: skip
    assert code == 0, err
    asked = proxy.bodies[chat:]
    assert {path for path, _ in asked} == {"/v1/completions"} and len(asked) == chat
    assert proxy.most_in_flight == 1  # --concurrency 1: one request at a time
    # the model's chat template passes the prompt on verbatim: the same greedy answers
    kept = ["member", "suite", "index", "input", "completion", "output", "outcome"]
    by_chat, by_completions = (
        read_results(tmp_path / run)[kept] for run in ("chat", "completions")
    )
    pd.testing.assert_frame_equal(by_completions, by_chat)
    assert len(list(cache.glob("*.json"))) == chat  # its own cache, not the default one
    assert len(list(cache_home.glob("*.json"))) == chat
    stored = json.loads((tmp_path / "completions" / "config.json").read_text())
    assert stored["config"]["api"] == "completions"
    assert "api" not in json.loads((tmp_path / "chat" / "config.json").read_text())["config"]
    # how requests are made is no part of the run: other settings resume it, asking nothing
    code, _, err = probe(cli, proxy.url, tmp_path / "completions", "--api", "completions",
                         "--cache-dir", str(cache), "--concurrency", "3", "--timeout", "5",
                         "--retries", "0")  # fmt: skip
    assert code == 0, err
    assert len(proxy.bodies) == 2 * chat
    assert json.loads((tmp_path / "completions" / "config.json").read_text()) == stored


def test_timeout_and_retries_are_the_endpoints(cli, proxy, tmp_path):
    proxy.answer_first = 0  # every request answered 503
    code, _, err = probe(cli, proxy.url, tmp_path / "a", "--retries", "0")
    assert code == 2 and "\n" not in err.strip(), err
    assert "no answer after 1 attempts (HTTP 503)" in err
    proxy.answer_first, proxy.delay = None, 2.0
    code, _, err = probe(cli, proxy.url, tmp_path / "b", "--timeout", "0.2", "--retries", "0")
    assert code == 2 and "\n" not in err.strip(), err
    assert "no answer after 1 attempts (ReadTimeout" in err


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--api", "chats"], "--api must be one of chat, completions (did you mean chat?)"),
        (["--concurrency", "0"], "--concurrency must be at least 1"),
        (["--timeout", "0"], "--timeout must be a positive number"),
        (["--timeout", "inf"], "--timeout must be a positive number"),
        (["--retries", "-1"], "--retries must be 0 or more"),
    ],
)
def test_bad_endpoint_settings_are_one_line_and_write_nothing(cli, proxy, tmp_path, options, named):
    code, _, err = probe(cli, proxy.url, tmp_path / "probe", *options)
    assert code == 2 and named in err and "Traceback" not in err, err
    assert not (tmp_path / "probe").exists() and not proxy.bodies


def test_the_integration_task_asks_in_a_chat_only(cli, proxy, tmp_path, monkeypatch):
    """Refused before any suite is built (it took minutes, generating integration problems,
    when the endpoint was first asked)."""

    def built(*args):
        raise AssertionError("suites built before the model's settings were checked")

    monkeypatch.setattr("genprobe.studies.probe.run.build_suites", built)
    code, _, err = cli("probe", "--model", f"openai:tiny@{proxy.url}", "--task", "integration",
                       "--api", "completions", "--out", str(tmp_path / "probe"))  # fmt: skip
    assert code == 2 and "--api must be chat for the integration task" in err, err
    assert not (tmp_path / "probe").exists()


@pytest.mark.slow
def test_a_failing_endpoint_is_one_line_and_the_rerun_resumes_from_the_cache(cli, proxy, tmp_path):
    proxy.answer_first = 3  # then 503, retried four times with backoff (15 s)
    code, _, err = probe(cli, proxy.url, tmp_path / "probe")
    assert code == 2 and "Traceback" not in err, err
    message = err.strip()
    assert "\n" not in message and f"{proxy.url}/chat/completions" in message
    assert "HTTP 503" in message
    proxy.answer_first = None
    code, _, err = probe(cli, proxy.url, tmp_path / "probe")
    assert code == 0, err
    bodies = [json.dumps(body, sort_keys=True) for _, body in proxy.bodies]
    twice = [body for body in set(bodies) if bodies.count(body) > 1]
    assert not twice and len(bodies) > 3  # the three answered first were not asked again
    results = read_results(tmp_path / "probe")
    assert results.groupby("member")["input"].nunique().sum() == len(bodies)


def test_evaluate_on_an_endpoint_resumes_a_failed_run_from_the_answer_cache(
    cli, proxy, tmp_path, cache_home
):
    """`genprobe evaluate --model openai:` (a language model in the seed study): a run the
    endpoint failed resumes without asking any request twice, and a rerun asks nothing."""
    run = tmp_path / "run"
    args = ["evaluate", "--model", f"openai:tiny@{proxy.url}", "--task", "addition", *TASK_ARGS,
            "--formats", "2", "--suite-size", "2", "--retries", "0", "--no-report",
            "--out", str(run)]  # fmt: skip
    proxy.answer_first = 3  # the first suite's fourth request is answered 503
    code, _, err = cli(*args)
    assert code == 2 and "\n" not in err.strip() and "HTTP 503" in err, err
    assert len(list(cache_home.glob("*.json"))) == 3
    proxy.answer_first = None
    code, _, err = cli(*args)
    assert code == 0, err
    bodies = [json.dumps(body, sort_keys=True) for _, body in proxy.bodies]
    predictions = read_predictions(run)
    assert len(set(bodies)) == len(bodies) == len(predictions) == 2 * 2 * 2  # each asked once
    assert set(predictions["outcome"]) <= {"correct", "incorrect", "unparseable"}
    code, _, err = cli(*args)
    assert code == 0 and len(proxy.bodies) == len(bodies), err


def wrong(problem: str, k: int) -> list[str]:
    """py: model of the integration task: x, whatever the problem."""
    del problem, k
    return ["x"]


def unreadable(problem: str, k: int) -> list[str]:
    """py: model of the integration task: an answer that does not parse."""
    del problem, k
    return ["sin(x"]


def test_an_integration_models_completion_is_its_answer_as_given_and_it_asks_no_prompt():
    task = IntegrationTask()
    src = task.generate(task.validation_split, 2, seed=0).src
    frame = decoded(as_sequence_model("py:test_openai_lm:wrong", task), task, src, 1)
    assert frame["prompt"].isna().all()
    assert (frame["completion"] == "x").all() and (frame["output"] == "x").all()
    frame = decoded(as_sequence_model("py:test_openai_lm:unreadable", task), task, src, 2)
    assert (frame["completion"] == "sin(x").all() and (frame["output"] == "").all()
    assert (frame["outcome"] == "unparseable").all()
    assert frame["candidates"].tolist() == [["", ""]] * 2  # in the task's tokens: none
    # as given: one answer each, the second candidate missing
    assert frame["candidate_completions"].tolist() == [["sin(x", ""]] * 2
