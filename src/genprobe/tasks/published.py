"""What a paper reports for the seed study on a task, for reports to print beside a run.

A task returns one from `published()` when its settings are the paper's; the seed study's
report and `compare` show it labelled as the paper's, and list where a run's model and training
settings depart from those the paper states.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Published:
    source: str  # e.g. "Weber et al. 2018, Table 3"
    seeds: int  # how many seeds (trained models) the numbers summarize
    suites: Mapping[str, Mapping[str, float]]  # suite -> {"mean", "std", "min", "max"}, in %
    # suite pairs the paper correlates across seeds -> its Pearson r (None: discussed, no number)
    pairs: Mapping[tuple[str, str], float | None] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)  # "arch", "model.hidden", "train.lr"
    note: str = ""  # what differs between its numbers and a run's (test files, metric, …)
