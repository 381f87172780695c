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
from pathlib import Path
from typing import Any, ClassVar

from genprobe.errors import ConfigError, check_choice, finite
from genprobe.runs.config import FileRef, Recorded
from genprobe.studies.search.fitness import NAMES as FITNESSES
from genprobe.under_test.settings import ModelSettings

SELECTIONS = ("kmeans", "fitness")


@dataclass(frozen=True)
class SaggaConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `run_sagga` validates it."""

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
    # members first (SymPy gets 3 s of CPU time for each; none: all).
    tag_limit: int | None = 200
    # Analysis: mutants of each of a cluster's 3 central members that the model answers in
    # the search for a nearby success (0: none; 20, as the robustness mutation parameters'
    # search does).
    nearby_attempts: int = 20

    def validated(self) -> SaggaConfig:
        # here: the command line reads this module for its options, and these import SymPy
        from genprobe.studies.search.sagga.mutants import MUTANT_FORMS
        from genprobe.studies.search.sagga.seeds import BASES
        from genprobe.tasks.integration.mutations import MUTATION_PARAMS

        self.model.validated_as_model()
        check_choice("--mutation-params", self.preset, MUTATION_PARAMS)
        check_choice("--mutant-form", self.mutant_form, MUTANT_FORMS)
        check_choice("--fitness", self.fitness, FITNESSES)
        check_choice("--seed-selection", self.selection, SELECTIONS)
        check_choice("--policy", self.policy, ("generous", "strict"))
        if self.basis_file is not None:
            if not Path(self.basis_file).is_file():
                raise ConfigError("--basis-file", "an existing file", self.basis_file)
        else:
            check_choice("--basis", self.basis, BASES)
        if self.targets_file is not None and not Path(self.targets_file).is_file():
            raise ConfigError("--targets", "an existing file", self.targets_file)
        if self.fitness == "target_length" and (self.target_length or 0) < 1:
            raise ConfigError("--target-length", "a positive length", self.target_length)
        for name, value in (
            ("--generation-size", self.generation_size), ("--seed-size", self.seed_size),
            ("--archive-size", self.archive_size), ("--generations", self.generations),
            ("--k", self.k), ("--clusters", self.clusters), ("--verify-chunk", self.verify_chunk),
        ):  # fmt: skip
            if value < 1:
                raise ConfigError(name, "at least 1", value)
        if not (finite(self.tau) and self.tau >= 0):
            raise ConfigError("--tau", "a number ≥ 0", self.tau)
        for name, seconds in (
            ("--deadline", self.deadline), ("--mutation-deadline", self.mutation_deadline),
        ):  # fmt: skip
            if not (finite(seconds) and seconds > 0):
                raise ConfigError(name, "positive seconds", seconds)
        if self.tag_limit is not None and self.tag_limit < 0:
            raise ConfigError("--tag-limit", "a count ≥ 0", self.tag_limit)
        if self.nearby_attempts < 0:
            raise ConfigError("--nearby-attempts", "a count ≥ 0", self.nearby_attempts)
        if self.minutes is not None and not (finite(self.minutes) and self.minutes > 0):
            raise ConfigError("--minutes", "positive minutes", self.minutes)
        return self
