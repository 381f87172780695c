"""`Ranked.outcomes`: candidates judged in rank order, windows of ranks 1, 2-3, 4-7, a member
leaving an input after the window of its first right candidate, gives every outcome up to
there as judging all k does, and never asks the verifier about the rest."""

import numpy as np

from genprobe.tasks.registry import load_task
from genprobe.under_test.sequences import Ranked

# the rank of each (member, input)'s right candidate among k = 5, None: none is right
RIGHT_AT = [[1, 4, None], [2, None, 5]]


def test_candidates_are_judged_in_rank_order_up_to_the_window_of_the_first_right_one(
    monkeypatch,
):
    task = load_task("binary_operation", {"p": 7})
    src = task.generate(task.validation_split, 3, 0).src
    gold = task.solve(src)[:, 0]
    out = np.empty((2, 3, 5, 1), dtype=np.int64)
    for member, ranks in enumerate(RIGHT_AT):
        for row, rank in enumerate(ranks):
            wrong = (gold[row] + 1 + np.arange(5)) % 7  # five distinct wrong answers
            out[member, row, :, 0] = wrong
            if rank is not None:
                out[member, row, rank - 1, 0] = gold[row]
    ones, zeros = np.ones(out.shape[:3], int), np.zeros(out.shape[:3])
    ranked = Ranked(out, ones, ones.astype(bool), zeros, zeros)
    every = task.outcomes(
        np.repeat(np.tile(src, (2, 1)), 5, axis=0), out.reshape(-1, 1), np.ones(30, int),
        np.ones(30, bool),
    ).reshape(2, 3, 5)  # fmt: skip
    asked = []
    judge = type(task).outcomes

    def counted(self, src, out, length, finished):
        asked.append(len(out))
        return judge(self, src, out, length, finished)

    monkeypatch.setattr(type(task), "outcomes", counted)
    outcomes = ranked.outcomes(task, src)
    # window 1: all 6 pairs; ranks 2-3: the 5 not right at 1; ranks 4-5: the 4 still open
    assert asked == [6, 10, 8]
    for member, ranks in enumerate(RIGHT_AT):
        for row, rank in enumerate(ranks):
            judged = {1: 1, 2: 3, 4: 5, 5: 5, None: 5}[rank]  # the end of rank's window
            assert list(outcomes[member, row, :judged]) == list(every[member, row, :judged])
            assert (outcomes[member, row, judged:] == None).all()  # noqa: E711 (elementwise)
            right = [i + 1 for i, o in enumerate(outcomes[member, row]) if o == "correct"]
            assert right == ([] if rank is None else [rank])


def test_judged_walks_only_the_candidates_each_pair_has_and_passes_member_row_and_rank():
    out = np.zeros((2, 2, 4, 1), dtype=np.int64)
    ones = np.ones(out.shape[:3])
    ranked = Ranked(out, ones.astype(int), ones.astype(bool), ones, ones)
    asked = []

    def judge(member, row, rank):
        asked.append(list(zip(member.tolist(), row.tolist(), rank.tolist(), strict=True)))
        return [f"{m}{r}{k}" for m, r, k in zip(member, row, rank, strict=True)]

    def right(judgements):
        return np.array([j == "012" for j in judgements], dtype=bool)  # member 0, row 1, rank 3

    judged = ranked.judged(judge, right, counts=np.array([[3, 4], [0, 1]]))
    # ranks 1, 2-3, 4: member 1's row 0 has no candidate, its row 1 one
    assert asked == [
        [(0, 0, 0), (0, 1, 0), (1, 1, 0)],
        [(0, 0, 1), (0, 0, 2), (0, 1, 1), (0, 1, 2)],
    ]
    assert judged[0, 0].tolist() == ["000", "001", "002", None]
    assert judged[0, 1].tolist() == ["010", "011", "012", None]  # right at rank 3: no rank 4
    assert (judged[1, 0] == None).all() and judged[1, 1, 0] == "110"  # noqa: E711


def test_distinct_samples_are_told_apart_by_a_special_token_drawn_before_the_end():
    # one member and input, four samples of ids [2, 5]: ended, with a special token (-1) drawn
    # before the end, cut at the length limit, and ended again (the one repeat)
    out = np.array([[[[2, 5, -1], [2, 5, -1], [2, 5, -1], [2, 5, -1]]]])
    length = np.array([[[2, 3, 2, 2]]])
    finished = np.array([[[True, True, False, True]]])
    logprob = np.array([[[-1.0, -2.0, -3.0, -1.0]]])
    drawn = Ranked.distinct(out, length, finished, logprob)
    assert drawn.length.tolist() == [[[2, 3, 2, 0]]]
    assert drawn.finished.tolist() == [[[True, True, False, False]]]
    assert drawn.logprob[0, 0, :3].tolist() == [-1.0, -2.0, -3.0]
