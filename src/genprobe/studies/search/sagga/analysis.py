"""What a search found, in families: k-means over the archive, a readable slice per cluster,
exploit tags, and a nearby success per cluster (Welleck et al. 2022, Tables 4, 6, 10, 11).

    clusters   the one cluster analysis of both searches (`studies/search/clusters.py`) over
               the archived failures' text embeddings (its `text_embeddings`: min(n, 10)
               clusters, seeded), members ordered by distance to their centroid, each
               cluster a record of its schema with `central`, its first three members; one
               shard over the archive and a seeded sample of the model's successes,
               `analysis/clusters.json` (a run made before that schema keeps its shard and
               file, read as they are: `results.read_clusters`)
    slices     per cluster, a short predicate over tree features that covers most members and
               few of the model's successes (`studies/search/slices.py`); a cluster whose
               slice is nested in another's (all the other's conditions, and more) is merged
               into it (a setting of the one analysis, the failure search's clusters unmerged)
    tags       per failure, `exploit` (SymPy's integrate needs a non-elementary function, or
               finds nothing) or `robustness` (an elementary antiderivative exists), or
               `unknown` (SymPy ran out of time); the shards of `analysis/tags/` that the
               failure search's analysis tags in too (`studies/search/tags.py`), by problem
    nearby     per cluster, the closest mutant of its central members (constants changed, as
               the robustness mutation parameters do) that the model solves: the paper's 30^x
               beside 119^x; one shard per cluster, `analysis/nearby/`

Tags and nearby successes have budgets of work (`tag_limit` failures, `nearby_attempts`
mutants per central member), not of time, so what the report shows does not depend on the
machine's load; the time they take is bounded by those counts and the deadlines of CPU time
each item gets (`TAG_SECONDS` a tag; the mutation and verification deadlines of the search).

These are the search's last three stages (`analyse`), so a killed search resumes them like its
generations, and the report only reads their files (`results.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from genprobe.runs.executor import Executor, Stage, run_stage
from genprobe.runs.pool import DeadlinePool
from genprobe.runs.shards import Outputs, Shard, json_bytes
from genprobe.studies.search.clusters import (
    CENTRAL,
    cluster_records,
    contrast_sample,
    text_embeddings,
)
from genprobe.studies.search.config import SAGGA_TAG_LIMIT, SearchConfig
from genprobe.studies.search.embedding import Embedder, make_embedder
from genprobe.studies.search.sagga.generation import ProposeStage, propose, verifier_config, verify
from genprobe.studies.search.sagga.mutants import SimplifyMemo, mutate_generation
from genprobe.studies.search.sagga.results import CLUSTERS, read_archive, read_clusters, successes
from genprobe.studies.search.sagga.study import CLUSTER, NEARBY
from genprobe.studies.search.tags import TagStage, tag, tagged_rows
from genprobe.tasks.integration.exploits import TAG_SECONDS, tag_failures
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.features import tree_features
from genprobe.tasks.integration.mutations import MUTATION_PARAMS
from genprobe.tasks.integration.prefix import from_prefix
from genprobe.tasks.integration.verifier import Verifier
from genprobe.tasks.probing import Tag
from genprobe.under_test.adapters.integration_tokens import IntegrationSequenceModel
from genprobe.under_test.settings import sent_to_workers


def _problems(keys: Sequence[str]) -> list[Expr]:
    return [from_prefix(key.split()) for key in keys]


# -- the stages ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterStage(Stage):
    """Clusters the archive given in the shard's spec and finds each cluster's slice."""

    config: SearchConfig

    def setup(self) -> Embedder:
        return make_embedder(self.config.embedding)

    def run(self, context: Embedder, shard: Shard, scratch: Path) -> Outputs:
        spec = shard.spec
        archive = pd.DataFrame(spec["archive"], columns=["problem", "text"])
        clusters = []
        if len(archive):
            vectors = context.embed(archive["text"].tolist())
            described = tree_features(_problems([*archive["problem"], *spec["successes"]]))
            representation = text_embeddings(vectors, self.config.seed)
            clusters = cluster_records(representation, described, len(archive))
        for c in clusters:
            c["central"] = archive["problem"].iloc[c["rows"][:CENTRAL]].tolist()
        result = {
            "generations": spec["generations"],
            "archive_size": len(archive),
            "clusters": clusters,
        }
        return {CLUSTERS: json_bytes(result)}


def cluster_shard(run: Path, config: SearchConfig, generations: int) -> Shard:
    """The archive and a seeded sample of the model's successes, after `generations`."""
    archive = read_archive(run)
    solved = successes(run, generations)
    sample = contrast_sample(solved, config.seed)
    spec = {
        "generations": generations,
        "archive": archive[["problem", "text"]].values.tolist(),
        "successes": sample["problem"].tolist(),
    }
    return Shard(CLUSTER, "archive", spec)


def tag_problems(keys: list[str], workers: int | None) -> list[Tag]:
    """SAGGA's tagger (a `tags.Tagger`): each problem (a prefix string) by SymPy's `integrate`
    (`exploits.tag_failures`, `TAG_SECONDS` of CPU time each, in `workers` processes)."""
    return tag_failures(_problems(keys), deadline=TAG_SECONDS, workers=workers)


@dataclass(frozen=True)
class NearbyStage(ProposeStage):
    """Mutates a cluster's central members and keeps the solved mutant nearest to one."""

    def setup(self) -> tuple[IntegrationSequenceModel, DeadlinePool, SimplifyMemo, Verifier]:
        return (*super().setup(), Verifier(verifier_config(self.config)))

    def run(
        self,
        context: tuple[IntegrationSequenceModel, DeadlinePool, SimplifyMemo, Verifier],
        shard: Shard,
        scratch: Path,
    ) -> Outputs:
        (model, pool, memo, verifier), config = context, self.config
        members = shard.spec["members"]
        report = mutate_generation(
            pool, _problems(members), shard.spec["attempts"], MUTATION_PARAMS["robustness"],
            run_seed=config.seed, generation=10**6 + int(shard.spec["cluster"]),
            deadline=config.mutation_deadline, form=config.mutant_form, memo=memo,
        )  # fmt: skip
        rows = propose(model, report.mutants, config.k)
        checked = verify(verifier, pool, [row for row in rows if row["readable"]], config)
        solved_at = {row["position"] for row in checked if row["status"] == "solved"}
        # a mutant without x (a constant) is not a nearby problem
        solved = [
            row for row in rows if row["position"] in solved_at and "x" in row["problem"].split()
        ]
        found = None
        if solved:
            embedder = make_embedder(config.embedding)
            texts = [str(p) for p in _problems(members)]
            member_vectors = embedder.embed(texts)
            vectors = embedder.embed([row["text"] for row in solved])
            similarity = vectors @ member_vectors.T
            best = int(np.argmax(similarity.max(axis=1)))
            row = solved[best]
            found = {
                "member": texts[int(np.argmax(similarity[best]))],
                "success": row["text"],
                "answer": row["answers"][0] if row["answers"] else None,
                "similarity": round(float(similarity[best].max()), 3),
            }
        result = {"members": members, "tried": len(report.mutants), "found": found}
        return {f"analysis/nearby/{shard.key}.json": json_bytes(result)}


def analyse(
    run: Path,
    config: SearchConfig,
    generations: int,
    executor: Executor,
    here: Executor,
    log: Callable[[str], None],
) -> None:
    """The search's last stages: cluster the archive (here, where the embedder is), tag its
    failures and search a nearby success per cluster (on the study's executor)."""
    log("clustering the archived failures")
    run_stage(run, ClusterStage(config), [cluster_shard(run, config, generations)], here)
    found = read_clusters(run)["clusters"]
    archive = read_archive(run)
    limit = SAGGA_TAG_LIMIT if config.tag_limit is None else config.tag_limit
    wanted = archive["problem"].iloc[tagged_rows([c["rows"] for c in found], limit)]
    tag(
        run, wanted, TagStage(tag_problems, "problem", config.workers), executor,
        lambda untagged: log(
            f"tagging {untagged} failures (exploit or robustness; --tag-limit {limit}, at "
            f"most {TAG_SECONDS:g} s of SymPy's CPU time each)"
        ),
    )  # fmt: skip
    attempts = config.nearby_attempts
    log(
        f"searching a nearby success for {len(found)} clusters among {attempts} mutants of "
        f"each of their {CENTRAL} central members (--nearby-attempts {attempts})"
    )
    shards = [
        Shard(NEARBY, f"{i:03d}", {"cluster": i, "members": c["central"], "attempts": attempts})
        for i, c in enumerate(found)
    ]
    run_stage(run, NearbyStage(sent_to_workers(config)), shards, executor)
