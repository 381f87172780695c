"""A failure is a search error when the model scores the right output above its own answer, a
model error when below; an answer that could not be read has no score to weigh, so it is
neither. A task with many right outputs is weighed against the one its suite knows, if any."""

import json

import numpy as np
import pandas as pd
from helpers import model_settings

from genprobe.studies.brittleness import tables
from genprobe.studies.probe.config import ProbeConfig
from genprobe.studies.probe.decode import decoded
from genprobe.studies.probe.suites import build_suites
from genprobe.studies.probe.summary import unresolved
from genprobe.tasks.registry import load_task
from genprobe.tasks.tokens import encode_outputs, input_lines, output_lines
from genprobe.under_test.sequences import Ranked, SequenceModel

TASK = load_task("addition", {"format": "plain", "train_digits": 2, "test_lengths": "3"})


class Answers(SequenceModel):
    """One member answering fixed outputs (`finished` False: cut off) and scoring each input's
    right output (`right`, or the task's gold) `gold` and any other `other`."""

    members = ("seed=1",)
    can_score = True

    def __init__(self, out, finished, gold, other, task=TASK, right=None):
        self.task, self.out, self.finished, self.right = task, out, finished, right
        self.gold, self.other = np.asarray(gold, float), np.asarray(other, float)

    def candidates(self, src, k):
        n = len(src)
        out = self.out[None, :, None, :]
        return Ranked(
            out=out, length=(out >= 0).sum(-1), finished=self.finished[None, :, None],
            score=np.zeros((1, n, 1)), logprob=np.full((1, n, 1), np.nan),
        )  # fmt: skip

    def score(self, src, out, length):
        """`out`: (N, M) for the one member, or (1, N, M)."""
        gold = self.task.solve(src) if self.right is None else self.right
        out = np.asarray(out).reshape(len(src), -1)
        width = max(out.shape[1], gold.shape[1])
        out, gold = (np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=-1)
                     for a in (out, gold))  # fmt: skip
        return np.where((out == gold).all(axis=1), self.gold, self.other)[None]

    def subset(self, members):
        return self


def test_only_a_readable_wrong_answer_is_a_search_or_model_error():
    src = TASK.generate("validation", 4, seed=0).src
    gold = TASK.solve(src)
    wrong = np.where(gold >= 0, (gold + 1) % 10, -1)  # other digits, as long
    out = np.stack([gold[0], wrong[1], wrong[2], wrong[3]])
    finished = np.array([True, True, True, False])
    model = Answers(out, finished, gold=[-1, -1, -5, -1], other=[-9, -3, -2, -3])
    frame = decoded(model, TASK, src, 1)
    assert list(frame["outcome"]) == ["correct", "incorrect", "incorrect", "unparseable"]
    assert list(frame["error"].fillna("-")) == ["-", "search", "model", "-"]


def test_a_task_with_many_right_outputs_is_weighed_against_a_known_one():
    task = load_task("integration")
    examples = task.generate("test", 3, seed=5)
    reference = examples.tgt.copy()
    reference[2] = -1  # none known for the last input
    x, _ = encode_outputs(task.target_vocab, [["x"]] * 3)  # the antiderivative of 1: wrong
    model = Answers(x, np.ones(3, bool), [-1, -5, -1], [-3, -3, -3], task=task, right=reference)
    frame = decoded(model, task, examples.src, 1, reference)
    assert list(frame["outcome"]) == ["incorrect"] * 3
    assert list(frame["error"].fillna("-")) == ["search", "model", "-"]
    assert frame["gold"].isna().all()
    assert list(frame["reference"][:2]) == output_lines(task.target_vocab, reference[:2])
    assert pd.isna(frame["reference"][2]) and np.isnan(frame["gold_logprob"][2])
    assert decoded(model, task, examples.src, 1)["error"].isna().all()  # nothing to weigh


def test_only_suites_of_a_task_with_many_right_outputs_carry_right_ones():
    config = ProbeConfig(
        model_settings("sympy"), task="integration", size=3, families=("divided", "add_ln")
    )
    task = config.load_task()
    suites = build_suites(config, task)
    assert {"base", "family-divided", "family-add_ln", "task-test"} <= {s.key for s in suites}
    for suite in suites:
        lengths = (suite.reference >= 0).sum(axis=1)
        assert (lengths > 0).all(), suite.key
        verdicts = task.outcomes(suite.src, suite.reference, lengths, np.ones(len(lengths), bool))
        assert set(verdicts) == {"correct"}, suite.key
    addition = ProbeConfig(model_settings("sympy"), task="addition", size=3)
    assert all(s.reference is None for s in build_suites(addition, addition.load_task()))


def given(path, task, examples, outputs=None):
    """A file of inputs with an output on every line (the generated ones by default)."""
    inputs = input_lines(task.source_vocab, examples.src)
    outputs = outputs or output_lines(task.target_vocab, examples.tgt)
    rows = (json.dumps({"input": i, "output": o}) for i, o in zip(inputs, outputs, strict=True))
    path.write_text("".join(f"{row}\n" for row in rows))
    return path


def test_a_file_that_gives_right_outputs_gives_its_suite_references(tmp_path):
    task = load_task("integration")
    examples = task.generate("test", 3, seed=2)
    path = given(tmp_path / "mine.jsonl", task, examples)
    config = ProbeConfig(model_settings("sympy"), task="integration", size=2, families=(),
                         task_suites=False, inputs=(str(path),))  # fmt: skip
    suite = build_suites(config, task)[-1]
    assert suite.key == "input-mine"
    expected = output_lines(task.target_vocab, examples.tgt)
    assert output_lines(task.target_vocab, suite.reference) == expected


def test_a_given_output_that_is_not_right_is_one_line_and_writes_nothing(cli, tmp_path):
    task = load_task("integration")
    examples = task.generate("test", 3, seed=2)
    outputs = output_lines(task.target_vocab, examples.tgt)
    path = given(tmp_path / "mine.jsonl", task, examples, [*outputs[:2], "x"])
    out = tmp_path / "probe"
    code, _, err = cli("probe", "--model", "sympy", "--task", "integration", "--size", "2",
                       "--input", str(path), "--out", str(out))  # fmt: skip
    assert code == 2 and "mine.jsonl:3: its output is not a right output" in err, err
    assert len([line for line in err.splitlines() if line.strip()]) == 1
    assert not out.exists()


def test_unresolved_at_k_is_counted_as_the_brittleness_study_counts_it():
    """The probe's result rows and the brittleness study's examples of the same candidates
    give the same Unresolved@k, counted once (`analysis.rates.unresolved`)."""
    nan = float("nan")
    logprobs = [[-1, -2, -3], [-1, -2, -4], [-1, nan, nan], [-1, -2, -3], [-1, -2, -3]]
    first = [None, 2, None, None, 1]  # the fourth has no scored reference, the fifth is right
    gold = [-2.5, -1.5, -5.0, nan, -9.0]
    outcomes = [
        ["correct" if rank == right else "incorrect" if right is None or rank < right else None
         for rank in (1, 2, 3)]
        for right in first
    ]  # fmt: skip
    probe = pd.DataFrame(
        {"member": "seed=1", "suite": "s", "kind": "task", "index": range(5),
         "outcome": [o[0] for o in outcomes], "candidates": [["a", "b", "c"]] * 5,
         "candidate_outcomes": outcomes, "candidate_logprobs": [np.array(r) for r in logprobs],
         "gold_logprob": gold, "output_logprob": [row[0] for row in logprobs]}
    )  # fmt: skip
    ours = unresolved(probe, 3)
    assert list(ours["failures scored"]) == [3, 2]
    assert list(ours["unresolved"]) == [1.0, 0.5]  # at 3, the first's reference beats the third
    brittleness = pd.DataFrame(
        {"suite": "s", "row": range(5), "problem": "p", "readable": True,
         "reference_logprob": [None if np.isnan(g) else g for g in gold],
         "candidates": [[{"logprob": None if np.isnan(v) else v, "outcome": o}
                         for v, o in zip(row, outcome, strict=True)]
                        for row, outcome in zip(logprobs, outcomes, strict=True)]}
    )  # fmt: skip
    theirs = tables.unresolved(tables.judged(brittleness, {"model": {"spec": "m"}}), [1, 3])
    assert list(theirs["failures scored"]) == list(ours["failures scored"])
    assert list(theirs["Unresolved@k"] / 100) == list(ours["unresolved"])
    before = unresolved(probe.drop(columns="candidate_logprobs"), 3)  # a run decoded before
    assert list(before["k"]) == [1] and list(before["unresolved"]) == [1.0]
