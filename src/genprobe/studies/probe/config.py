"""What a probe run is: the model under test (a finished sweep, a language model), the task it
is probed on, the inputs perturbed (a split, how many, from which data seed), the families,
relations and compositions, and the k of Fail@k. An endpoint's API is part of it; how its
requests are made (concurrency, timeout, retries, the answer cache) is not: those change no
answer.

Example:
    model = ModelSettings(ModelSpec.parse("run:runs/scan"))
    ProbeConfig(model, families=("add_modifier",), k=5).validated()
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from genprobe.errors import ConfigError, check_choice
from genprobe.runs.config import FileRef, Options, Recorded
from genprobe.tasks.files import SUITE_NAME
from genprobe.tasks.probing import chosen
from genprobe.tasks.registry import load_task, task_probes
from genprobe.tasks.task import Task
from genprobe.under_test.sequences import MAX_K
from genprobe.under_test.settings import ModelSettings

SOLVED_BY = ("paper", "code")  # what counts as solved for the derived suites
ANSWERS = ("greedy", "first")  # a member's one answer: its greedy output, its first candidate


@dataclass(frozen=True)
class ProbeConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `run_probe` validates it."""

    RUNTIME: ClassVar[tuple[str, ...]] = ("workers",)
    FLAT: ClassVar[tuple[str, ...]] = ("model",)
    # settings added after runs existed
    ADDED_DEFAULTS: ClassVar[dict[str, Any]] = {
        "formats": 1, "shots": 0, "shot_draws": 1, "samples": 0, "prompt_seed": 0, "api": "chat",
        "inputs": [], "splits": [], "compositions": [], "draws": 1, "temperature": None,
        "search_budget": None, "search_temperatures": [], "search_suites": [], "derived": [],
        "suite_sizes": {}, "search_where": {}, "solved_by": "paper",
        "answer": "greedy", "shard_size": None,
    }  # fmt: skip
    # the defaults that follow from the task or other settings, as the command line shows them
    DERIVED_DEFAULTS: ClassVar[dict[str, str]] = {
        "families": "every one the task declares",
        "relations": "every one the task declares",
        "search_suites": "every one",
    }
    # the fields the command line gives in its own options: the model's group, --task-option's
    # pairs, the repeatable --input, --suite-size and --search-where
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = (
        "model", "task_options", "inputs", "suite_sizes", "search_where",
    )  # fmt: skip
    # run:RUN_DIR, hf:PATH, openai:MODEL@URL, or an integration model (ckpt:, sympy…), with a
    # language model's prompt grid and an endpoint's settings; recorded at the top of the
    # identity (`ModelSettings.flat_identity`)
    model: ModelSettings
    task: str = ""  # The task (default: the model's own; another is refused).
    task_options: Options = ()
    families: tuple[str, ...] | None = None  # Perturbation families.
    relations: tuple[str, ...] | None = None  # Metamorphic relations.
    # Compositions (SCAN: and, after; integration: sum_2, sum_3, sum_4): suites of composites
    # of base inputs, and Fail@k on those whose every part a member solves.
    compositions: tuple[str, ...] = ()
    # Derived suites (integration: robustness-validation, compositionality): built of the
    # base inputs (and task splits' inputs) every member solves (`solved_by`), once they
    # are decoded, then decoded.
    derived: tuple[str, ...] = ()
    # What counts as solved for --derived: paper (right at rank 1, a verifier timeout
    # failing) or code (as the brittleness study's authors' code: a timeout passing, a base
    # input at any of the k ranks, a split's at rank 1).
    solved_by: str = "paper"
    task_suites: bool = True  # Also decode the task's own shifted suites.
    # More of the task's splits to decode as suites (e.g. the integration task's
    # operator-extrapolation).
    splits: tuple[str, ...] = ()
    # files of inputs of the task (JSON lines with an "input" field), a suite each, named by
    # the file's name without its suffix
    inputs: tuple[FileRef, ...] = ()
    base_split: str = ""  # The inputs perturbed (default: the task's validation split).
    size: int = 200  # Inputs per suite.
    # (suite, inputs) pairs: the size of a task split's or a derived suite where it is not
    # `size` (the base inputs, and the suites made of them by families, relations and
    # compositions, all take `size`)
    suite_sizes: Options = ()
    # Perturbations of each base input per family, drawn one after another, the distinct ones
    # kept: a family's suite holds up to `size` x draws inputs.
    draws: int = 1
    data_seed: int = 0  # Data seed of the base inputs and task suites.
    seed: int = 0  # Seed of the perturbations' random draws (and samples').
    k: int = 1  # Candidates per input: 1 greedy, more by beam search of width k.
    # Each member's one answer, what accuracy counts: greedy (its greedy output, decoded
    # apart) or first (its first of the k candidates: the brittleness study's, no greedy
    # decode).
    answer: str = "greedy"
    # Sample the k candidates instead: the distinct outputs among k samples at this
    # temperature (seeded by `seed` and each input's ids), most probable first.
    temperature: float | None = None
    # A large search too (Welleck et al. 2022, section 6.1): a beam of this width, every
    # distinct answer judged; the report says which failures at k it fixes.
    search_budget: int | None = None
    # `search_budget`: also the distinct outputs among as many samples at each of these
    # temperatures (a sweep, a seq2seq integration model, hf: or openai: of a token task).
    search_temperatures: tuple[float, ...] = ()
    search_suites: tuple[str, ...] = ()  # `search_budget`: the suites searched.
    # `search_budget`: (column, "value|value…") pairs: of those suites, only the inputs whose
    # every named column (`Suite.columns`: a set, a template) holds one of its values
    search_where: Options = ()
    workers: int = 1  # Processes decoding suites side by side.
    # Inputs per decode shard (default: a suite a shard): a killed run loses at most a shard's
    # decoding, and shards of one suite are decoded side by side too.
    shard_size: int | None = None

    def load_task(self) -> Task:
        return load_task(self.task, dict(self.task_options))

    def base(self, task: Task) -> str:
        return self.base_split or task.validation_split

    def size_of(self, key: str) -> int:
        """The inputs of the suite `key` (`suite_key`): its `suite_sizes` entry, else `size`."""
        return int(dict(self.suite_sizes).get(key, self.size))

    def task_splits(self, task: Task) -> list[str]:
        """The task's splits decoded as suites: its shifted suites, then those asked for."""
        own = task.suites() if self.task_suites else ()
        return list(dict.fromkeys((*own, *self.splits)))

    def validated(self) -> ProbeConfig:
        task = self.load_task()
        self.model.validated_as_sequence_model(task)
        if not self.model.spec.answers_tokens(task):  # asked as an integration model is
            self.model.validated_as_model()  # (no prompt grid, a chat), before any suite
        for split in (self.base(task), *self.splits):
            task.split_spec(split)
        probes = task_probes(task)
        chosen(probes.families(), _listed(self.families), "--families")
        chosen(probes.relations(), _listed(self.relations), "--relations")
        chosen(probes.compositions(), list(self.compositions), "--compositions")
        chosen(probes.derived(), list(self.derived), "--derived")
        check_choice("--solved-by", self.solved_by, SOLVED_BY)
        check_choice("--answer", self.answer, ANSWERS)
        if self.size < 1:
            raise ConfigError("--size", "at least 1", self.size)
        self._check_suite_sizes(task)
        if self.draws < 1:
            raise ConfigError("--draws", "at least 1", self.draws)
        if not 1 <= self.k <= MAX_K:
            raise ConfigError("--k", f"1 to {MAX_K}", self.k)
        self.model.spec.check_sampling(self.k, self.temperature, task=self.task)
        self._check_search(task)
        if self.workers < 1:
            raise ConfigError("--workers", "at least 1", self.workers)
        if self.shard_size is not None and self.shard_size < 1:
            raise ConfigError("--shard-size", "at least 1", self.shard_size)
        names = [input_name(path) for path in self.inputs]
        for path, name in zip(self.inputs, names, strict=True):
            if not Path(path).is_file():
                raise ConfigError("--input", "an existing file", path)
            if not SUITE_NAME.match(name):
                raise ConfigError(
                    "--input", "a file named by letters, digits, '_', '-' or '.' (at most 64)", path
                )
            if names.count(name) > 1:
                raise ConfigError("--input", f"files of different names (two are {name!r})", path)
        return self

    def suite_keys(self, task: Task) -> list[str]:
        """The suites a run decodes and reports (`suites.Suite.key`), in report order: the base
        inputs, the families', relations' and compositions', the task's splits, the files',
        the derived suites."""
        probes = task_probes(task)
        families = chosen(probes.families(), _listed(self.families), "--families")
        relations = chosen(probes.relations(), _listed(self.relations), "--relations")
        named = [
            *(("family", name) for name in families),
            *(("relation", name) for name in relations),
            *(("composition", name) for name in self.compositions),
            *(("task", name) for name in self.task_splits(task)),
            *(("input", input_name(path)) for path in self.inputs),
            *(("derived", name) for name in self.derived),
        ]
        return ["base", *(suite_key(kind, name) for kind, name in named)]

    def _check_suite_sizes(self, task: Task) -> None:
        sized = [key for key in self.suite_keys(task) if key.startswith(("task-", "derived-"))]
        for key, inputs in self.suite_sizes:
            if key not in sized:
                raise ConfigError(
                    "--suite-size", f"a task split or derived suite of this run "
                    f"({', '.join(sized) or 'none'}) =N", f"{key}={inputs}",
                )  # fmt: skip
            if not isinstance(inputs, int) or inputs < 1:
                raise ConfigError("--suite-size", f"{key}=N with N at least 1", f"{key}={inputs}")

    def _check_search(self, task: Task) -> None:
        if self.search_budget is None:
            for option, given in (
                ("--search-temperatures", self.search_temperatures),
                ("--search-suites", self.search_suites),
                ("--search-where", [f"{c}={v}" for c, v in self.search_where]),
            ):
                if given:
                    raise ConfigError(option, "with --search-budget", ",".join(map(str, given)))
            return
        if self.search_budget <= self.k:
            raise ConfigError("--search-budget", f"more than --k ({self.k})", self.search_budget)
        keys = self.suite_keys(task)
        for name in self.search_suites:
            if name not in keys:
                raise ConfigError(
                    "--search-suites", f"suites of this run ({', '.join(keys)})", name
                )
        for column, values in self.search_where:
            if not column or not all(str(values).split("|")):
                raise ConfigError("--search-where", "COLUMN=VALUE|VALUE…", f"{column}={values}")
        for temperature in self.search_temperatures:
            self.model.spec.check_sampling(
                self.search_budget, temperature, named="--search-temperatures", task=self.task
            )


def suite_key(kind: str, name: str) -> str:
    """A suite's name among the run's suites (shard key and file name)."""
    return name if kind in ("base", "origin") else f"{kind}-{name}"


def input_name(path: str) -> str:
    """The suite a file of inputs becomes: its name without its suffix."""
    return Path(path).stem


def _listed(names: tuple[str, ...] | None) -> list[str] | None:
    return None if names is None else list(names)
