"""What a SAGGA run's files add up to: the search's effort (mutations, rejections by reason,
model queries, seconds, and how many mutations, verifications and tags met their deadlines,
with a warning where too many did), the exploit tags, and per cluster its size, mean fitness,
slice, tags, central members and a nearby success. `write_summary` writes it to
`summary.json`; the report (`report.py`) renders it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.runs.atomic import write_json
from genprobe.runs.pool import DeadlineCounts
from genprobe.studies.search.sagga.results import SaggaResults

SHOWN = 5  # central members kept, and shown, per cluster
EFFORT = (
    ("attempts", "mutations tried"),
    ("simplified", "raw mutants simplified or evaluated (the rest met before)"),
    ("rejected", "rejected by the filter or the simplify deadline"),
    ("duplicates", "duplicates within a generation"),
    ("mutants", "distinct mutants evaluated"),
    ("queries", "model queries"),
    ("cache_hits", "answered from the query cache"),
    ("solved", "solved"),
    ("failed", "failed"),
    ("unsupported", "unsupported (the model cannot read it, or outside the task)"),
)
DEADLINE_ITEMS = {
    "mutation": "raw mutants simplified",
    "verification": "candidates verified",
    "tagging": "failures tagged (SymPy integrate)",
}


def summarize_run(results: SaggaResults) -> dict[str, Any]:
    """The JSON-ready summary of a run's results (`results.read_results`)."""
    archive = results.archive
    clusters = []
    for c in results.clusters:
        rows = archive.iloc[list(c.rows)]
        clusters.append(
            {
                "size": len(c.rows),
                "mean_fitness": round(float(rows["fitness"].mean()), 4),
                "slice": c.slice["text"],
                "coverage": round(c.slice["coverage"], 3),
                "precision": round(c.slice["precision"], 3),
                "tags": {k: int(v) for k, v in rows["tag"].value_counts().items()},
                "central": rows["text"].head(SHOWN).tolist(),
                "nearby_success": c.nearby,
            }
        )
    tags = archive["tag"].value_counts() if len(archive) else pd.Series(dtype=int)
    return {
        "stop": results.state["stop"],
        "generations": results.state["generations"],
        "archive_size": len(archive),
        "effort": _effort(results.stats, archive),
        "tags": {k: int(v) for k, v in tags.items()},
        "clusters": clusters,
    }


def write_summary(run: str | Path, summary: dict[str, Any]) -> None:
    write_json(Path(run) / "summary.json", summary)


def _effort(stats: pd.DataFrame, archive: pd.DataFrame) -> dict[str, Any]:
    totals: dict[str, Any] = {}
    for key, _ in EFFORT:
        if key == "rejected":
            reasons: Counter[str] = Counter()
            for row in stats.get("rejected", []):
                reasons.update(row)
            totals["rejected"] = sum(reasons.values())
            totals["rejected_by_reason"] = dict(sorted(reasons.items()))
        else:
            totals[key] = int(stats[key].sum()) if key in stats else 0
    for key in ("verifier_seconds", "mutation_worker_seconds"):
        totals[key] = round(float(stats[key].sum()), 1) if key in stats else 0.0
    deadlines = {stage: DeadlineCounts() for stage in DEADLINE_ITEMS}
    for row in stats.get("deadlines", pd.Series(dtype=object)).dropna():  # none before counts
        for stage, counts in row.items():
            deadlines[stage] += DeadlineCounts(**counts)
    statuses = archive["tag_status"].dropna()  # none for tags made before statuses were kept
    deadlines["tagging"] = DeadlineCounts(
        len(statuses), int((statuses == "timeout").sum()), int((statuses == "hang").sum())
    )
    totals["deadlines"] = {stage: asdict(counts) for stage, counts in deadlines.items()}
    warnings = (counts.warning(DEADLINE_ITEMS[stage]) for stage, counts in deadlines.items())
    totals["deadline_warnings"] = [w for w in warnings if w]
    return totals
