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
from genprobe.studies.sagga.mutants import MUTANT_FORMS
from genprobe.studies.sagga.seeds import BASES
from genprobe.studies.search.fitness import NAMES as FITNESSES
from genprobe.tasks.integration.mutations import MUTATION_PARAMS
from genprobe.under_test.settings import ModelSettings

SELECTIONS = ("kmeans", "fitness")


@dataclass(frozen=True)
class SaggaConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `run_sagga` validates it."""

    RUNTIME: ClassVar[tuple[str, ...]] = (
        "minutes", "workers", "verify_chunk", "tag_limit", "nearby_attempts",
    )  # fmt: skip
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {"mutant_form": "simplified"}  # after runs existed
    model: ModelSettings
    # the mutation parameters (MUTATION_PARAMS, --mutation-params): uniform, robustness or
    # distance; named `preset` in the identity of every run
    preset: str = "uniform"
    mutant_form: str = "simplified"  # or "automatic": no SymPy simplify (`mutants.py`)
    basis: str = "polynomial"  # a named basis, or "file" with basis_file
    basis_file: FileRef | None = None
    fitness: str = "length_penalty"
    target_length: int | None = None  # L of target_length
    targets_file: FileRef | None = None  # target_problems: problems of this file (else the ten)
    tau: float = 0.01
    selection: str = "kmeans"
    clusters: int = 10  # k-means clusters of seed selection
    embedding: str = "char"
    generation_size: int = 1000
    seed_size: int = 100
    archive_size: int = 1000
    generations: int = 100
    seed: int = 43
    k: int = 1  # candidates checked per problem (the original: the top one of beam 10)
    policy: str = "generous"  # a timeout passes, as in the original; or strict
    deadline: float = 2.0  # verifier seconds per candidate
    mutation_deadline: float = 1.0  # SymPy simplify seconds per mutant (the original's alarm)
    minutes: float | None = None  # CPU minutes of the search (`runs.budget`), every invocation's
    workers: int | None = None  # mutation and verifier processes (None: one per CPU)
    verify_chunk: int = 100  # problems per verify shard (the unit a cluster spreads)
    # The analysis's budgets, in units of work: failures tagged (None: all), and mutants of each
    # of a cluster's central members tried for a nearby success (20, as the robustness mutation
    # parameters' search does).
    tag_limit: int | None = 200
    nearby_attempts: int = 20

    def validated(self) -> SaggaConfig:
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
            ("--k", self.k), ("clusters", self.clusters), ("--verify-chunk", self.verify_chunk),
        ):  # fmt: skip
            if value < 1:
                raise ConfigError(name, "at least 1", value)
        if not (finite(self.tau) and self.tau >= 0):
            raise ConfigError("--tau", "a number ≥ 0", self.tau)
        if not all(finite(s) and s > 0 for s in (self.deadline, self.mutation_deadline)):
            raise ConfigError("--deadline", "positive seconds", self.deadline)
        if self.tag_limit is not None and self.tag_limit < 0:
            raise ConfigError("--tag-limit", "a count ≥ 0", self.tag_limit)
        if self.nearby_attempts < 0:
            raise ConfigError("--nearby-attempts", "a count ≥ 0", self.nearby_attempts)
        if self.minutes is not None and not (finite(self.minutes) and self.minutes > 0):
            raise ConfigError("--minutes", "positive minutes", self.minutes)
        return self
