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
                  consistency score at the run's subset fraction
    influence     one row per suite example: its nearest training example and that example's
                  influence on it (Feldman & Zhang's estimator), with its interval
    copies        one row per member's wrong answer to a suite's input: the nearest training
                  example it trained on (edit distance over input tokens), and how far the
                  answer is from that example's target, and from a random one's (chance)

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
    training_pairs,
)

TRAIN_SUITE = "train"  # the suite name of the training split's predictions
NEAR = 1  # edits within which a wrong answer is near a training target
CHANCE_SEED = 0  # of the training examples drawn for the chance baseline of copying


def memorization_tables(
    run: str | Path, judged: pd.DataFrame | None = None, min_members: int = MIN_MEMBERS
) -> dict[str, pd.DataFrame]:
    """The run's memorization and consistency tables (`judged`: its predictions, if read).

    Raises:
        RunDirError: the run's members did not train on subsets (`--subsets`), or its
            training or decoding has not finished.
        DamagedFileError: a file they are read from is not the one the run recorded.
    """
    seeds, trained = read_subsets(run)
    judged = read_predictions(run) if judged is None else judged
    answers = judged[judged["role"] == ANSWER]
    train = _by_member(run, answers[answers["suite"] == TRAIN_SUITE], seeds, trained.shape[1])
    pairs = training_pairs(run)
    targets = np.array([target for _, target in pairs], dtype=object)
    agrees = train["output"].to_numpy().reshape(len(seeds), -1) == targets
    right = train["right"].to_numpy().reshape(len(seeds), -1)
    inputs = train["input"].to_numpy()[: trained.shape[1]]
    memorized = pd.concat(
        [
            pd.DataFrame({"index": np.arange(len(targets)), "input": inputs, "target": targets}),
            estimate.memorization(agrees, trained, min_members),
            estimate.memorization(right, trained, min_members).add_prefix("rule_"),
        ],
        axis=1,
    )
    suites = [
        _consistency(run, answers[answers["suite"] == suite], seeds, trained, min_members)
        for suite in answers["suite"].unique()
    ]
    held_out = answers[answers["suite"] != TRAIN_SUITE]
    nearest = _nearest(held_out, trained, pairs)
    return {
        "memorization": memorized,
        "consistency": pd.concat(suites, ignore_index=True),
        "influence": influence(run, held_out, seeds, trained, pairs, nearest, min_members),
        "copies": copies(held_out, seeds, trained, pairs, nearest),
    }


Nearest = dict[str, tuple[np.ndarray, np.ndarray]]


def _nearest(answers: pd.DataFrame, trained: np.ndarray, pairs: list[tuple[str, str]]) -> Nearest:
    """Per suite, the nearest training example to each of its inputs (by its index, the
    input's position in its suite) by edit distance over input tokens, and that distance:
    (S + 1, Q) each, row 0 among all training examples, row 1 + k among member k's."""
    from genprobe.analysis.nearest import nearest

    inputs = [text.split() for text, _ in pairs]
    allowed = np.vstack([np.ones((1, trained.shape[1]), dtype=bool), trained])
    found = {}
    for suite, rows in answers.groupby("suite", sort=False):
        texts = rows.drop_duplicates("index").sort_values("index")["input"]
        found[suite] = nearest([text.split() for text in texts], inputs, allowed)
    return found


def influence(
    run: str | Path,
    answers: pd.DataFrame,
    seeds: np.ndarray,
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
    for suite, rows in answers.groupby("suite", sort=False):
        examples = rows["index"].nunique()
        rows = _by_member(run, rows, seeds, examples)
        right = rows["right"].to_numpy().reshape(len(seeds), examples)
        index, gap = (found[0] for found in nearest[suite])
        table = estimate.influence(right, trained, (index, np.arange(examples)), min_members)
        frames.append(pd.concat([
            pd.DataFrame({
                "suite": suite, "index": np.arange(examples),
                "input": rows["input"].to_numpy()[:examples], "input_distance": gap,
                "nearest_input": texts_of[index],
            }),
            table.drop(columns="test").rename(columns={"train": "nearest"}),
        ], axis=1))  # fmt: skip
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def copies(
    answers: pd.DataFrame,
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
    for suite, rows in answers.groupby("suite", sort=False):
        wrong = rows[~correct(rows)]
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


def _consistency(
    run: str | Path, rows: pd.DataFrame, seeds: np.ndarray, trained: np.ndarray, min_members: int
) -> pd.DataFrame:
    suite, examples = rows["suite"].iat[0], rows["index"].nunique()
    rows = _by_member(run, rows, seeds, examples)
    right = rows["right"].to_numpy().reshape(len(seeds), examples)
    table = estimate.consistency(right, trained if suite == TRAIN_SUITE else None, min_members)
    head = pd.DataFrame({
        "suite": suite, "index": np.arange(examples), "input": rows["input"].to_numpy()[:examples],
        "length": rows["length"].to_numpy()[:examples],
    })  # fmt: skip
    return pd.concat([head, table], axis=1)


def _objects(items: list[list[str]]) -> np.ndarray:
    """A 1-d array of token lists (numpy would make lists of one length a 2-d array)."""
    return pd.Series(items, dtype=object).to_numpy()
