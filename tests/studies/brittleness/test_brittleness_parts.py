"""The parts of a brittleness run, without the command: ranked verification, Fail@k and
Unresolved@k, the shard of problems a model cannot read, the spreading of `--k 1 10 50`, the
config's identity and its presets."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import sympy as sp
import torch
from helpers import model_settings, ranked_problems

from genprobe.analysis.judged import from_brittleness
from genprobe.analysis.render import Text
from genprobe.cli import _spread_values
from genprobe.errors import ConfigError
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig
from genprobe.studies.brittleness import paper, report, tables
from genprobe.studies.brittleness.compare import Beside
from genprobe.studies.brittleness.config import DEFAULT_SUITES, PRESETS, BrittlenessConfig
from genprobe.studies.probe.decode import decoded
from genprobe.tasks.integration import X, from_sympy, to_prefix
from genprobe.tasks.integration.suites.sampling import DEFAULT_SEED
from genprobe.tasks.integration.task import IntegrationTask
from genprobe.tasks.tokens import encode_inputs
from genprobe.tasks.verdict import Outcome, TimeoutPolicy, Verdict
from genprobe.under_test.adapters.integration_tokens import IntegrationSequenceModel
from genprobe.under_test.adapters.seq2seq import DecodingConfig, Seq2SeqModel
from genprobe.verification.ranked import verify_ranked, windows


def test_rank_windows_double_and_cover_every_rank():
    assert windows(1) == [(0, 1)]
    assert windows(10) == [(0, 1), (1, 3), (3, 7), (7, 10)]
    assert windows(50)[-1] == (31, 50)


def test_verification_stops_after_the_window_of_the_first_correct_candidate():
    asked = []

    def verify_many(pairs):
        asked.extend(pairs)
        outcome = {"right": Outcome.CORRECT, "slow": Outcome.TIMEOUT}
        return [Verdict(outcome.get(answer, Outcome.INCORRECT), "fake") for _, answer in pairs]

    candidates = [
        ["wrong", "right", "wrong", "wrong", "wrong"],  # rank 2: its window (2-3) and no more
        ["slow", "wrong", "wrong", "right", "wrong"],
        ["wrong"] * 5,
    ]
    results = verify_ranked(["p0", "p1", "p2"], candidates, verify_many, k_max=5)
    assert [len(r.verdicts) for r in results] == [3, 5, 5]
    assert [r.first_correct for r in results] == [2, 4, None]
    assert [r.first_generous for r in results] == [2, 1, None]
    assert results[1].first_pass(TimeoutPolicy.GENEROUS) == 1
    assert len(asked) == 13


def test_fewer_candidates_than_k_are_verified_window_by_window_problem_by_problem():
    asked = []

    def verify_many(pairs):
        asked.append(" ".join(f"{problem}{answer}" for problem, answer in pairs))
        return [
            Verdict(Outcome.CORRECT if a == "R" else Outcome.INCORRECT, "fake") for _, a in pairs
        ]

    candidates = [["w", "w"], [], ["w", "R", "w", "w"], ["w", "w", "w", "w", "w", "w"]]
    results = verify_ranked(["a", "b", "c", "d"], candidates, verify_many, k_max=5)
    assert asked == ["aw cw dw", "aw cR cw dw dw", "dw dw"]  # ranks 1, 2-3, 4-5
    assert [len(r.verdicts) for r in results] == [2, 0, 3, 5]
    assert [r.first_correct for r in results] == [None, None, 2, None]


WRONG = "incorrect"


def _examples():
    """Suite a: right at 1; right at 5 after a timeout at 2; a timeout at 1, never right; one
    the model cannot read. Suite b: right at 2 after a timeout, then a candidate never
    verified."""
    return pd.DataFrame(
        {
            "suite": ["a", "a", "a", "a", "b"],
            "row": range(5),
            "problem": [f"p{i}" for i in range(5)],
            "reference": None,
            "set": ["s", "s", "t", "t", "u"],
            "readable": [True, True, True, False, True],
            "n_candidates": [1, 5, 2, 0, 3],
            "reference_logprob": [None, -1.0, -9.0, None, -0.5],
            "candidates": [
                [{"logprob": -0.1, "outcome": "correct"}],
                [
                    {"logprob": -2.0, "outcome": WRONG},
                    {"logprob": -3.0, "outcome": "timeout"},
                    {"logprob": -3.5, "outcome": WRONG},
                    {"logprob": -3.6, "outcome": WRONG},
                    {"logprob": -3.7, "outcome": "correct"},
                ],
                [
                    {"logprob": -0.2, "outcome": "timeout"},
                    {"logprob": -4.0, "outcome": WRONG},
                ],
                [],
                [
                    {"logprob": -1.0, "outcome": "timeout"},
                    {"logprob": -0.7, "outcome": "correct"},
                    {"logprob": -0.9, "outcome": None},
                ],
            ],
        }
    )


def _problems():
    return from_brittleness(_examples(), "model")


def test_fail_at_k_leaves_unreadable_problems_out_and_follows_the_policy():
    strict = tables.fail_table(_problems(), ["suite"], [1, 5])
    assert strict.to_dict("records") == [
        {"suite": "a", "n": 3, "Fail@5": pytest.approx(100 / 3), "Fail@1": pytest.approx(200 / 3)},
        {"suite": "b", "n": 1, "Fail@5": 0.0, "Fail@1": 100.0},
    ]
    generous = tables.fail_table(_problems(), ["suite"], [1], policy="generous")
    assert list(generous["Fail@1"]) == [pytest.approx(100 / 3), 0.0]
    counts = tables.outcome_counts(_examples()).set_index("suite")
    assert counts.loc["a", "unreadable"] == 1 and counts.loc["a", "timeout"] == 2
    assert counts.loc["b", "candidates"] == 3
    assert counts.loc["b", "verified"] == 2  # the candidate never verified is not counted


def test_unresolved_compares_the_reference_with_the_kth_candidate():
    frame = tables.unresolved(_problems(), [1, 2]).set_index(["suite", "k"])
    # k = 1: a's failures scored are rows 1 (ref -1.0 vs top -2.0) and 2 (-9.0 vs -0.2)
    assert frame.loc[("a", 1), "failures scored"] == 2
    assert frame.loc[("a", 1), "Unresolved@k"] == 50.0
    # k = 2: row 1's 2nd candidate -3.0 < -1.0 (resolvable), row 2's -4.0 > -9.0 (unresolved)
    assert frame.loc[("a", 2), "Unresolved@k"] == 50.0
    assert frame.loc[("b", 1), "Unresolved@k"] == 0.0  # reference -0.5 above the top -1.0


def test_a_problem_longer_than_the_position_table_is_unreadable_not_failed():
    torch.manual_seed(0)
    config = TransformerConfig(dim=16, n_enc_layers=1, n_dec_layers=1, n_heads=2, max_positions=12)
    model = Seq2SeqModel(Seq2SeqTransformer(config), DecodingConfig(beam_size=2, max_len=8))
    short, long = from_sympy(2 * X), from_sympy(sum(sp.sin(k * X) for k in range(1, 6)))
    assert model.readable([short, long]) == [True, False]
    task = IntegrationTask()
    asked = IntegrationSequenceModel(model, task, "small")
    src = encode_inputs(task.source_vocab, [(0, to_prefix(short)), (1, to_prefix(long))], "s")
    reference = np.full((2, 4), -1)  # x**2, then none known
    reference[0] = [task.target_vocab.index(t) for t in to_prefix(from_sympy(X**2))]
    rows = decoded(asked, task, src, 2, reference, answer="first")
    assert list(rows["readable"]) == [True, False]
    assert rows["gold_logprob"][0] < 0 and np.isnan(rows["gold_logprob"][1])
    assert model.score([(long, short)]) == [float("-inf")]


def test_several_values_after_one_option_become_repeated_options():
    assert _spread_values(["x", "--k", "1", "10", "50", "--out", "r", "--suites", "a", "b"]) == [
        "x", "--k", "1", "--k", "10", "--k", "50", "--out", "r", "--suites", "a", "--suites", "b",
    ]  # fmt: skip
    assert _spread_values(["--beam", "3", "--k", "4"]) == ["--beam", "3", "--k", "4"]


def test_a_long_integrand_is_cut_with_an_ellipsis_in_the_report():
    long = " ".join(to_prefix(from_sympy(sum(X**i for i in range(1, 40)))))
    shown = report._infix(long)
    assert len(shown) == report.INTEGRAND_WIDTH and shown.endswith("…")
    assert report._infix("add x x") == "2*x"
    assert report._infix("x )", parsed=False) == "(unparseable) x )"


def test_fail_at_k_columns_ascend_whatever_order_k_is_given_in():
    assert tables.fail_columns([50, 1, 10, 10]) == ["Fail@1", "Fail@10", "Fail@50"]
    frame = tables.fail_table(ranked_problems([3], suite="a"), ["suite"], [10, 2])
    assert list(frame.columns) == ["suite", "n", "Fail@2", "Fail@10"]


def test_solved_by_stays_out_of_the_identity_at_its_default():
    """A run made before `--solved-by` existed keeps its config hash, so it still resumes."""
    model = model_settings("sympy")
    paper_run = BrittlenessConfig(model=model, suites=("robustness-simple",)).validated()
    assert "solved_by" not in paper_run.identity()
    code_run = replace(paper_run, solved_by="code").validated()
    assert code_run.identity()["solved_by"] == "code"
    assert BrittlenessConfig.from_identity(code_run.identity()) == code_run
    assert BrittlenessConfig.from_identity(paper_run.identity()) == paper_run
    with pytest.raises(ConfigError, match="--solved-by"):
        replace(paper_run, solved_by="top-5").validated()


def test_train_max_ops_stays_out_of_the_identity_unless_known():
    """Unknown (15 assumed), a run keeps the hash it had before the setting existed."""
    unknown = BrittlenessConfig(model_settings("sympy"), ("operator-extrapolation",)).validated()
    assert "train_max_ops" not in unknown.identity() and unknown.max_ops == 15
    known = replace(unknown, train_max_ops=8).validated()
    assert known.identity()["train_max_ops"] == 8 and known.max_ops == 8
    assert BrittlenessConfig.from_identity(known.identity()) == known
    with pytest.raises(ConfigError, match="--train-max-ops"):
        replace(unknown, train_max_ops=0).validated()


def test_train_data_is_in_the_identity_by_its_bytes_unless_not_known(tmp_path):
    data = tmp_path / "bwd.txt.train"
    data.write_text("1|sub Y' cos x\tsin x\n")
    unknown = BrittlenessConfig(model_settings("sympy"), ("robustness-simple",)).validated()
    assert "train_data" not in unknown.identity()
    known = replace(unknown, train_data=str(data)).validated()
    assert known.identity()["train_data"]["path"] == str(data)
    assert BrittlenessConfig.from_identity(known.identity()) == known
    before = known.identity()["train_data"]["sha256"]
    data.write_text("1|sub Y' sin x\tcos x\n")
    assert known.identity()["train_data"]["sha256"] != before


def test_a_preset_gives_the_sizes_and_k_and_the_settings_given_lie_over_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = model_settings("sympy")
    quick = BrittlenessConfig.from_preset("quick", None, model)
    assert (quick.sizes, quick.ks) == (PRESETS["quick"].sizes, PRESETS["quick"].ks)
    assert "in-distribution" not in quick.suites  # no validation file, no suite made of one
    given = BrittlenessConfig.from_preset(
        "paper", 3, model, ks=(50, 1, 1), validation="./valid.txt", seed=7
    )
    assert given.sizes == dict.fromkeys(PRESETS["paper"].sizes, 3)
    # a file as the command line always recorded it, so the run's hash stays
    assert (given.ks, given.seed, given.validation) == ((1, 50), 7, "valid.txt")
    assert given.suites == DEFAULT_SUITES
    with pytest.raises(ConfigError, match="--preset"):
        BrittlenessConfig.from_preset("huge", None, model)


def test_the_seed_is_the_suites_default_seed():
    """Written out in the config, which the command line reads at start-up without the suites."""
    assert BrittlenessConfig(model_settings("sympy")).seed == DEFAULT_SEED


@pytest.mark.parametrize(("per_template", "warned"), [(3, True), (100, False)])
def test_small_rows_beside_the_papers_numbers_get_a_warning(per_template, warned):
    templates = [t for t in paper.TABLE2_SIMPLE for _ in range(per_template)]
    ranks = [1 if i % 2 else None for i in range(len(templates))]
    problems = ranked_problems(ranks, template=templates)
    beside = Beside(ks=(1, 10), policy="generous", beam=10, search="a beam of 10")
    blocks = report._beside_paper(
        problems, ["template"], beside, paper.TABLE2_SIMPLE, paper_n=paper.TABLE2_SIMPLE_N
    )
    warnings = [b.text for b in blocks if isinstance(b, Text) and b.text.startswith("Warning")]
    assert warnings == (
        [
            "Warning: 7 of 7 rows hold fewer than 100 problems (as few as 3) beside the paper's "
            "1,000 per row: one problem moves such a row's Fail@k by 33 points, too coarse to "
            "set beside the paper's. `--preset paper` runs the paper's sizes."
        ]
        if warned
        else []
    )
