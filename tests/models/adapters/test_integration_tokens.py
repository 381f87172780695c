"""The integration adapter asked about integrands, as the brittleness and SAGGA studies ask it
(`IntegrationSequenceModel`): answers from memory, scores of given answers, the model's own
deadline hits and its release. (As a model of the token task: tests/tasks/integration.)"""

import math

import pytest
from helpers import model_settings

from genprobe.errors import ModelCapabilityError
from genprobe.runs.pool import DeadlineCounts
from genprobe.tasks.integration import parse_infix
from genprobe.tasks.integration.task import IntegrationTask
from genprobe.under_test.adapters.integration_model import Candidate, Model
from genprobe.under_test.adapters.integration_tokens import (
    IntegrationSequenceModel,
    load_integration_model,
)

P, Q = parse_infix("2*x"), parse_infix("3*x")


class Counting(Model):
    """Answers each problem with itself; scores an answer by minus its printed length."""

    name = "counting"
    can_score = True

    def __init__(self):
        self.asked, self.scored, self.closed = [], [], False

    def candidates(self, problems, k):
        self.asked += [str(p) for p in problems]
        return [[Candidate(p, 0.0)] for p in problems]

    def score(self, pairs):
        self.scored += [(str(p), str(a)) for p, a in pairs]
        return [-float(len(str(a))) for _, a in pairs]

    def deadline_counts(self):
        return DeadlineCounts(items=len(self.asked))

    def close(self):
        self.closed = True


def test_a_model_that_remembers_asks_each_problem_once():
    inner = Counting()
    model = IntegrationSequenceModel(inner, IntegrationTask(), "counting", remember=True)
    first = model.answers([P, Q, None, P], 1)
    again = model.answers([Q], 1)
    assert inner.asked == ["2*x", "3*x"]
    assert (model.queries, model.hits) == (2, 2)
    assert list(first.answers[0, :, 0]) == [P, Q, None, P] and again.answers[0, 0, 0] == Q
    model.answers([Q], 2)  # another k is another question
    assert inner.asked == ["2*x", "3*x", "3*x"] and model.queries == 3


def test_a_model_that_does_not_remember_is_asked_every_time():
    inner = Counting()
    model = IntegrationSequenceModel(inner, IntegrationTask(), "counting")
    model.answers([P, P], 1)
    model.answers([P, None], 1)
    assert inner.asked == ["2*x"] * 3 and (model.queries, model.hits) == (3, 0)


def test_given_answers_are_scored_by_the_model_nan_where_there_is_none():
    inner = Counting()
    model = IntegrationSequenceModel(inner, IntegrationTask(), "counting")
    scores = model.score_answers([P, None, Q], [Q, P, None])
    assert scores.shape == (1, 3) and scores[0, 0] == -3.0
    assert math.isnan(scores[0, 1]) and math.isnan(scores[0, 2])
    assert inner.scored == [("2*x", "3*x")]  # only the pair with both


def test_a_model_without_log_probabilities_refuses_to_score_answers():
    model = load_integration_model(model_settings("py:test_model_adapters:answer"))
    assert not model.can_score
    with pytest.raises(ModelCapabilityError, match="py:test_model_adapters:answer"):
        model.score_answers([P], [Q])


def test_the_models_deadline_hits_and_its_release_pass_through():
    inner = Counting()
    model = IntegrationSequenceModel(inner, IntegrationTask(), "counting")
    model.answers([P, None, Q], 1)
    assert model.deadline_counts() == DeadlineCounts(items=2)
    model.close()
    assert inner.closed
