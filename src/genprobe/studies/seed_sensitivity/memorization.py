"""What each member memorized, per example, in a sweep with subset seeds (`--subsets`): every
member decoded every training example and every suite example, and the run recorded which
training examples each member trained on (`results.read_subsets`).

    memorization  one row per training example: its input and training target, how often
                  the members that trained on it and those that did not reproduce that target
                  and the difference (`memorization`), with intervals; the same for rightness
                  by the task's rule (`rule_*`): a training target in a user's data may not be
                  what the rule makes of the input
    consistency   one row per suite × example (the training split as the suite "train"):
                  accuracy among the members that never trained on it, Jiang et al.'s
                  consistency score at the run's subset fraction, beside the input's length
                  and the task's named features (`feature:<name>`)
    influence     one row per suite example: its nearest training example and that example's
                  influence on it (Feldman & Zhang's estimator), with its interval
    structures    one row per member × suite, where the task declares local structures: its
                  failure on inputs holding a structure none of its training inputs held and on
                  the others, and the AUC of that count as a predictor of failure (Bogin et al.)
    copies        one row per member's wrong answer to a suite's input: the nearest training
                  example it trained on (by the task's `input_distance`: edit distance over
                  input tokens by default), and how far the answer is from that example's
                  target (edit distance over output tokens), and from a random one's (chance)

The estimators are `analysis.memorization`'s; a group of fewer than `min_members` members
leaves an estimate undetermined.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis import memorization as estimate
from genprobe.analysis.judged import ANSWER
from genprobe.analysis.memorization import MIN_MEMBERS
from genprobe.analysis.rates import correct
from genprobe.errors import RunDirError
from genprobe.studies.seed_sensitivity.results import (
    read_predictions,
    read_subsets,
    read_sweep,
    training_pairs,
)
from genprobe.tasks.task import Task

TRAIN_SUITE = "train"  # the suite name of the training split's predictions
FEATURE = "feature:"  # the prefix of the consistency table's input-feature columns
NEAR = 1  # edits within which a wrong answer is near a training target
CHANCE_SEED = 0  # of the training examples drawn for the chance baseline of copying


def memorization_tables(
    run: str | Path, judged: pd.DataFrame | None = None, min_members: int = MIN_MEMBERS
) -> dict[str, pd.DataFrame]:
    """The run's memorization and consistency tables (`judged`: its predictions, if read);
    `structures` too where the task declares local structures.

    Raises:
        RunDirError: the run's members did not train on subsets (`--subsets`), or its
            training or decoding has not finished.
        DamagedFileError: a file they are read from is not the one the run recorded.
    """
    seeds, trained = read_subsets(run)
    judged = read_predictions(run) if judged is None else judged
    answers = judged[judged["role"] == ANSWER]
    suites = {
        suite: _by_member(run, rows, seeds, rows["index"].nunique())
        for suite, rows in answers.groupby("suite", sort=False)
    }
    if TRAIN_SUITE not in suites:
        raise RunDirError(f"{run}: the training split was not decoded: rerun the sweep")
    pairs = training_pairs(run)
    task = read_sweep(run).task
    train = suites[TRAIN_SUITE]
    targets = np.array([target for _, target in pairs], dtype=object)
    agrees = train["output"].to_numpy().reshape(len(seeds), -1) == targets
    right = _right(train, len(seeds))
    memorized = pd.concat(
        [
            pd.DataFrame({"index": np.arange(len(targets)), "input": _inputs(train, len(seeds)),
                          "target": targets}),
            estimate.memorization(agrees, trained, min_members),
            estimate.memorization(right, trained, min_members).add_prefix("rule_"),
        ],
        axis=1,
    )  # fmt: skip
    held_out = {suite: rows for suite, rows in suites.items() if suite != TRAIN_SUITE}
    nearest = _nearest(held_out, trained, pairs, len(seeds), task)
    tables = {
        "memorization": memorized,
        "consistency": pd.concat(
            [
                _consistency(rows, len(seeds), trained, min_members, task)
                for rows in suites.values()
            ],
            ignore_index=True,
        ),
        "influence": influence(held_out, len(seeds), trained, pairs, nearest, min_members),
        "copies": copies(held_out, seeds, trained, pairs, nearest),
    }
    unseen = structures(task, suites, seeds, trained, pairs)
    return tables | ({"structures": unseen} if unseen is not None else {})


def structures(
    task: Task,
    suites: dict[str, pd.DataFrame],
    seeds: np.ndarray,
    trained: np.ndarray,
    pairs: list[tuple[str, str]],
) -> pd.DataFrame | None:
    """One row per member × suite: how its failures go with the inputs' local structures
    that none of its training inputs held (`analysis.structures.failure_by_unseen`; of the
    training split, over the examples it did not train on); None where the task declares no
    local structures."""
    from genprobe.analysis.structures import failure_by_unseen, unseen_counts

    train = [task.local_structures(text.split()) for text, _ in pairs]
    if not any(train):
        return None
    frames = []
    for suite, rows in suites.items():
        queries = [task.local_structures(text.split()) for text in _inputs(rows, len(seeds))]
        unseen = unseen_counts(train, trained, queries)
        asked = ~trained if suite == TRAIN_SUITE else None
        table = failure_by_unseen(unseen, _right(rows, len(seeds)), asked)
        frames.append(pd.concat([pd.DataFrame({"seed": seeds, "suite": suite}), table], axis=1))
    return pd.concat(frames, ignore_index=True)


Nearest = dict[str, tuple[np.ndarray, np.ndarray]]


def _nearest(
    suites: dict[str, pd.DataFrame],
    trained: np.ndarray,
    pairs: list[tuple[str, str]],
    members: int,
    task: Task,
) -> Nearest:
    """Per suite, the nearest training example to each of its inputs (by its index, the
    input's position in its suite) by the task's distance over input tokens, and that
    distance: (S + 1, Q) each, row 0 among all training examples, row 1 + k among member k's."""
    from genprobe.analysis.nearest import nearest

    inputs = [text.split() for text, _ in pairs]
    allowed = np.vstack([np.ones((1, trained.shape[1]), dtype=bool), trained])
    distance = task.input_distance()
    return {
        suite: nearest([text.split() for text in _inputs(rows, members)], inputs, allowed, distance)
        for suite, rows in suites.items()
    }


def influence(
    suites: dict[str, pd.DataFrame],
    members: int,
    trained: np.ndarray,
    pairs: list[tuple[str, str]],
    nearest: Nearest,
    min_members: int = MIN_MEMBERS,
) -> pd.DataFrame:
    """One row per suite example: its nearest training example (of all, `nearest`'s row 0)
    and that example's influence on it (Feldman & Zhang's estimator: accuracy on it among the
    members that trained on the training example, less among those that did not), with its
    interval."""
    texts_of = np.array([text for text, _ in pairs], dtype=object)
    frames = []
    for suite, rows in suites.items():
        right = _right(rows, members)
        examples = right.shape[1]
        index, gap = (found[0] for found in nearest[suite])
        table = estimate.influence(right, trained, (index, np.arange(examples)), min_members)
        frames.append(pd.concat([
            pd.DataFrame({
                "suite": suite, "index": np.arange(examples), "input": _inputs(rows, members),
                "input_distance": gap, "nearest_input": texts_of[index],
            }),
            table.drop(columns="test").rename(columns={"train": "nearest"}),
        ], axis=1))  # fmt: skip
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def copies(
    suites: dict[str, pd.DataFrame],
    seeds: np.ndarray,
    trained: np.ndarray,
    pairs: list[tuple[str, str]],
    nearest: Nearest,
) -> pd.DataFrame:
    """One row per wrong answer to a suite's input: the training example nearest to the input
    among those the member trained on (`nearest`'s rows 1 + k), its target, and the edit
    distance of the answer to it (`copied`: none; `near`: at most `NEAR`); beside it, the same
    distance to the target of a training example the member trained on drawn at random
    (`chance_*`, seeded), what copying would look like by chance."""
    from genprobe.analysis.nearest import distances

    targets = _objects([target.split() for _, target in pairs])
    texts = np.array(pairs, dtype=object).reshape(-1, 2)
    member_of = {int(seed): k for k, seed in enumerate(seeds)}
    # each member's training examples (its subset's size is every member's), to draw from
    size = int(trained[0].sum())
    subset = np.argsort(~trained, axis=1, kind="stable")[:, :size]
    rng = np.random.default_rng(CHANCE_SEED)
    frames = []
    for suite, rows in suites.items():
        wrong = rows[~rows["right"]]
        member, at = wrong["seed"].map(member_of).to_numpy(), wrong["index"].to_numpy()
        index, gap = (found[1 + member, at] for found in nearest[suite])
        drawn = subset[member, rng.integers(0, size, len(member))]
        output = [text.split() for text in wrong["output"]]
        frames.append(pd.DataFrame({
            "seed": wrong["seed"].to_numpy(), "suite": suite, "index": at,
            "input": wrong["input"].to_numpy(), "output": wrong["output"].to_numpy(),
            "nearest": index, "input_distance": gap,
            "nearest_input": texts[index, 0], "nearest_target": texts[index, 1],
            "output_distance": distances(output, list(targets[index])),
            "chance_distance": distances(output, list(targets[drawn])),
        }))  # fmt: skip
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if table.empty:
        return table
    return table.assign(
        copied=table["output_distance"] == 0,
        near=table["output_distance"] <= NEAR,
        chance_copied=table["chance_distance"] == 0,
        chance_near=table["chance_distance"] <= NEAR,
    )


def _by_member(
    run: str | Path, rows: pd.DataFrame, seeds: np.ndarray, examples: int
) -> pd.DataFrame:
    """A suite's answers, one per member × example, sorted member-major in `seeds`' order,
    with `right` (the task's verifier accepted the answer).

    Raises:
        RunDirError: the suite lacks a member's answers (it was decoded before the run grew).
    """
    rows = rows.assign(right=correct(rows).to_numpy()).sort_values(["seed", "index"])
    if len(rows) != len(seeds) * examples or not np.array_equal(rows["seed"].unique(), seeds):
        suite = rows["suite"].iat[0] if len(rows) else TRAIN_SUITE
        raise RunDirError(
            f"{run}: suite {suite} has {len(rows):,} answers, not one from each of the "
            f"{len(seeds)} members to each of its {examples:,} examples: rerun the sweep"
        )
    return rows


def _right(rows: pd.DataFrame, members: int) -> np.ndarray:
    """(S, M) a suite's `right` (as `_by_member` sorts it), member by example."""
    return rows["right"].to_numpy().reshape(members, -1)


def _inputs(rows: pd.DataFrame, members: int) -> np.ndarray:
    """(M,) a suite's inputs by index (as `_by_member` sorts it)."""
    return rows["input"].to_numpy()[: len(rows) // members]


def _consistency(
    rows: pd.DataFrame, members: int, trained: np.ndarray, min_members: int, task: Task
) -> pd.DataFrame:
    suite = rows["suite"].iat[0]
    right = _right(rows, members)
    table = estimate.consistency(right, trained if suite == TRAIN_SUITE else None, min_members)
    inputs = _inputs(rows, members)
    head = pd.DataFrame({
        "suite": suite, "index": np.arange(right.shape[1]), "input": inputs,
        "length": rows["length"].to_numpy()[: right.shape[1]],
    })  # fmt: skip
    return pd.concat([head, _features(task, inputs), table], axis=1)


def _features(task: Task, inputs: np.ndarray) -> pd.DataFrame:
    """The task's named input features (`Probes.features`, those beside its per-token counts
    and its length), one `feature:<name>` column each."""
    from genprobe.tasks.registry import task_probes
    from genprobe.tasks.tokens import encode_inputs

    src = encode_inputs(task.source_vocab, [(None, text.split()) for text in inputs], "inputs")
    named = task_probes(task).features(src)
    return pd.DataFrame({
        f"{FEATURE}{name}": values for name, values in named.items()
        if name != "length" and not name.startswith("count ")
    })  # fmt: skip


def _objects(items: list[list[str]]) -> np.ndarray:
    """A 1-d array of token lists (numpy would make lists of one length a 2-d array)."""
    return pd.Series(items, dtype=object).to_numpy()
