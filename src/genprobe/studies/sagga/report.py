"""The SAGGA report: the search's effort, then its failures in clusters laid out like the
paper's Tables 4, 6 and 11 (central members, the model's answers, a readable slice, exploit
tags, a nearby success), computed from the run's files.

Writes `summary.json`, `figures/*.png`, `report.md` and a self-contained `report.html`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from genprobe.analysis.render import Figure, Heading, Table, Text
from genprobe.analysis.render import write_report as render
from genprobe.decoding.config import DecodingConfig
from genprobe.errors import RunDirError
from genprobe.models.settings import ModelSettings
from genprobe.runs.atomic import write_json
from genprobe.runs.executor import Executor
from genprobe.runs.rundir import read_config
from genprobe.studies.sagga import plots
from genprobe.studies.sagga.clusters import (
    Cluster,
    cluster,
    nearby_successes,
    tag_archive,
    tagged_rows,
)
from genprobe.studies.sagga.config import SaggaConfig
from genprobe.studies.sagga.embedding import make_embedder
from genprobe.studies.sagga.search import KIND, SEARCH, read_archive

SHOWN = 5  # members shown per cluster
EFFORT = (
    ("attempts", "mutations tried"),
    ("rejected", "rejected by the filter or the simplify deadline"),
    ("duplicates", "duplicates within a generation"),
    ("mutants", "distinct mutants evaluated"),
    ("queries", "model queries"),
    ("cache_hits", "answered from the query cache"),
    ("solved", "solved"),
    ("failed", "failed"),
    ("unsupported", "unsupported (the model cannot read it, or outside the task)"),
)


def stored_config(run: Path, workers: int | None = None) -> SaggaConfig:
    """The run's config, rebuilt from its `config.json`."""
    recorded = read_config(run)
    if recorded.get("kind") != KIND:
        raise RunDirError(f"{run} holds a {recorded.get('kind')} run, not a SAGGA search")
    stored = dict(recorded["config"])
    model = stored.pop("model")
    settings = ModelSettings(
        model["spec"], DecodingConfig(**model["decoding"]), deadline=model["deadline"],
        temperature=model["temperature"],
    )  # fmt: skip
    for name in ("basis_file", "targets_file"):
        stored[name] = stored[name] and stored[name]["path"]
    return SaggaConfig(settings, **stored, workers=workers)


def successes(run: Path) -> pd.DataFrame:
    """Every distinct problem the model solved during the search."""
    frames = [
        pd.read_parquet(path, columns=["problem", "text", "status"])
        for path in sorted((run / "generations").glob("*.parquet"))
    ]
    if not frames:
        return pd.DataFrame(columns=["problem", "text"])
    frame = pd.concat(frames, ignore_index=True)
    return frame[frame["status"] == "solved"].drop_duplicates("problem")[["problem", "text"]]


def write_sagga_report(
    run: str | Path,
    log: Any = lambda message: None,
    executor: Executor | None = None,
    workers: int | None = None,
    tag_limit: int | None = None,
) -> tuple[Path, Path]:
    """summary.json, figures, report.md and report.html of a SAGGA run; at most `tag_limit`
    failures are tagged (None: all)."""
    run = Path(run)
    config = stored_config(run, workers)
    state = json.loads((run / SEARCH).read_text(encoding="utf-8"))
    archive = read_archive(run)
    stats = pd.DataFrame(state["stats"])
    log(f"clustering {len(archive)} failures")
    found = cluster(archive, successes(run), make_embedder(config.embedding), seed=config.seed)
    log("tagging failures (exploit or robustness)")
    tags = tag_archive(run, archive, tagged_rows(found, tag_limit), config.workers, executor)
    archive = archive.merge(tags, on="problem", how="left")
    log(f"searching a nearby success for {len(found)} clusters")
    nearby = nearby_successes(run, config, archive, found, executor)
    summary = _summary(config, state, stats, archive, found, nearby)
    write_json(run / "summary.json", summary)
    blocks = _blocks(run, config, summary, stats, archive, found, nearby)
    return render(run, f"SAGGA: where {config.model.spec} fails", blocks)


def _effort(stats: pd.DataFrame) -> dict[str, Any]:
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
    return totals


def _summary(
    config: SaggaConfig,
    state: dict[str, Any],
    stats: pd.DataFrame,
    archive: pd.DataFrame,
    found: list[Cluster],
    nearby: list[dict],
) -> dict[str, Any]:
    clusters = []
    for c, near in zip(found, nearby, strict=True):
        rows = archive.iloc[list(c.members)]
        clusters.append(
            {
                "size": len(c.members),
                "mean_fitness": round(float(rows["fitness"].mean()), 4),
                "slice": c.slice.text,
                "coverage": round(c.slice.coverage, 3),
                "precision": round(c.slice.precision, 3),
                "tags": {k: int(v) for k, v in rows["tag"].value_counts().items()},
                "central": rows["text"].head(SHOWN).tolist(),
                "nearby_success": near["found"],
            }
        )
    tags = archive["tag"].value_counts() if len(archive) else pd.Series(dtype=int)
    return {
        "stop": state["stop"],
        "generations": state["generations"],
        "archive_size": len(archive),
        "effort": _effort(stats),
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
    found: list[Cluster],
    nearby: list[dict],
) -> list:
    effort = summary["effort"]
    recipe = (
        f"Model `{config.model.spec}`; basis `{config.basis_file or config.basis}`, mutation "
        f"preset `{config.preset}`, fitness `{config.fitness}` (tau {config.tau}), seed "
        f"selection `{config.selection}`; {config.generation_size:,} mutants per generation, "
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
    for i, (c, near) in enumerate(zip(summary["clusters"], nearby, strict=True), 1):
        success = near["found"]
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
            Heading(f"Cluster {i}: {c.slice.text}", level=3),
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
