"""What a failure search is: the model it probes (the seeds of a finished sweep, or a language
model's members: prompt formats x few-shot draws x samples), with `against` a second sweep it is
compared with, the target, the search's sizes, and its breeder: the task's mutations
(`search.TaskBreeder`), or SAGGA's on the integration task (`sagga/breeder.py`, with its
mutation parameters, seeds and verifier settings). Its identity, hashed into the run directory,
holds each sweep's config hash too (a sweep retrained into the same directory is another
model); for a language model, its task, prompt grid and the data seed of the base inputs. The
CPU-time budget, the worker threads, the device and how an endpoint's requests are made are
runtime fields, left out of it.

Example:
    sweep = ModelSettings(ModelSpec.parse("run:runs/parity"))
    SearchConfig(sweep, target="disagree:1,2", generations=20).checked()
    wide = ModelSpec.parse("run:runs/parity-wide")
    SearchConfig(sweep, target="disagree", against=wide).checked()
    asked = ModelSettings(ModelSpec.parse("hf:models/lm"), prompts=PromptGrid(formats=4))
    SearchConfig(asked, task="addition", target="any").checked()
    solver = ModelSettings(ModelSpec.parse("ckpt:runs/bwd"))
    SearchConfig(solver, task="integration", breeder="sagga", selection="kmeans").validated()
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, ClassVar

from genprobe.errors import ConfigError, RunDirError, check_choice, finite
from genprobe.runs.config import FileRef, Options, Recorded
from genprobe.studies.search.fitness import NAMES as FITNESSES
from genprobe.studies.search.fitness import Fitness, Target, make_fitness, read_target_texts
from genprobe.tasks.registry import load_task, task_name, task_probes
from genprobe.tasks.task import Task
from genprobe.under_test.registry import ModelSpec
from genprobe.under_test.sequences import MAX_K, SequenceModel
from genprobe.under_test.settings import ModelSettings, SpecRef

TARGETS = "most, any or disagree:SEED_A,SEED_B"
MEMBER_TARGETS = "most, any or disagree:A,B (A, B: member positions)"
AGAINST_TARGETS = "disagree or disagree:SEED_A,SEED_B with --against"
RUN = "run:RUN_DIR or run:RUN_DIR@SEEDS (a finished sweep)"
MODEL = (
    "run:RUN_DIR[@SEEDS] (a finished sweep), hf:PATH or openai:MODEL@URL (a language model "
    "asked by prompts, with --task), or an integration model (ckpt:, lc:, bundled:, sympy, py:, "
    "with --task integration)"
)
# tournament: among every input evaluated; kmeans, fitness: SAGGA's (`Search.offspring`)
SELECTIONS = ("tournament", "kmeans", "fitness")
BREEDERS = ("task", "sagga")
# the settings of one breeder only, each refused with the other at a value not its default
SAGGA_ONLY = (
    "mutation_params", "mutant_form", "basis", "basis_file", "generation_size", "policy",
    "deadline", "mutation_deadline", "verify_chunk", "nearby_attempts",
)  # fmt: skip
TASK_ONLY = ("target", "mutants", "temperature", "base_split", "base_size", "data_seed")
# --tau when left out: of the target's score alone, and of a fitness weighted by text (SAGGA's)
TAU, TEXT_TAU = 0.5, 0.01
SAGGA_TAG_LIMIT = 200  # failures SAGGA's analysis tags by default, the clusters' central first


@dataclass(frozen=True)
class SearchConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `checked` validates it, against its models too."""

    RUNTIME: ClassVar[tuple[str, ...]] = (
        "minutes", "workers", "tag_limit", "verify_chunk", "nearby_attempts",
    )  # fmt: skip
    FLAT: ClassVar[tuple[str, ...]] = ("model",)
    # settings added after runs existed
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {
        "against": None, "task": "", "task_options": {}, "data_seed": 0, "formats": 1,
        "shots": 0, "shot_draws": 1, "samples": 0, "prompt_seed": 0, "api": "chat",
        "selection": "tournament", "k": 1, "fitness": "any_failure", "target_length": None,
        "targets_file": None, "temperature": None, "breeder": "task", "clusters": 10,
        "embedding": "char", "mutation_params": "uniform", "mutant_form": "simplified",
        "basis": "polynomial", "basis_file": None, "generation_size": 1000, "policy": "generous",
        "deadline": 2.0, "mutation_deadline": 1.0,
    }  # fmt: skip
    # the defaults that follow from other settings, as the command line shows them
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "tau": f"{TAU}; with a fitness that weighs the text: SAGGA's {TEXT_TAU}",
        "base_split": "the task's validation",
        "tag_limit": f"every example the report shows; with --breeder sagga: {SAGGA_TAG_LIMIT}",
        "workers": "torch's default",
    }
    # the fields the command line gives in its own options: the model's group, --against's
    # spec, --task-option's pairs
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("model", "against", "task_options")
    FLAGS: ClassVar[dict[str, str]] = {"targets_file": "--targets"}  # options named otherwise
    # run:RUN_DIR[@SEEDS] (run A), hf:PATH or openai:MODEL@URL, with a language model's prompt
    # grid and an endpoint's settings; recorded at the top of the identity, its path absolute
    # (`ModelSettings.flat_identity`)
    model: ModelSettings
    # Fitness of an input: most (share of seeds failing it), any (1 if a seed fails it) or
    # disagree:A,B (1 if seed A is right and seed B is not; of a language model, A and B are
    # member positions 0, 1, ...). With `against`: disagree (share of the run's seeds right
    # less share of `against`'s, 0 if negative) or disagree:A,B (seed A of the run, seed B of
    # `against`'s).
    target: str = "most"
    generations: int = 20  # Stop after this many generations after the base.
    # Parents selected per generation (SAGGA's selections: besides the base inputs).
    population: int = 50
    # How a generation is made of its parents: task (the task's mutations, `--mutants` of
    # each, decoded and judged by every member in one shard) or sagga (SAGGA's, on the
    # integration task with an integration model: `--generation-size` mutants of the seeds,
    # simplified and filtered, asked of the model, the top k verified by SymPy).
    breeder: str = "task"
    # Parents: tournament (tournaments of two among every input evaluated), or SAGGA's kmeans
    # or fitness (`population` of the inputs the last generation archived: the fittest of
    # `clusters` k-means clusters of their text, or the fittest; then every base input again).
    selection: str = "tournament"
    clusters: int = 10  # K-means clusters of --selection kmeans.
    # Embedding of the texts of --selection kmeans (and, with --breeder sagga, of the fitness
    # target_problems): char (no download) or st:MODEL.
    embedding: str = "char"
    mutants: int = 4  # Mutants made of each parent.
    archive_size: int = 1000  # Stop at this many archived inputs.
    # Fitness an input needs to be archived, in (0, 1].
    tau: float | None = None
    # The target's score times a weight of the input's text, as SAGGA's: any_failure (1),
    # length_penalty (1/length: short failures first), trig_length_penalty, target_length
    # (1/(|length - L| + 1)) or target_problems (similarity to `targets_file`).
    fitness: str = "any_failure"
    target_length: int | None = None  # L of target_length.
    # target_problems: a file of inputs, one per line as the report prints them.
    targets_file: FileRef | None = None
    # A member fails an input when none of its top k candidates (beam search of width k; 1:
    # greedy) is right.
    k: int = 1
    # Sample the k candidates instead: the distinct outputs among k samples at this
    # temperature (seeded by `seed` and each input's ids: the same input gets the same in any
    # generation).
    temperature: float | None = None
    base_split: str | None = None  # Generation 0's split.
    base_size: int = 200  # Inputs of generation 0.
    seed: int = 0  # Seed of parent selection and mutation.
    against: SpecRef | None = None  # run:RUN_DIR[@SEEDS] (run B) of the same task, or None
    # The task: a run's own (the default) or refused; a language model's (needed).
    task: str = ""
    task_options: Options = ()
    # hf:, openai: data seed of the base inputs (a run's: its sweep's own).
    data_seed: int = 0
    # Stop after this many minutes of the search's CPU time in this process (with a backstop
    # of ten times as many of wall clock, one at least), over every run of it in --out
    # (checked between generations; rerun with more to go on: the same command only reads a
    # finished search). `generations` and `archive_size` are the stops that do not
    # depend on the machine.
    minutes: float | None = None
    # Archived inputs the analysis tags as robustness, exploit or unknown, nearest the
    # clusters' centres first, where the task can tell (integration: SymPy's integrate, 3 s
    # each).
    tag_limit: int | None = None
    # Threads of the decoding; per Ray worker: its CPUs; the analysis's tagging processes
    # (default: one per CPU). With --breeder sagga: mutation and verifier processes too.
    workers: int | None = None
    # --breeder sagga: mutation parameters (the original's): uniform, robustness or distance.
    mutation_params: str = "uniform"
    # --breeder sagga: simplified (SymPy simplify, as the original) or automatic (SymPy's
    # automatic evaluation only: several times cheaper, a deviation).
    mutant_form: str = "simplified"
    # --breeder sagga: the seeds, polynomial, x, polynomial_robustness, trig_robustness, trig
    # or target.
    basis: str = "polynomial"
    # --breeder sagga: seeds from a file instead, one problem per line.
    basis_file: FileRef | None = None
    generation_size: int = 1000  # --breeder sagga: mutants per generation.
    # --breeder sagga: generous (a verifier timeout passes, as the original) or strict.
    policy: str = "generous"
    deadline: float = 2.0  # --breeder sagga: verifier seconds per candidate.
    # --breeder sagga: SymPy simplify seconds per mutant (the original's alarm).
    mutation_deadline: float = 1.0
    # --breeder sagga: problems per verification shard (what a cluster spreads over workers).
    verify_chunk: int = 100
    # --breeder sagga: mutants of each of a cluster's 3 central members that the model answers
    # in the analysis's search for a nearby success (0: none).
    nearby_attempts: int = 20

    @property
    def of_run(self) -> bool:
        """Whether the model is a sweep's seeds (`run:`), not a language model."""
        return self.model.spec.prefix == "run"

    def load_task(self) -> Task | None:
        """The task asked (None: the sweep's own)."""
        return load_task(self.task, dict(self.task_options)) if self.task else None

    def searched(self) -> Searched:
        """The models and members searched: model A (`model`) and run B (`against`, if given),
        of a `validated` config.

        Raises:
            ConfigError: a model that is no token model (nor an integration model asked the
                integration task), no task for a language model or an integration model, a
                data seed for a sweep, a task other than a sweep's own, seeds the sweep does
                not have, or an `against` of another task or with a language model.
            RunDirError: not a sweep's run directory, or its training has not finished.
        """
        a = Side.of(self.model.spec, "--model") if self.of_run else Side.asked(self)
        if self.of_run and self.data_seed != self.ADDED_DEFAULTS["data_seed"]:
            raise ConfigError(
                "--data-seed", "left out for a run: model (its sweep's own)", str(a.model)
            )
        asked = self.load_task()
        if self.of_run and asked is not None and asked != a.task:
            raise ConfigError("--task", f"the run's own task ({a.described}) or left out", asked)
        if self.against is None:
            return Searched(a)
        if not self.of_run:
            raise ConfigError(
                "--against", f"left out for a language model ({RUN} only)", str(self.model.spec)
            )
        b = Side.of(self.against, "--against")
        if b.task != a.task:
            raise ConfigError("--against", f"a sweep of the same task ({a.described})", b.described)
        return Searched(a, b)

    def validated(self) -> SearchConfig:
        """Every field checked, without reading the models (`checked` reads them too).

        Raises:
            ConfigError: a size, tau, fitness, selection, k or sampling setting, budget or
                worker count out of range, or a model setting its kind does not take.
            DataFormatError: a targets file that cannot be read.
        """
        check_choice("--breeder", self.breeder, BREEDERS)
        other = dict(task=SAGGA_ONLY, sagga=TASK_ONLY)[self.breeder]
        defaults = {f.name: f.default for f in fields(self)}
        for name in other:
            if getattr(self, name) != defaults[name]:
                flag = "--" + name.replace("_", "-")
                breeder = "task" if self.breeder == "sagga" else "sagga"
                raise ConfigError(flag, f"left out unless --breeder {breeder}", getattr(self, name))
        for name, value in (
            ("--generations", self.generations), ("--population", self.population),
            ("--mutants", self.mutants), ("--archive-size", self.archive_size),
            ("--base-size", self.base_size), ("--clusters", self.clusters),
            ("--generation-size", self.generation_size), ("--verify-chunk", self.verify_chunk),
        ):  # fmt: skip
            if not isinstance(value, int) or value < 1:
                raise ConfigError(name, "an integer >= 1", value)
        check_choice("--selection", self.selection, SELECTIONS)
        if self.minutes is not None and not (finite(self.minutes) and self.minutes > 0):
            raise ConfigError("--minutes", "positive minutes", self.minutes)
        if self.tag_limit is not None and (
            not isinstance(self.tag_limit, int) or self.tag_limit < 0
        ):
            raise ConfigError("--tag-limit", "an integer >= 0", self.tag_limit)
        if self.workers is not None and self.workers < 1:
            raise ConfigError("--workers", "at least 1", self.workers)
        if self.breeder == "sagga":
            return self._validated_for_sagga()
        if self.tau is not None and not 0 < self.tau <= 1:
            raise ConfigError("--tau", "a fitness in (0, 1]", self.tau)
        self.make_fitness(self.target_texts())
        if not 1 <= self.k <= MAX_K:
            raise ConfigError("--k", f"1 to {MAX_K}", self.k)
        self.model.spec.check_sampling(self.k, self.temperature, task=self.task)
        if self.against is not None:
            self.against.check_sampling(self.k, self.temperature, task=self.task)
        self.model.validated_as_sequence_model()  # before a model loads
        return self

    def _validated_for_sagga(self) -> SearchConfig:
        """SAGGA's own checks (`validated` with --breeder sagga): the model and task, the
        mutation and verifier settings, the seeds and targets files."""
        # here: the command line reads this module for its options, and these import SymPy
        from genprobe.studies.search.sagga.mutants import MUTANT_FORMS
        from genprobe.studies.search.sagga.seeds import BASES
        from genprobe.tasks.integration.mutations import MUTATION_PARAMS

        if self.task != "integration":
            raise ConfigError("--task", "integration with --breeder sagga", self.task)
        spec = self.model.spec
        if self.of_run or spec.kind.tokens or self.against is not None:
            raise ConfigError("--model", "an integration model with --breeder sagga", str(spec))
        self.model.validated_as_model()
        check_choice("--mutation-params", self.mutation_params, MUTATION_PARAMS)
        check_choice("--mutant-form", self.mutant_form, MUTANT_FORMS)
        check_choice("--fitness", self.fitness, FITNESSES)
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
        if self.k < 1:
            raise ConfigError("--k", "at least 1", self.k)
        if self.tau is not None and not (finite(self.tau) and self.tau >= 0):
            raise ConfigError("--tau", "a number ≥ 0", self.tau)
        for name, seconds in (
            ("--deadline", self.deadline), ("--mutation-deadline", self.mutation_deadline),
        ):  # fmt: skip
            if not (finite(seconds) and seconds > 0):
                raise ConfigError(name, "positive seconds", seconds)
        if self.nearby_attempts < 0:
            raise ConfigError("--nearby-attempts", "a count ≥ 0", self.nearby_attempts)
        return self

    def checked(self) -> Searched:
        """`validated`, and checked against the models too (their seeds or members, their
        task, which must say which inputs are valid); returns what is searched: the models
        and members read, a language model loaded.

        Raises:
            ConfigError, RunDirError, TaskContractError: what is wrong, in one line (see
                `validated` and `searched`).
            GenprobeError: a language model that cannot be loaded (`as_sequence_model`).
        """
        searched = self.validated().searched()
        task = searched.a.task
        searched.target(self.target)
        task.split_spec(self.base_split or task.validation_split)
        one = task.generate(task.validation_split, 1, searched.a.data_seed)
        task_probes(task).valid_inputs(one.src)  # raises if the task does not say
        if not self.of_run:  # it loads (a folder holds a model, a hub name is known), last
            searched = replace(searched, asked=self.model.sequence_model(task, device="cpu"))
        return searched

    @property
    def archive_tau(self) -> float:
        """--tau, or when left out 0.5 (`any_failure`) or SAGGA's 0.01 (a fitness weighted by
        the input's text, which is far below 1)."""
        if self.tau is not None:
            return self.tau
        return TAU if self.fitness == "any_failure" else TEXT_TAU

    def target_texts(self) -> tuple[str, ...]:
        """The inputs of --targets (none without it), read where the search starts, so that
        a worker elsewhere gets them with its task (`GenerationStage.targets`).

        Raises:
            ConfigError, DataFormatError: --targets or --target-length given with a fitness
                that does not use it, or a targets file that cannot be read.
        """
        for option, value, fitness in (
            ("--target-length", self.target_length, "target_length"),
            ("--targets", self.targets_file, "target_problems"),
        ):
            if value is not None and self.fitness != fitness:
                raise ConfigError(option, f"left out unless --fitness {fitness}", value)
        return () if self.targets_file is None else tuple(read_target_texts(self.targets_file))

    def make_fitness(self, targets: Sequence[str]) -> Fitness:
        """The fitness of an input from its text and failure score; `targets`: `target_texts`.

        Raises:
            ConfigError: an unknown fitness, or a setting it needs missing.
        """
        return make_fitness(self.fitness, length=self.target_length, targets=targets)

    def absolute(self) -> SearchConfig:
        """The same config with its run directories, a local model's folder, the targets and
        basis files and the answer cache absolute (for workers elsewhere), --tau resolved
        (`archive_tau`), a language model's task options as the task reads them (`2`, not
        `"2"`), and a sweep's task left to the sweep (`task` checked to be its own: a search
        of a sweep names none, so its identity is as before)."""
        against = None if self.against is None else self.against.absolute()
        targets = self.targets_file and str(Path(self.targets_file).absolute())
        basis = self.basis_file and str(Path(self.basis_file).absolute())
        moved = replace(
            self, model=self.model.absolute(), tau=self.archive_tau, targets_file=targets,
            basis_file=basis,
        )  # fmt: skip
        if self.of_run:
            return replace(moved, against=against, task="", task_options=())
        task = self.load_task()
        named = {} if task is None else {"task": task_name(task), "task_options": _options(task)}
        return replace(moved, **named)

    def identity(self) -> dict[str, Any]:
        """The identity of the config `absolute`, with each sweep's config hash."""
        from genprobe.studies.seed_sensitivity.results import read_config_hash

        identity = Recorded.identity(self.absolute())
        if self.of_run:
            identity["sweep_hash"] = read_config_hash(self.model.spec.target)
        if self.against is not None:
            identity["against_hash"] = read_config_hash(self.against.target)
        return identity

    @classmethod
    def from_identity(cls, identity: dict[str, Any]) -> SearchConfig:
        """The config of an identity, less its sweeps' hashes."""
        hashes = ("sweep_hash", "against_hash")
        return super().from_identity({k: v for k, v in identity.items() if k not in hashes})


def _options(task: Task) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(task.options().items()))


@dataclass(frozen=True)
class Side:
    """A model under search: the seeds chosen of a finished sweep (`run`), or a language
    model's members."""

    model: ModelSpec
    task: Task
    data_seed: int  # of the base inputs
    labels: tuple[str, ...]  # the members' labels (`seed=3`, `format=0 draw=1`)
    # what a disagree target names: the sweep's seeds, or a language model's member positions
    seeds: tuple[int, ...]
    run: Path | None = None  # a sweep's run directory

    @property
    def described(self) -> str:
        options = "".join(f" {k}={v}" for k, v in self.task.options().items())
        return f"{task_name(self.task)}{options}"

    @property
    def names(self) -> str:
        """What a disagree target names, with those there are."""
        numbers = ", ".join(map(str, self.seeds))
        return f"seeds ({numbers})" if self.run else f"member positions ({numbers})"

    @classmethod
    def of(cls, spec: ModelSpec, option: str) -> Side:
        """A sweep's seeds. Raises ConfigError or RunDirError (see `SearchConfig.searched`)."""
        # here: the command line reads this module for its options, and a sweep's readers
        # import torch
        from genprobe.studies.seed_sensitivity.as_model import checked_seeds
        from genprobe.studies.seed_sensitivity.members import unfinished_seeds
        from genprobe.studies.seed_sensitivity.results import read_sweep

        if spec.prefix != "run":
            raise ConfigError(option, RUN, str(spec))
        path, chosen = spec.target, spec.seeds
        sweep = read_sweep(path)
        unfinished = unfinished_seeds(path)
        if unfinished:
            raise RunDirError(
                f"{path}: seeds {', '.join(map(str, unfinished))} have not finished training: "
                "run the sweep to finish it"
            )
        seeds = sweep.seeds if chosen is None else checked_seeds(sweep, chosen, option)
        labels = tuple(f"seed={seed}" for seed in seeds)
        return cls(spec, sweep.task, sweep.data_seed, labels, seeds, Path(path))

    @classmethod
    def asked(cls, config: SearchConfig) -> Side:
        """A language model's members, or an integration model (one member), asked `config`'s
        task (the model is not loaded).

        Raises:
            ConfigError: a model that is neither, or no task named.
        """
        spec = config.model.spec
        kind = spec.kind
        task = config.load_task()
        integrator = task is not None and task_name(task) == "integration" and not kind.tokens
        if not (kind.tokens or "prompts" in kind.settings or integrator):
            raise ConfigError("--model", MODEL, str(spec))
        if task is None:
            raise ConfigError("--task", "a task to ask the model (it has no own task)", "")
        if integrator:  # as `as_sequence_model` takes it, a language model too
            return cls(spec, task, config.data_seed, (str(spec),), (0,))
        labels = tuple(cell.label() for cell in config.model.prompts.cells())
        return cls(spec, task, config.data_seed, labels, tuple(range(len(labels))))


@dataclass(frozen=True)
class Searched:
    """Model A's members, and run B's seeds after them (`against`): the members, in this
    order."""

    a: Side
    b: Side | None = None
    asked: SequenceModel | None = None  # A's language model, loaded on the CPU to check it

    def check(self) -> None:
        """What a new run asks of a language model before it writes anything
        (`SequenceModel.check`: an endpoint answers, the shots fit); a sweep's seeds need
        nothing more."""
        if self.asked is not None:
            self.asked.check()

    def runs(self) -> dict[str, dict[str, Any]]:
        """Each model by name (A, and B with `against`) as search.json records it: a sweep's
        directory (`run`) or a language model's spec (`model`), and its members' labels
        (`seed=3`, `format=0 draw=1`, or with two runs `A:seed=3` and `B:seed=3`)."""
        sides = {"A": self.a} if self.b is None else {"A": self.a, "B": self.b}
        prefix = (lambda name: "") if self.b is None else (lambda name: f"{name}:")
        return {
            name: {
                **({"run": str(side.run.absolute())} if side.run else {"model": str(side.model)}),
                "members": [f"{prefix(name)}{label}" for label in side.labels],
            }
            for name, side in sides.items()
        }

    @property
    def members(self) -> list[str]:
        """Every member's label, run A's first."""
        return [label for run in self.runs().values() for label in run["members"]]

    def target(self, target: str) -> Target:
        """Raises ConfigError: an unknown target, one that needs --against or does not take
        it, or a seed the run does not have (for a language model: a member position)."""
        two, other = self.b is not None, self.b or self.a
        if target in ("most", "any") and not two:
            return Target(target)
        offset = len(self.a.seeds) if two else 0  # where run B's members start
        if target == "disagree" and two:
            everyone = range(offset + len(other.seeds))
            return Target("disagree", tuple(everyone[:offset]), tuple(everyone[offset:]))
        kind, colon, pair = target.partition(":")
        parts = pair.split(",")
        if (
            kind != "disagree"
            or not colon
            or len(parts) != 2
            or not all(p.isdigit() for p in parts)
        ):
            expected = TARGETS if self.a.run else MEMBER_TARGETS
            raise ConfigError("--target", AGAINST_TARGETS if two else expected, target)
        a, b = (int(p) for p in parts)
        if a not in self.a.seeds or b not in other.seeds or (a == b and not two):
            said = (
                f"a seed of the run ({_listed(self.a)}), then one of --against's ({_listed(other)})"
                if two
                else f"disagree between two of the {'run' if self.a.run else 'model'}'s "
                f"{self.a.names}"
            )
            raise ConfigError("--target", said, target)
        return Target("disagree", (self.a.seeds.index(a),), (offset + other.seeds.index(b),))


def _listed(side: Side) -> str:
    return ", ".join(map(str, side.seeds))
