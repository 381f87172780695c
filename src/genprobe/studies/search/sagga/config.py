"""What a SAGGA run is: the model, the recipe (basis, mutation parameters, fitness, selection) and
the search's sizes. Defaults are the original CLI's (research notes A.2); its identity, hashed
into the run directory, leaves out the search's time budget, the worker count, how verification
is chunked and the analysis's budgets of work (failures tagged, mutants tried for a nearby
success).

Example:
    model = ModelSettings(ModelSpec.parse("ckpt:runs/bwd"))
    SaggaConfig(model, basis="polynomial_robustness", preset="robustness").validated()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from genprobe.errors import ConfigError, check_choice
from genprobe.runs.config import FileRef, Recorded
from genprobe.studies.search.config import SAGGA_TAG_LIMIT, SearchConfig
from genprobe.under_test.settings import ModelSettings

SELECTIONS = ("kmeans", "fitness")


@dataclass(frozen=True)
class SaggaConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `run_sagga` validates it. Its runs record it (its
    identity, their hash); they run as the failure search with SAGGA's breeder
    (`as_search`)."""

    RUNTIME: ClassVar[tuple[str, ...]] = (
        "minutes", "workers", "verify_chunk", "tag_limit", "nearby_attempts",
    )  # fmt: skip
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {"mutant_form": "simplified"}  # after runs existed
    # the defaults that follow from other settings, as the command line shows them
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "targets_file": "the ten",
        "workers": "one per CPU; per Ray worker: 1",
    }
    # the fields the command line gives in its own options: the model's group; a basis file is
    # given as --basis-file alone (basis "file")
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("model", "basis_file")
    # options named otherwise than their fields: `preset` is config.json's name for the
    # mutation parameters, from before --preset came to mean a study's sizes
    FLAGS: ClassVar[dict[str, str]] = {
        "preset": "--mutation-params", "targets_file": "--targets", "selection": "--seed-selection",
    }  # fmt: skip
    model: ModelSettings
    # Mutation parameters (the original's): uniform, robustness or distance.
    preset: str = "uniform"
    # simplified (SymPy simplify, as the original) or automatic (SymPy's automatic evaluation
    # only: several times cheaper, a deviation).
    mutant_form: str = "simplified"
    # Seeds: polynomial, x, polynomial_robustness, trig_robustness, trig or target.
    basis: str = "polynomial"
    basis_file: FileRef | None = None  # with basis "file": seeds from it, one problem per line
    # length_penalty, trig_length_penalty, target_length, target_problems or any_failure.
    fitness: str = "length_penalty"
    target_length: int | None = None  # L of target_length.
    targets_file: FileRef | None = None  # target_problems: problems of this file.
    tau: float = 0.01  # Fitness a failure needs to be archived.
    selection: str = "kmeans"  # Seed selection: kmeans or fitness.
    clusters: int = 10  # K-means clusters of seed selection.
    embedding: str = "char"  # char (no download) or st:MODEL.
    generation_size: int = 1000  # Mutants per generation.
    seed_size: int = 100  # Seeds selected per generation.
    archive_size: int = 1000  # Stop at this many archived failures.
    generations: int = 100  # Stop after this many generations.
    seed: int = 43  # Seed of mutations and selection.
    # Candidates checked per problem (the original: the top one of beam 10).
    k: int = 1
    policy: str = "generous"  # generous (a timeout passes, as the original) or strict.
    deadline: float = 2.0  # Verifier seconds per candidate.
    # SymPy simplify seconds per mutant (the original's alarm).
    mutation_deadline: float = 1.0
    # Stop the search after this many minutes of its CPU time in this process (with a backstop
    # of ten times as many of wall clock, one at least), over every run of it in --out (checked
    # between its shards; rerun with more to go on: the same command only reads a finished
    # search). `generations` and `archive_size` are the stops that do not depend on the
    # machine. The analysis after the search is not counted: `tag_limit` and `nearby_attempts`
    # bound it.
    minutes: float | None = None
    workers: int | None = None  # Mutation and verifier processes.
    # Problems per verification shard (what a cluster spreads over workers).
    verify_chunk: int = 100
    # Analysis: tag at most this many failures exploit or robustness, the clusters' central
    # members first (SymPy gets 3 s of CPU time for each).
    tag_limit: int | None = SAGGA_TAG_LIMIT
    # Analysis: mutants of each of a cluster's 3 central members that the model answers in
    # the search for a nearby success (0: none; 20, as the robustness mutation parameters'
    # search does).
    nearby_attempts: int = 20

    def validated(self) -> SaggaConfig:
        """Every field checked: those spelled SAGGA's way here, the rest as the search's
        (`as_search`)."""
        check_choice("--seed-selection", self.selection, SELECTIONS)
        if self.seed_size < 1:
            raise ConfigError("--seed-size", "at least 1", self.seed_size)
        self.as_search().validated()
        return self

    def as_search(self) -> SearchConfig:
        """This search as the failure search's config (`studies.search.search.run_search`):
        SAGGA's breeder on the integration task."""
        return SearchConfig(
            model=self.model, task="integration", breeder="sagga", mutation_params=self.preset,
            mutant_form=self.mutant_form, basis=self.basis, basis_file=self.basis_file,
            fitness=self.fitness, target_length=self.target_length,
            targets_file=self.targets_file, tau=self.tau, selection=self.selection,
            clusters=self.clusters, embedding=self.embedding,
            generation_size=self.generation_size, population=self.seed_size,
            archive_size=self.archive_size, generations=self.generations, seed=self.seed,
            k=self.k, policy=self.policy, deadline=self.deadline,
            mutation_deadline=self.mutation_deadline, minutes=self.minutes,
            workers=self.workers, verify_chunk=self.verify_chunk, tag_limit=self.tag_limit,
            nearby_attempts=self.nearby_attempts,
        )  # fmt: skip
