"""The SAGGA report: the search's effort, then its failures in clusters laid out like the
paper's Tables 4, 6 and 11 (central members, the model's answers, a readable slice, exploit
tags, a nearby success), read from the run's files (`results.py`): it runs no model and no
SymPy, so it can be rewritten at any time.

The numbers come from `summary.py`, which writes `summary.json`; this module renders them as
`figures/*.png`, `report.md` and a self-contained `report.html`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.analysis.plots import progress
from genprobe.analysis.render import Figure, Heading, Table, Text
from genprobe.analysis.render import write_report as render
from genprobe.studies.search.config import SearchConfig
from genprobe.studies.search.sagga import plots
from genprobe.studies.search.sagga.results import FoundCluster, read_results
from genprobe.studies.search.sagga.summary import EFFORT, SHOWN, summarize_run, write_summary


def write_sagga_report(run: str | Path) -> tuple[Path, Path]:
    """Summarize the run's files (`summary.json`), draw figures, write report.md and
    report.html of a SAGGA run."""
    run = Path(run)
    results = read_results(run)
    summary = summarize_run(results)
    write_summary(run, summary)
    config = results.config
    blocks = _blocks(run, config, summary, results.stats, results.archive, results.clusters)
    return render(run, f"SAGGA: where {config.model.spec} fails", blocks)


def _answer(answers: Any) -> str:
    return answers[0] if answers is not None and len(answers) else "(no answer)"


def _blocks(
    run: Path,
    config: SearchConfig,
    summary: dict[str, Any],
    stats: pd.DataFrame,
    archive: pd.DataFrame,
    found: list[FoundCluster],
) -> list:
    effort = summary["effort"]
    recipe = (
        f"Model `{config.model.spec}`; basis `{config.basis_file or config.basis}`, mutation "
        f"parameters `{config.mutation_params}`, {config.mutant_form} mutants, fitness "
        f"`{config.fitness}` "
        f"(tau {config.tau}), seed selection `{config.selection}`; "
        f"{config.generation_size:,} mutants per generation, "
        f"{config.population:,} seeds; the top {config.k} candidate(s) checked, timeouts "
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
        blocks.append(Figure(progress(stats, figures / "progress.png").relative_to(run),
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
        rows = archive.iloc[list(c.rows[:SHOWN])]
        blocks += [
            Heading(f"Cluster {i}: {c.slice['text']}", level=3),
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
