"""A failure is a search error when the model scores the right output above its own answer, a
model error when below; an answer that could not be read has no score to weigh, so it is
neither."""

import numpy as np

from genprobe.models.sequences import Ranked, SequenceModel
from genprobe.studies.probe.decode import decoded
from genprobe.tasks.registry import load_task

TASK = load_task("addition", {"format": "plain", "train_digits": 2, "test_lengths": "3"})


class Answers(SequenceModel):
    """One member answering fixed outputs (`finished` False: cut off) and scoring each input's
    right output `gold` and any other `other`."""

    members = ("seed=1",)
    can_score = True

    def __init__(self, out, finished, gold, other):
        self.task, self.out, self.finished = TASK, out, finished
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
        out, gold = np.asarray(out).reshape(len(src), -1), TASK.solve(src)
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
