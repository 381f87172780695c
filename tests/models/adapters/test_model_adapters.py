"""Every adapter behind the `Model` contract: seq2seq checkpoints, SymPy, Python callables,
and the registry that names them."""

import pytest
import torch

from genprobe.errors import ConfigError, GenprobeError, ModelCapabilityError, UnknownModelError
from genprobe.models.checkpoints import save_transformer
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig
from genprobe.tasks.integration import Expr, parse_infix, verify
from genprobe.tasks.integration.reading import read_expression
from genprobe.tasks.integration.vocab import EOS_INDEX, TOKEN_TO_ID
from genprobe.under_test.adapters.integration_model import Candidate
from genprobe.under_test.adapters.seq2seq import DecodingConfig
from genprobe.under_test.registry import MODELS, ModelSpec, load_model


def read(value):
    """As the CLI reads problems: infix in L&C's canonical shape."""
    return read_expression(value, canonical=True)


PROBLEMS = [read("2*x"), read("cos(x)"), read("sub Y' mul INT+ 3 pow x INT+ 2")]


def answer(problem: str, k: int):
    """A 'model' for the py: adapter: right for 2*x, a ranked pair of guesses otherwise."""
    if problem == "2*x":
        return "The antiderivative is $x^2 + C$."
    return [("sin(x)", -0.5), ("x^^", -1.0)][:k]


def test_infix_problems_take_lample_and_chartons_canonical_shape():
    assert read("x*2 + 1") == read("add INT+ 1 mul INT+ 2 x")
    assert read(["sub", "Y'", "cos", "x"]) == Expr.apply("cos", Expr.var())


@pytest.mark.parametrize("method", ["beam", "greedy", "sample"])
def test_checkpoint_model_ranks_k_candidates_per_problem(checkpoint, method):
    decoding = DecodingConfig(method=method, beam_size=4, max_len=12, batch_size=2)
    model = load_model(f"ckpt:{checkpoint}", decoding=decoding)
    found = model.candidates(PROBLEMS, k=3)
    assert len(found) == len(PROBLEMS)
    for candidates in found:
        assert 1 <= len(candidates) <= (1 if method == "greedy" else 3)
        scores = [c.score for c in candidates]
        assert scores == sorted(scores, reverse=True)
        assert all(c.logprob is not None and c.logprob <= 0 for c in candidates)


@pytest.fixture(scope="module")
def parseable_checkpoint(tmp_path_factory):
    """Random weights whose output bias favours ending, then `x` and `pi`: the beam finds
    one-token answers that parse, beside the empty one."""
    torch.manual_seed(0)
    model = Seq2SeqTransformer(TransformerConfig(dim=16, n_enc_layers=1, n_dec_layers=1, n_heads=2))
    with torch.no_grad():
        bias = model.decoder.proj.bias
        bias.fill_(-10.0)
        for token, logit in ((EOS_INDEX, 8.0), (TOKEN_TO_ID["x"], 7.0), (TOKEN_TO_ID["pi"], 6.0)):
            bias[token] = logit
    path = tmp_path_factory.mktemp("ckpt") / "parseable.pt"
    save_transformer(path, model, {})
    return path


def test_checkpoint_model_scores_match_its_beam(parseable_checkpoint):
    decoding = DecodingConfig(beam_size=3, max_len=12)
    model = load_model(f"ckpt:{parseable_checkpoint}", decoding=decoding)
    found = model.candidates(PROBLEMS, k=3)
    pairs = [
        (problem, c.answer)
        for problem, candidates in zip(PROBLEMS, found, strict=True)
        for c in candidates
        if isinstance(c.answer, Expr)
    ]
    expected = [c.logprob for candidates in found for c in candidates if isinstance(c.answer, Expr)]
    assert len(pairs) >= len(PROBLEMS)
    assert model.score(pairs) == pytest.approx(expected, rel=1e-4, abs=1e-4)
    # any pair can be scored, found or not
    scores = model.score([(PROBLEMS[0], parse_infix("x^2")), (PROBLEMS[1], parse_infix("sin(x)"))])
    assert all(s < 0 for s in scores)


@pytest.mark.parametrize("method", ["beam", "sample"])
def test_batch_size_does_not_change_candidates(checkpoint, method):
    def model(batch_size):
        decoding = DecodingConfig(method, beam_size=3, max_len=10, batch_size=batch_size)
        return load_model(f"ckpt:{checkpoint}", decoding=decoding)

    one, many = model(1), model(8)
    for a, b in zip(one.candidates(PROBLEMS, 2), many.candidates(PROBLEMS, 2), strict=True):
        assert [c.answer for c in a] == [c.answer for c in b]
        assert [c.score for c in a] == pytest.approx([c.score for c in b], abs=1e-5)


def test_sympy_model_integrates_under_a_deadline():
    model = load_model("sympy", deadline=20.0, workers=1)
    found = model.candidates([read("2*x"), read("cos(x)*exp(x)")], k=5)
    assert [len(c) for c in found] == [1, 1]
    assert verify("2*x", found[0][0].answer).passed
    assert verify("cos(x)*exp(x)", found[1][0].answer).passed
    with pytest.raises(ModelCapabilityError):
        model.score([(PROBLEMS[0], PROBLEMS[0])])


def test_sympy_model_gives_nothing_when_out_of_time():
    model = load_model("sympy", deadline=0.05, workers=1)
    hard = read("sqrt(tan(x)) * exp(sin(x)^2) / (1 + ln(x)^3)")
    assert model.candidates([hard], k=1) == [[]]


def test_python_callable_answers_are_parsed_safely():
    model = load_model("py:test_model_adapters:answer")
    found = model.candidates([read("2*x"), read("cos(x)")], k=2)
    assert found[0][0].answer == read("x^2")
    assert found[0][0].score == 0.0
    assert [c.score for c in found[1]] == [-0.5, -1.0]
    assert found[1][0].answer == read("sin(x)")
    assert found[1][1] == Candidate("x^^", -1.0)  # unparseable: kept raw for the verifier


def test_unknown_spec_suggests_near_matches_and_lists_all():
    with pytest.raises(UnknownModelError, match=r"Did you mean: sympy\?.*ckpt:PATH"):
        load_model("simpy")
    with pytest.raises(ConfigError):
        load_model("ckpt:")
    with pytest.raises(GenprobeError, match="cannot import 'no_such_module_xyz'"):
        load_model("py:no_such_module_xyz:f")
    assert {"ckpt", "lc", "sympy", "openai", "py"} <= MODELS.keys()


def test_a_spec_made_absolute_names_its_local_path_from_anywhere(tmp_path, monkeypatch):
    """What a worker in another directory (a Ray node) is sent: paths absolute, names not."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()
    assert str(ModelSpec.read("ckpt:runs/bwd").absolute()) == f"ckpt:{tmp_path}/runs/bwd"
    assert str(ModelSpec.read("lc:fwd.pth").absolute()) == f"lc:{tmp_path}/fwd.pth"
    assert str(ModelSpec.read("run:runs/scan@2-4").absolute()) == f"run:{tmp_path}/runs/scan@2,3,4"
    assert str(ModelSpec.read("hf:m").absolute()) == f"hf:{tmp_path}/m"
    for spec in ("hf:gpt2", "bundled:integration-cpu", "sympy", "py:mod:f", "openai:m@http://h"):
        assert str(ModelSpec.read(spec).absolute()) == spec


def test_a_spec_is_parsed_once_into_what_it_names(tmp_path):
    """A spec's text is read into its kind, argument, what it names and the seeds it chooses;
    its text is what it was given, and what it names is checked only when given by a user."""
    spec = ModelSpec.read("run:runs/scan@2-4")
    assert (spec.prefix, spec.target, spec.seeds) == ("run", "runs/scan", (2, 3, 4))
    assert str(spec) == "run:runs/scan@2-4" and spec.kind is MODELS["run"]
    assert str(ModelSpec.read("sympy")) == "sympy"
    with pytest.raises(ConfigError, match="--against must be run:RUN_DIR@SEEDS"):
        ModelSpec.read("run:runs/scan@two", "--against")
    with pytest.raises(ConfigError, match="--model must be a run directory that exists"):
        ModelSpec.parse("run:runs/scan@2-4")
    with pytest.raises(ConfigError, match="--model must be sympy \\(no argument\\)"):
        ModelSpec.read("sympy:fast")


def test_the_task_a_model_answers_is_known_without_loading_it():
    from genprobe.tasks.integration.task import IntegrationTask
    from genprobe.tasks.registry import load_task

    scan = load_task("scan")
    assert isinstance(ModelSpec.read("sympy").task_of(None), IntegrationTask)
    assert ModelSpec.read("openai:m@http://h").task_of(scan) is scan  # a language model
    with pytest.raises(ConfigError, match="--task must be integration for the integration"):
        ModelSpec.read("ckpt:m.pt").task_of(scan)
    with pytest.raises(ConfigError, match="--task must be a task to ask the language model"):
        ModelSpec.read("hf:m").task_of(None)
