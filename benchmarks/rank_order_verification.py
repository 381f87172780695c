"""Judging a model's k candidates in rank order (`Ranked.outcomes`: windows of ranks 1, 2-3,
4-7, ..., an input leaving after the window of its first right candidate) against judging all
k in one call of the task's verifier, in one run.

On the shipped integration model, whose verifier is SymPy's (F' - f against f): its beam's top
k for N problems of the integration task's validation split, at the model's training
`max_ops` (in distribution: mostly right at rank 1) and at the task's default 15 (outside it:
mostly wrong at every rank). The beam is decoded once per set; only the judging is timed, the
two sides alternating, repeat by repeat. Prints per set the median seconds of each side, the
ratio and the candidates judged, and checks that both give every first right rank alike.

    python benchmarks/rank_order_verification.py [--n 100] [--k 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from genprobe.tasks.registry import load_task
from genprobe.tasks.task import Task
from genprobe.tasks.verdict import Outcome
from genprobe.under_test.adapters.integration_tokens import as_sequence_model
from genprobe.under_test.sequences import Ranked

MODEL = "bundled:integration-cpu"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for max_ops in (6, 15):
        task = load_task("integration", {"max_ops": max_ops})
        src = task.generate(task.validation_split, args.n, 0).src
        ranked = as_sequence_model(MODEL, task).candidates(src, args.k)
        sides = {"every": _every, "in_order": lambda t, s, r: r.outcomes(t, s)}
        times: dict[str, list[float]] = {name: [] for name in sides}
        found = {}
        for _ in range(args.repeats):
            for name, judge in sides.items():
                start = time.perf_counter()
                found[name] = judge(task, src, ranked)
                times[name].append(time.perf_counter() - start)
        ranks = {name: _first_right(outcomes) for name, outcomes in found.items()}
        assert (ranks["every"] == ranks["in_order"]).all(), "first right ranks differ"
        judged = int(np.not_equal(found["in_order"], None).sum())
        a, b = (statistics.median(times[name]) for name in sides)
        print(
            f"max_ops={max_ops}: {src.shape[0]} problems, k={args.k}, right at rank 1: "
            f"{(ranks['every'] == 1).mean():.0%}; judging every candidate: median {a:.2f} s "
            f"({found['every'].size} candidates); in rank order: median {b:.2f} s ({judged} "
            f"candidates); every/in-order = {a / b:.2f}x"
        )


def _every(task: Task, src: np.ndarray, ranked: Ranked) -> np.ndarray:
    """(S, N, k) every candidate's outcome, in one call of the task's verifier."""
    members, n, k, width = ranked.out.shape
    outcomes = task.outcomes(
        np.repeat(np.tile(src, (members, 1)), k, axis=0),
        ranked.out.reshape(-1, width),
        ranked.length.reshape(-1),
        ranked.finished.reshape(-1),
    )
    return np.asarray(outcomes, dtype=object).reshape(members, n, k)


def _first_right(outcomes: np.ndarray) -> np.ndarray:
    """(S, N) 1-based rank of the first right candidate, 0 where none is."""
    right = outcomes == Outcome.CORRECT.value
    return np.where(right.any(axis=2), right.argmax(axis=2) + 1, 0)


if __name__ == "__main__":
    main()
