"""The SAGGA report: the search's effort, then its failures in clusters laid out like the
paper's Tables 4, 6 and 11 (central members, the model's answers, a readable slice, exploit
tags, a nearby success), read from the run's files (`results.py`): it runs no model and no
SymPy, so it can be rewritten at any time.

Writes `summary.json`, `figures/*.png`, `report.md` and a self-contained `report.html`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.analysis.render import Figure, Heading, Table, Text
from genprobe.analysis.render import write_report as render
from genprobe.runs.atomic import write_json
from genprobe.runs.pool import DeadlineCounts
from genprobe.studies.sagga import plots
from genprobe.studies.sagga.config import SaggaConfig
from genprobe.studies.sagga.results import FoundCluster, read_results

SHOWN = 5  # members shown per cluster
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


def write_sagga_report(run: str | Path) -> tuple[Path, Path]:
    """summary.json, figures, report.md and report.html of a SAGGA run."""
    run = Path(run)
    results = read_results(run)
    config, archive, found = results.config, results.archive, results.clusters
    stats = results.stats
    summary = _summary(results.state, stats, archive, found)
    write_json(run / "summary.json", summary)
    blocks = _blocks(run, config, summary, stats, archive, found)
    return render(run, f"SAGGA: where {config.model.spec} fails", blocks)


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


def _summary(
    state: dict[str, Any], stats: pd.DataFrame, archive: pd.DataFrame, found: list[FoundCluster]
) -> dict[str, Any]:
    clusters = []
    for c in found:
        rows = archive.iloc[list(c.members)]
        clusters.append(
            {
                "size": len(c.members),
                "mean_fitness": round(float(rows["fitness"].mean()), 4),
                "slice": c.slice,
                "coverage": round(c.coverage, 3),
                "precision": round(c.precision, 3),
                "tags": {k: int(v) for k, v in rows["tag"].value_counts().items()},
                "central": rows["text"].head(SHOWN).tolist(),
                "nearby_success": c.nearby,
            }
        )
    tags = archive["tag"].value_counts() if len(archive) else pd.Series(dtype=int)
    return {
        "stop": state["stop"],
        "generations": state["generations"],
        "archive_size": len(archive),
        "effort": _effort(stats, archive),
        "tags": {k: int(v) for k, v in tags.items()},
        "clusters": clusters,
    }


def _answer(answers: Any) -> str:
    return answers[0] if answers is not None and len(answers) else "(no answer)"


def _blocks(
    run: Path,
    config: SaggaConfig,
    summary: dict[str, Any],
    stats: pd.DataFrame,
    archive: pd.DataFrame,
    found: list[FoundCluster],
) -> list:
    effort = summary["effort"]
    recipe = (
        f"Model `{config.model.spec}`; basis `{config.basis_file or config.basis}`, mutation "
        f"preset `{config.preset}`, {config.mutant_form} mutants, fitness `{config.fitness}` "
        f"(tau {config.tau}), seed selection `{config.selection}`; "
        f"{config.generation_size:,} mutants per generation, "
        f"{config.seed_size:,} seeds; the top {config.k} candidate(s) checked, timeouts "
        f"{'pass' if config.policy == 'generous' else 'fail'} ({config.policy}); seed "
        f"{config.seed}. Stopped by the {summary['stop']} after {summary['generations']:,} "
        f"generation{'s' * (summary['generations'] != 1)}, with "
        f"{summary['archive_size']:,} failures archived."
    )
    blocks: list = [Text(recipe), Heading("Search effort")]
    rows = [(label, f"{effort[key]:,}") for key, label in EFFORT]
    rows += [
        ("verifier seconds", f"{effort['verifier_seconds']:,}"),
        ("mutation worker seconds", f"{effort['mutation_worker_seconds']:,}"),
    ]
    blocks.append(Table(pd.DataFrame(rows, columns=["", "count"])))
    blocks += [Text(f"Warning: {warning}") for warning in effort["deadline_warnings"]]
    if effort["rejected_by_reason"]:
        reasons = ", ".join(f"{r} {n}" for r, n in effort["rejected_by_reason"].items())
        blocks.append(Text(f"Rejected mutants by reason: {reasons}."))
    if archive.empty:
        blocks.append(
            Text(
                f"No failure was found: the model is robust to this search at this effort "
                f"({effort['mutants']:,} distinct mutants, {effort['queries']:,} model "
                f"queries), which does not make it robust in general."
            )
        )
    figures = run / "figures"
    if len(stats):
        blocks.append(Figure(plots.progress(stats, figures / "progress.png").relative_to(run),
                             "Archive size and novel failures per generation"))  # fmt: skip
    if archive.empty:
        return blocks
    blocks.append(Figure(plots.failure_lengths(archive, figures / "lengths.png").relative_to(run),
                         "Printed length of the archived failures"))  # fmt: skip
    tags = summary["tags"]
    blocks += [
        Heading("Failure clusters"),
        Text(
            f"k-means over the failures' embeddings (`{config.embedding}`), nested clusters "
            "merged. A slice is a predicate over tree features covering most of a cluster and "
            "few of the model's successes (coverage: share of the cluster it holds; precision: "
            "share of what it holds that the model failed). An `exploit` has no elementary "
            "antiderivative (SymPy's integrate needs a special function or finds none); a "
            f"`robustness` failure has one. Tags of {sum(tags.values()):,} of "
            f"{len(archive):,} failures (central members first): "
            + ", ".join(f"{k} {v:,}" for k, v in tags.items())
            + "."
        ),
    ]
    table = []
    for i, c in enumerate(summary["clusters"], 1):
        success = c["nearby_success"]
        table.append(
            {
                "cluster": str(i),
                "size": f"{c['size']:,}",
                "mean fitness": f"{c['mean_fitness']:.3f}",
                "slice": c["slice"],
                "coverage": f"{c['coverage']:.2f}",
                "precision": f"{c['precision']:.2f}",
                "exploits": str(c["tags"].get("exploit", 0)),
                "central members": "; ".join(c["central"][:3]),
                "nearby success": "–" if success is None
                else f"{success['success']} (for {success['member']})",
            }
        )  # fmt: skip
    blocks.append(Table(pd.DataFrame(table)))
    for i, c in enumerate(found, 1):
        rows = archive.iloc[list(c.members[:SHOWN])]
        blocks += [
            Heading(f"Cluster {i}: {c.slice}", level=3),
            Table(
                pd.DataFrame(
                    {
                        "problem": rows["text"].tolist(),
                        "model's answer": [_answer(a) for a in rows["answers"]],
                        "verdict": rows["outcome"].fillna("no answer").tolist(),
                        "tag": rows["tag"].fillna("–").tolist(),
                    }
                )
            ),
        ]
    return blocks
