"""A seed sweep's results as tidy tables (`genprobe.studies.tables` reads any run's):

    judged    the predictions as they are stored: judged outputs (`analysis.judged`,
              docs/results-schema.md), one row per member × suite × example, the member by
              its label (`seed=3`), its output and outcome, then the sweep's own columns: the
              member's number (`seed`), the input's length, per-token accuracy where the task
              scores it
    scores    one row per member × suite: examples, accuracy (and mean per-token accuracy)
    members   one row per member: epochs trained, the kept epoch, its validation accuracy,
              what ended training, whether it stalled
    curves    one row per member × validation: validation accuracy after each epoch

A sweep with subset seeds (`--subsets`) has besides (`memorization.py`):

    memorization  one row per training example: how often the members that trained on it
                  and those that did not reproduce its training target, the difference, and
                  the same by the task's rule, with intervals
    consistency   one row per suite × example: accuracy among the members that never
                  trained on it
    influence, copies, structures (where the task declares local structures)
                  as `memorization.py` says

A sweep trained over time (`--steps`) has instead:

    members   one row per member: when it memorized, grokked, the delay, its outcome
              (`analysis.grokking.members`)
    curves    one row per member × evaluation × role: accuracy, loss, weight norm (with
              subsets, `train` is each member's own subset, `train_unseen` the rest)
    history   one row per member × training example: the step it was first right, its
              forgetting events, its data map (`training.example_history`)
    data_map  one row per training example, over the members that trained on it
              (`analysis.data_maps`)

A member is a seed; in a grid of init × data-order seeds every table also names its `init`
and `order` seeds. Rows run by seed, then suite in the task's order.

A language model's run (`language_model.py`) has scores, judged and members, its judged outputs
with the record of each request (`prompt`, `completion`), its outcomes the verdicts, and:

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
from genprobe.errors import DamagedFileError, RunDirError
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.curves import read_curves, read_history
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.studies.seed_sensitivity.results import (
    TOKEN_ACCURACY,
    member_labels,
    read_members,
    read_predictions,
    read_subsets,
    read_training,
)
from genprobe.studies.seed_sensitivity.summary import stalled_seeds, stopped_by


def run_tables(run: str | Path) -> dict[str, pd.DataFrame]:
    """The sweep's tables by name: scores, members, curves, judged (a language model's run:
    scores, members, judged).

    Raises:
        RunDirError: not a sweep (nor a language model's run), or no suite evaluated yet.
    """
    config = read_members(run)
    judged = _in_order(read_predictions(run, config), config)
    scored = {"n": ("index", "size")}
    if TOKEN_ACCURACY in judged:
        scored[TOKEN_ACCURACY] = (TOKEN_ACCURACY, "mean")
    scores = judged.groupby(["seed", "suite"], sort=False).agg(**scored)
    scores.insert(1, "accuracy", rates.accuracy(judged, ["seed", "suite"]))
    scores = scores.reset_index()
    if isinstance(config, LanguageModelConfig):
        tables = {"scores": scores, "members": prompt_members(config), "judged": judged}
        return {name: _with_prompt_cells(table, config) for name, table in tables.items()}
    training = read_training(run)
    stalled = set(stalled_seeds(training))
    if config.train.steps is not None:
        over_time = read_curves(run)
        held_out = config.task.suites()[0]
        tables = {
            "scores": scores,
            "members": grokking_members(over_time, config.train.steps, held_out, GROKKING),
            "curves": over_time,
            "judged": judged,
            **history_tables(run, config),
        }
        return _with_grid_seeds_where(tables | _memorization(run, config, judged), config)
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
    tables = {"scores": scores, "members": members, "curves": curves, "judged": judged}
    return _with_grid_seeds_where(tables | _memorization(run, config, judged), config)


def _memorization(run: str | Path, config: SweepConfig, judged: pd.DataFrame) -> dict:
    if not config.train.subsets:
        return {}
    from genprobe.studies.seed_sensitivity.memorization import memorization_tables

    return memorization_tables(run, judged)


def history_tables(run: str | Path, config: SweepConfig) -> dict[str, pd.DataFrame]:
    """The history of each training example per member (`history`) and over the members that
    trained on it (`data_map`); none for a run trained before histories were kept."""
    from genprobe.analysis.data_maps import data_map

    try:
        history = read_history(run)
    except DamagedFileError:
        raise
    except RunDirError:  # its curves were read: it was trained over time, before histories
        return {}
    trained = read_subsets(run)[1] if config.train.subsets else None
    return {"history": history, "data_map": data_map(history, trained)}


def prompt_members(config: LanguageModelConfig) -> pd.DataFrame:
    """One row per member of a language model: its number (`seed`) and label."""
    labels = member_labels(config)
    return pd.DataFrame({"seed": list(labels), "member": list(labels.values())})


def _with_prompt_cells(table: pd.DataFrame, config: LanguageModelConfig) -> pd.DataFrame:
    """`table` with each member's format, few-shot draw and sampling seed (none: greedy) after
    its `seed`."""
    cells = config.cells()
    table = table.copy()
    after = table.columns.get_loc("seed")
    for at, name in enumerate(("format", "draw", "sample"), start=after + 1):
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
    """`table` with each member's init and order seeds after its `seed` (a table of examples,
    which names no member, as it is)."""
    if "seed" not in table:
        return table
    streams = config.streams()
    table = table.copy()
    after = table.columns.get_loc("seed")
    table.insert(after + 1, "init", [streams[seed].init for seed in table["seed"]])
    table.insert(after + 2, "order", [streams[seed].order for seed in table["seed"]])
    return table
