"""What Weber, Shekhar & Balasubramanian (2018) report, to print beside a run's numbers.

Table 1 (the model and its training) and Table 3 (accuracy % over their 50 seeds), and the
Repeat-Long Pearson correlation from section 4. `differences` says where a run's settings
depart from Table 1, so a reader knows what a comparison with Table 3 compares.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.tasks.rewriting.grammar import Grammar

SEEDS = 50
# suite → (mean, std, min, max), accuracy %
TABLE_3 = {
    "standard": (99.85, 0.03, 99.73, 99.88),
    "repeat": (86.67, 13.39, 45.70, 99.85),
    "short": (64.36, 18.61, 32.80, 96.35),
    "long": (32.09, 20.63, 0.15, 97.60),
}
REPEAT_LONG_PEARSON = -0.71

# The settings Table 1 states (input feeding and the attentional layer are not stated there).
TABLE_1 = {
    "cell": "lstm",
    "attention": "bilinear",
    "emb": 32,
    "hidden": 32,
    "dropout": 0.1,
    "train.lr": 0.125,
    "train.batch_size": 64,
    "train_size": 100_000,
}


def differences(config: SweepConfig) -> list[str]:
    """`name ours (paper: theirs)` for every Table 1 setting the run does not share."""
    flat: dict[str, Any] = {**config.to_dict()}
    flat.update({f"train.{k}": v for k, v in flat.pop("train").items()})
    return [
        f"{name} {flat[name]} (paper: {value})"
        for name, value in TABLE_1.items()
        if flat[name] != value
    ]


def is_paper_task(config: SweepConfig) -> bool:
    """Whether the run's task is the paper's grammar (with or without the authors' B quirk),
    so that Table 3 is a fair reference."""
    return replace(config.grammar, authors_b_quirk=False) == Grammar()
