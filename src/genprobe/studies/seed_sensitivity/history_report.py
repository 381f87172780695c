"""The report's section on a sweep trained over time: what became of each training example,
its forgetting events and its data map (the tables are `tables.py`'s `history` and
`data_map`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.analysis.data_maps import REGIONS
from genprobe.analysis.plots import data_map_figure
from genprobe.analysis.render import Block, Figure, Heading, Table, Text, clip

SHOWN = 8  # examples listed per kind
WIDTH = 60  # characters of an input or target shown


def history_blocks(
    run: Path,
    history: pd.DataFrame,
    mapped: pd.DataFrame,
    trained: np.ndarray | None,
    pairs: list[tuple[str, str]],
) -> list[Block]:
    """The section's blocks from the run's `history` and `data_map` tables (`trained`: which
    member trained on which example, with subsets), `pairs` the training examples."""
    figure = data_map_figure(mapped, run / "figures" / "data_map.png")
    groups = {"trained on it": np.ones(len(history), dtype=bool)}
    if trained is not None:
        groups = {"trained on it": trained.ravel(), "not trained on it": ~trained.ravel()}
    history = history.sort_values(["seed", "index"])
    texts = pd.DataFrame(pairs, columns=["input", "target"])
    mapped = mapped.join(texts, on="index")
    return [
        Heading("Each training example over training time"),
        Text(
            "At every evaluation each member answered every training example (teacher-forced: "
            "right when its most likely token is the target's at every position). An example "
            "is *forgotten* when it was right at one evaluation and wrong at the next (Toneva "
            "et al. 2019). Its data map (Swayamdipta et al. 2020): *confidence*, the mean "
            "probability of its target (per token, the geometric mean) over training time; "
            "*variability*, its standard deviation; *correctness*, the share of training time "
            "it was right; each averaged over the members that trained on it. Each evaluation "
            "weighs the steps it stands for, so a log-spaced schedule does not count the first "
            "steps more. Regions: *ambiguous*, the most variable third; of the others, *easy to "
            "learn* at or above their median confidence, *hard to learn* below."
        ),
        _events_table(history, groups),
        _regions_table(mapped),
        Heading("The hardest to learn", level=3),
        _examples(mapped.sort_values(["confidence", "index"]).head(SHOWN)),
        Heading("The most ambiguous", level=3),
        _examples(
            mapped.sort_values(["variability", "index"], ascending=[False, True]).head(SHOWN)
        ),
        Figure(figure.relative_to(run), "Data map: one dot per training example."),
    ]


def _events_table(history: pd.DataFrame, groups: dict[str, np.ndarray]) -> Table:
    rows = []
    for name, mask in groups.items():
        part = history[mask]
        ever = part["first_right"] >= 0
        rows.append({
            "member and example": name,
            "pairs": f"{len(part):,}",
            "ever right (%)": _pct(ever.mean()),
            "first right, median step": _step(part.loc[ever, "first_right"].median()),
            "forgotten at least once (%)": _pct((part["forgotten"] > 0).mean()),
            "forgetting events (mean)": f"{part['forgotten'].mean():.2f}",
            "right at the end (%)": _pct(part["learned"].mean()),
        })  # fmt: skip
    return Table(pd.DataFrame(rows))


def _regions_table(mapped: pd.DataFrame) -> Table:
    rows = []
    for region in REGIONS:
        part = mapped[mapped["region"] == region]
        rows.append({
            "region": region,
            "examples": f"{len(part):,}",
            "confidence (mean)": _two(part["confidence"].mean()),
            "variability (mean)": _two(part["variability"].mean()),
            "correctness (mean %)": _pct(part["correctness"].mean()),
            "forgotten at least once (mean %)": _pct(part["forgotten"].mean()),
        })  # fmt: skip
    return Table(pd.DataFrame(rows))


def _examples(rows: pd.DataFrame) -> Table:
    return Table(pd.DataFrame({
        "example": rows["index"].astype(str),
        "input": [clip(text, WIDTH) for text in rows["input"]],
        "target": [clip(text, WIDTH) for text in rows["target"]],
        "confidence": rows["confidence"].map(_two),
        "variability": rows["variability"].map(_two),
        "correctness (%)": rows["correctness"].map(_pct),
        "first right (median step)": rows["first_right"].map(_step),
        "members": rows["members"].astype(str),
    }))  # fmt: skip


def _pct(x: float) -> str:
    return "–" if np.isnan(x) else f"{100 * x:.1f}"


def _two(x: float) -> str:
    return "–" if np.isnan(x) else f"{x:.2f}"


def _step(x: float) -> str:
    return "never" if np.isnan(x) else f"{x:,.0f}"
