"""`bundled:NAME`: the models shipped inside the package load, are the ones their cards
describe, and are as strong on their own test problems as the cards say."""

from genprobe.decoding.config import DecodingConfig
from genprobe.models.bundled import bundled_card, bundled_checkpoint, bundled_names
from genprobe.runs.provenance import file_digest
from genprobe.studies.brittleness.training import trained_on
from genprobe.tasks.integration import Verifier, VerifierConfig
from genprobe.tasks.integration.reading import read_expression
from genprobe.under_test.registry import ModelSpec, load_model

NAME = "integration-cpu"


def test_the_cpu_model_is_shipped_and_is_the_checkpoint_its_card_names():
    assert NAME in bundled_names()
    card = bundled_card(NAME)
    digest = file_digest(bundled_checkpoint(NAME))
    assert card["model_sha256"] == digest == ModelSpec.read(f"bundled:{NAME}").fingerprint()
    training = trained_on(ModelSpec.read(f"bundled:{NAME}"))
    assert training.max_ops == card["trained_on"]["max_ops"] == 6 and training.data is None
    assert "card" in training.sources["max_ops"] and "recipe" in training.sources["data"]


def test_the_cpu_model_solves_its_cards_test_problems_greedily():
    """The card's sample of the model's held-out test split: greedy decoding, verified, solves
    at least as many as the card records (a re-trained or damaged model would not)."""
    card = bundled_card(NAME)
    examples = card["examples"]
    problems = [read_expression(e["problem"], canonical=True) for e in examples]
    model = load_model(f"bundled:{NAME}", decoding=DecodingConfig(method="greedy", max_len=64))
    found = model.candidates(problems, k=1)
    with Verifier(VerifierConfig(workers=1)) as verifier:
        verdicts = verifier.verify_many(
            (problem, candidates[0].answer)
            for problem, candidates in zip(problems, found, strict=True)
            if candidates
        )
    solved = sum(verdict.passed for verdict in verdicts)
    assert len(examples) == 40 and solved >= card["examples_solved_greedy"] >= 30


def test_an_unknown_bundled_name_is_one_line_naming_the_shipped_ones(cli, tmp_path):
    problems = tmp_path / "p.txt"
    problems.write_text("2*x\n")
    code, _, err = cli(
        "integration", "evaluate", "--model", "bundled:nope", "--data", str(problems)
    )
    assert code == 2 and err.count("\n") == 1 and NAME in err and "bundled:nope" in err
