"""A seed sweep's results as tidy tables (`genprobe.studies.tables` reads any run's):

    examples  one row per example × member × suite: the member's output and whether the task's
              verifier accepts it (`valid`), the input's length, per-token accuracy where the
              task scores it
    scores    one row per member × suite: examples, accuracy (and mean per-token accuracy)
    members   one row per member: epochs trained, the kept epoch, its validation accuracy,
              what ended training, whether it stalled
    curves    one row per member × validation: validation accuracy after each epoch
    judged    the examples as judged outputs (`analysis.judged`, docs/results-schema.md): one
              row per member × suite × example, the member by its label (`seed=3`)

A sweep trained over time (`--steps`) has instead:

    members   one row per member: when it memorized, grokked, the delay, its outcome
              (`analysis.grokking.members`)
    curves    one row per member × evaluation × role: accuracy, loss, weight norm

A member is a seed; in a grid of init × data-order seeds every table also names its `init`
and `order` seeds. Rows run by seed, then suite in the task's order.

A language model's run (`language_model.py`) has examples, scores and judged, its examples with
the record of each request (`outcome`, `prompt`, `completion`), and:

    members   one row per member: its number (`seed`) and label (`format=1 draw=0`)

every table naming each member's `format`, few-shot `draw` and sampling seed (`sample`, empty
where it decodes greedily).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from genprobe.analysis import rates
from genprobe.analysis.grokking import THRESHOLD as GROKKING
from genprobe.analysis.grokking import members as grokking_members
from genprobe.analysis.judged import from_predictions
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.curves import read_curves
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.studies.seed_sensitivity.results import (
    TOKEN_ACCURACY,
    member_labels,
    read_members,
    read_predictions,
    read_training,
)
from genprobe.studies.seed_sensitivity.summary import stalled_seeds, stopped_by


def run_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The sweep's tables by name: examples, scores, members, curves, judged (a language
    model's run: examples, scores, members, judged).

    Raises:
        RunDirError: not a sweep (nor a language model's run), or no suite evaluated yet.
    """
    config = read_members(run)
    examples = _in_order(read_predictions(run, config), config)
    scored = {"n": ("index", "size")}
    if TOKEN_ACCURACY in examples:
        scored[TOKEN_ACCURACY] = (TOKEN_ACCURACY, "mean")
    scores = examples.groupby(["seed", "suite"], sort=False).agg(**scored)
    judged = from_predictions(examples, member_labels(config))
    scores.insert(1, "accuracy", rates.accuracy(judged, ["seed", "suite"]))
    scores = scores.reset_index()
    if isinstance(config, LanguageModelConfig):
        tables = {"examples": examples, "scores": scores, "members": prompt_members(config)}
        return _judged({n: _with_prompt_cells(t, config) for n, t in tables.items()}, config)
    training = read_training(run)
    stalled = set(stalled_seeds(training))
    if config.train.steps is not None:
        over_time = read_curves(run)
        held_out = config.task.suites()[0]
        tables = {
            "examples": examples,
            "scores": scores,
            "members": grokking_members(over_time, config.train.steps, held_out, GROKKING),
            "curves": over_time,
        }
        return _judged(_with_grid_seeds_where(tables, config), config)
    members = pd.DataFrame(
        [
            {
                "seed": int(seed),
                "epochs": record["epochs"],
                "best_epoch": record["best_epoch"],
                "validation_accuracy": record["best_accuracy"],
                "stopped_by": stopped_by(record, config.train),
                "stalled": seed in stalled,
            }
            for seed, record in training.items()
        ],
        columns=["seed", "epochs", "best_epoch", "validation_accuracy", "stopped_by", "stalled"],
    )
    curves = pd.DataFrame(
        [
            {
                "seed": int(seed),
                "epoch": epoch,
                "validation_accuracy": accuracy,
                "kept": epoch == record["best_epoch"],
            }
            for seed, record in training.items()
            for epoch, accuracy in enumerate(record["validation"], start=1)
        ],
        columns=["seed", "epoch", "validation_accuracy", "kept"],
    )
    tables = {"examples": examples, "scores": scores, "members": members, "curves": curves}
    return _judged(_with_grid_seeds_where(tables, config), config)


def prompt_members(config: LanguageModelConfig) -> pd.DataFrame:
    """One row per member of a language model: its number (`seed`) and label."""
    labels = member_labels(config)
    return pd.DataFrame({"seed": list(labels), "member": list(labels.values())})


def _judged(
    tables: dict[str, pd.DataFrame], config: SweepConfig | LanguageModelConfig
) -> dict[str, pd.DataFrame]:
    """`tables` and `judged`: its examples (with every member's grid seeds or prompt cell)
    as judged outputs."""
    return {**tables, "judged": from_predictions(tables["examples"], member_labels(config))}


def _with_prompt_cells(table: pd.DataFrame, config: LanguageModelConfig) -> pd.DataFrame:
    """`table` with each member's format, few-shot draw and sampling seed (none: greedy) after
    its `seed`."""
    cells = config.cells()
    table = table.copy()
    for at, name in enumerate(("format", "draw", "sample"), start=1):
        values = [getattr(cells[seed], name) for seed in table["seed"]]
        table.insert(at, name, pd.array(values, dtype="Int64"))
    return table


def _with_grid_seeds_where(
    tables: dict[str, pd.DataFrame], config: SweepConfig
) -> dict[str, pd.DataFrame]:
    if not config.grid:
        return tables
    return {name: _with_grid_seeds(table, config) for name, table in tables.items()}


def _in_order(predictions: pd.DataFrame, config: SweepConfig | LanguageModelConfig) -> pd.DataFrame:
    """By seed, then suite (the task's suites first, in its order; others by name), then index."""
    suites = [s for s in config.task.suites() if s in set(predictions["suite"])]
    suites += sorted(set(predictions["suite"]) - set(suites))
    position = {suite: i for i, suite in enumerate(suites)}
    return predictions.sort_values(
        ["seed", "suite", "index"],
        key=lambda column: column.map(position) if column.name == "suite" else column,
        ignore_index=True,
    )


def _with_grid_seeds(table: pd.DataFrame, config: SweepConfig) -> pd.DataFrame:
    """`table` with each member's init and order seeds after its `seed`."""
    streams = config.streams()
    table = table.copy()
    table.insert(1, "init", [streams[seed].init for seed in table["seed"]])
    table.insert(2, "order", [streams[seed].order for seed in table["seed"]])
    return table
