"""Every kind of model under test, by spec-string prefix. One explicit table; each entry names
its factory as "module:function", imported only when that kind is loaded, so listing models
imports neither torch nor httpx.

To add a kind: write an adapter (a `genprobe.under_test.adapters.integration_model.Model` for the
integration task, a `genprobe.under_test.sequences.SequenceModel` for token tasks, `tokens=True`)
with a factory taking the text after the colon (less a run's seeds) plus its keyword settings,
and add a row here.
A kind that knows the inputs its models were trained on names a `trained_on` function too: the
probe and the search mark those inputs; one that knows the task its models were made for, an
`own_task` function, read without loading the model.

A spec's text is parsed once, into a `ModelSpec`, which the studies pass on.

Example:
    load_model("lc:fwd_bwd_ibp.pth", decoding=DecodingConfig(beam_size=10))
    spec = ModelSpec.parse("run:runs/scan@1-3")  # checked: the run directory exists
    spec.absolute(), spec.task_of(None), spec.load(device="cpu")
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genprobe.errors import ConfigError, UnknownModelError, finite
from genprobe.user_code import USER_PREFIX

if TYPE_CHECKING:
    import numpy as np

    from genprobe.tasks.task import Task
    from genprobe.under_test.adapters.integration_model import Model


def _checkpoint_path(spec: ModelSpec) -> None:
    if not Path(spec.target).exists():
        raise ConfigError("--model", "a checkpoint file that exists", spec.target)


def _run_directory(spec: ModelSpec) -> None:
    if not Path(spec.target).is_dir():
        raise ConfigError("--model", "a run directory that exists", spec.target)


def _run_parts(argument: str) -> tuple[str, tuple[int, ...] | None]:
    """(run directory, the seeds chosen or None for all) of a `run:` spec's argument.

    Raises:
        ConfigError: the seeds after `@` are not numbers or ranges.
    """
    path, at, chosen = argument.rpartition("@")
    if not at or Path(argument).exists():
        return argument, None
    seeds: list[int] = []
    try:
        for part in chosen.split(","):
            low, dash, high = part.partition("-")
            seeds += range(int(low), int(high) + 1) if dash else [int(low)]
    except ValueError:
        expected = "run:RUN_DIR@SEEDS with SEEDS like 3, 1,4 or 2-5"
        raise ConfigError("--model", expected, argument) from None
    return path, tuple(seeds)


def _absolute_path(target: str) -> str:
    return str(Path(target).absolute())


def _absolute_folder(target: str) -> str:
    """A model's folder absolute; a hub name as given."""
    from genprobe.under_test.adapters.causal_lm import hub_name

    return target if hub_name(target) is not None else _absolute_path(target)


def _bundled_name(spec: ModelSpec) -> None:
    from genprobe.models.bundled import bundled_checkpoint

    bundled_checkpoint(spec.target)


def _model_folder_or_hub_name(spec: ModelSpec) -> None:
    """A folder that exists, or a Hugging Face hub name (not loaded: whether the hub or the
    cache holds it is known only then)."""
    from genprobe.under_test.adapters.causal_lm import hub_name

    if hub_name(spec.target) is None and not Path(spec.target).is_dir():
        expected = "the folder of a saved model that exists, or a Hugging Face hub name ORG/NAME"
        raise ConfigError("--model", expected, spec.target)


def _user_function(spec: ModelSpec) -> None:
    from genprobe.under_test.adapters.callable import user_function

    user_function(spec.target)


@dataclass(frozen=True)
class ModelKind:
    # "module:function"; the function takes what the spec names (`ModelSpec.target`) and the
    # settings it accepts (`run:` its seeds too)
    factory: str
    usage: str
    help: str
    settings: tuple[str, ...]  # the keyword settings the factory accepts
    takes_argument: bool = True
    # a seq2seq network: beam and sampling settings apply, and `score` gives log-probabilities
    seq2seq: bool = False
    # its `SequenceModel.sampled` draws samples (a probe's --temperature applies)
    samples: bool = False
    # checks the parsed spec names a model, without loading it (raises a GenprobeError)
    check: Callable[[ModelSpec], None] | None = None
    # a model of a token task (`genprobe.under_test.sequences.SequenceModel`), not of integration
    tokens: bool = False
    # what the spec names as an absolute path, so a worker elsewhere finds it (None: no path)
    absolute: Callable[[str], str] | None = None
    # what the argument names and the seeds it chooses (`ModelSpec.target`, `.seeds`); None:
    # the argument whole, no seeds
    parts: Callable[[str], tuple[str, tuple[int, ...] | None]] | None = None
    # "module:function" taking the spec and a task: the inputs the model was trained on
    # (ids as in `Examples.src`), or None where it cannot say; None: the kind never can
    trained_on: str | None = None
    # "module:function" taking the spec: the task the model was made for, read without loading
    # it (None: a model of integration, or a language model asked the task it is given)
    own_task: str | None = None


MODELS: dict[str, ModelKind] = {
    "ckpt": ModelKind(
        "genprobe.under_test.adapters.seq2seq:from_checkpoint",
        "ckpt:PATH",
        "a transformer trained by `genprobe integration train` (file or run directory)",
        ("decoding", "device"),
        seq2seq=True,
        samples=True,
        check=_checkpoint_path,
        absolute=_absolute_path,
    ),
    "lc": ModelKind(
        "genprobe.under_test.adapters.seq2seq:from_lc_checkpoint",
        "lc:PATH",
        "Lample & Charton's released checkpoint (fwd_bwd_ibp.pth, ...), read weights-only",
        ("decoding", "device"),
        seq2seq=True,
        samples=True,
        check=_checkpoint_path,
        absolute=_absolute_path,
    ),
    "bundled": ModelKind(
        "genprobe.under_test.adapters.seq2seq:from_bundled",
        "bundled:NAME",
        "a transformer shipped with genprobe (integration-cpu: docs/models.md; its test split "
        "is data/mix6.txt.test from `make strong-data`)",
        ("decoding", "device"),
        seq2seq=True,
        samples=True,
        check=_bundled_name,
    ),
    "sympy": ModelKind(
        "genprobe.under_test.adapters.sympy_cas:from_spec",
        "sympy",
        "SymPy's integrate, killed at a deadline per problem",
        ("deadline", "workers"),
        takes_argument=False,
    ),
    "openai": ModelKind(
        "genprobe.under_test.adapters.openai:from_spec",
        "openai:MODEL@URL",
        "an OpenAI-compatible endpoint (key from $OPENAI_API_KEY), cached on disk, of every "
        "task: integration in its own chat prompt; any other task's inputs asked as prompts "
        "(chat, or the completions API with api=completions), its members prompt formats x "
        "few-shot draws x samples",
        (
            "concurrency",
            "retries",
            "backoff",
            "timeout",
            "temperature",
            "cache_dir",
            "max_tokens",
            "task",
            "prompts",
            "api",
        ),
        samples=True,
    ),
    USER_PREFIX: ModelKind(
        "genprobe.under_test.adapters.callable:from_spec",
        "py:module:function",
        "any Python function f(problem_text, k) -> answer(s)",
        (),
        check=_user_function,
    ),
    "hf": ModelKind(
        "genprobe.under_test.adapters.prompted:from_hf",
        "hf:PATH",
        "a Hugging Face causal language model saved in folder PATH with its tokenizer, or a hub "
        "name ORG/NAME (from the Hugging Face cache), asked the task's inputs as prompts; its "
        "members are prompt formats x few-shot draws x samples",
        ("task", "prompts", "device"),
        samples=True,
        check=_model_folder_or_hub_name,
        tokens=True,
        absolute=_absolute_folder,
    ),
    "run": ModelKind(
        "genprobe.studies.seed_sensitivity.as_model:from_run",
        "run:RUN_DIR[@SEEDS]",
        "every seed of a finished sweep (`genprobe sweep`), or those named (@3, @1,4, @2-5), "
        "decoding as one stacked model: a model of the sweep's task for `probe` and `search`",
        ("device", "seeds"),
        check=_run_directory,
        tokens=True,
        samples=True,
        absolute=_absolute_path,
        parts=_run_parts,
        trained_on="genprobe.studies.seed_sensitivity.as_model:trained_on",
        own_task="genprobe.studies.seed_sensitivity.as_model:own_task",
    ),
}


@dataclass(frozen=True)
class ModelSpec:
    """A model spec (`ckpt:runs/bwd`, `run:runs/scan@1-3`, `sympy`, `openai:m@http://...`),
    parsed once: its kind's prefix, the text after the colon, and what that names.

    `parse` takes text given by a user and checks that it names a model, without loading it;
    `read` takes a spec a run recorded, as it is (its files may have moved since). `str(spec)`
    is the text.
    """

    prefix: str  # the kind's name in `MODELS`
    argument: str  # the text after the colon ("" for a kind that takes none)
    target: str  # what the argument names: a file, a folder, a run directory, an endpoint, ...
    seeds: tuple[int, ...] | None = None  # run:RUN_DIR@SEEDS: the seeds chosen (None: every one)

    @classmethod
    def parse(cls, text: str, option: str = "--model") -> ModelSpec:
        """The spec `text` names, once its argument is checked without loading the model: a
        checkpoint path exists, a `py:` function imports. A ConfigError names it as `option`.

        Raises:
            UnknownModelError: the prefix names no kind (with near matches and the full list).
            GenprobeError: the argument is missing, malformed or names nothing (ConfigError, or
                the import error of a `py:` module).
        """
        spec = cls.read(text, option)
        if spec.kind.check is not None:
            with _named(option):
                spec.kind.check(spec)
        return spec

    @classmethod
    def read(cls, text: str, option: str = "--model") -> ModelSpec:
        """The spec `text` names, its argument's form checked but not what it names.

        Raises:
            UnknownModelError: the prefix names no kind.
            ConfigError: the argument is missing, given to a kind that takes none, or (`run:`)
                its seeds are malformed.
        """
        prefix, colon, argument = text.partition(":")
        kind = MODELS.get(prefix)
        if kind is None:
            near = difflib.get_close_matches(prefix, MODELS, n=3)
            hint = f" Did you mean: {', '.join(near)}?" if near else ""
            known = ", ".join(k.usage for k in MODELS.values())
            raise UnknownModelError(f"unknown model {text!r}.{hint} Known: {known}")
        if kind.takes_argument and not argument:
            raise ConfigError(option, kind.usage, text)
        if not kind.takes_argument and colon:
            raise ConfigError(option, f"{kind.usage} (no argument)", text)
        with _named(option):
            target, seeds = (argument, None) if kind.parts is None else kind.parts(argument)
        return cls(prefix, argument, target, seeds)

    def __str__(self) -> str:
        return f"{self.prefix}:{self.argument}" if self.kind.takes_argument else self.prefix

    @property
    def kind(self) -> ModelKind:
        return MODELS[self.prefix]

    def absolute(self) -> ModelSpec:
        """This spec with the local path it names absolute (a checkpoint, a run directory and
        its seeds listed one by one, a model's folder), for workers in other directories or on
        other machines; a name, an endpoint or a function as given."""
        if self.kind.absolute is None:
            return self
        target = self.kind.absolute(self.target)
        chosen = "" if self.seeds is None else "@" + ",".join(map(str, self.seeds))
        return replace(self, argument=target + chosen, target=target)

    def load(self, **settings: Any) -> Model:
        """The model this spec names. Settings its kind does not take are ignored, so one set
        of settings serves every kind.

        Raises:
            GenprobeError: what the model's files or endpoint hold cannot be loaded.
        """
        factory = _imported(self.kind.factory)
        given = {**settings, "seeds": self.seeds}
        chosen = {name: value for name, value in given.items() if name in self.kind.settings}
        return factory(self.target, **chosen) if self.kind.takes_argument else factory(**chosen)

    def training_inputs(self, task: Task) -> np.ndarray | None:
        """(n, L) the inputs of `task` the model was trained on, where it knows them (a sweep's
        training data), without loading it; None where it does not.

        Raises:
            DataFormatError: the model's record of its training data is damaged.
        """
        if self.kind.trained_on is None:
            return None
        return _imported(self.kind.trained_on)(self, task)

    def task_of(self, asked: Task | None) -> Task:
        """The task the model answers when asked `asked` (None: its own), learned without
        loading it where the registry can say: a sweep's own task (`run:`, whatever is asked),
        the task asked of a language model, integration of an integration model.

        Raises:
            ConfigError: a language model that has no own task asked none (hf:), or an
                integration model asked another task.
            RunDirError: a `run:` directory that holds no sweep.
        """
        from genprobe.tasks.integration.task import IntegrationTask
        from genprobe.tasks.registry import task_name

        if self.answers_tokens(asked):
            if self.kind.own_task is not None:
                return _imported(self.kind.own_task)(self)
            if asked is None:
                expected = "a task to ask the language model (it has no own task)"
                raise ConfigError("--task", expected, "")
            return asked
        if asked is not None and not isinstance(asked, IntegrationTask):
            raise ConfigError(
                "--task", f"integration for the integration model {self}", task_name(asked)
            )
        return asked or IntegrationTask()

    def answers_tokens(self, asked: Task | None) -> bool:
        """Whether the model answers `asked` (None: its own task) as a model of a token task
        (`run:`, `hf:`, a language model asked a task other than integration), not as an
        integration model."""
        from genprobe.tasks.integration.task import IntegrationTask

        language_model = "prompts" in self.kind.settings  # asks any task's inputs as prompts
        return self.kind.tokens or (
            language_model and not isinstance(asked, IntegrationTask | None)
        )

    def check_sampling(
        self, k: int, temperature: float | None, named: str = "--temperature", task: str = ""
    ) -> None:
        """A temperature (the k candidates sampled, `SequenceModel.sampled`) is positive, comes
        with k of 2 or more, and asks a model that samples `task` ("": the model's own); None
        (beam search) always holds. `named`: the temperature's option in errors.

        Raises:
            ConfigError: it does not.
        """
        if temperature is None:
            return
        if not (finite(temperature) and temperature > 0):
            raise ConfigError(named, "a positive number", temperature)
        if k < 2:
            raise ConfigError(named, "with --k 2 or more (the samples drawn)", k)
        kind = self.kind
        # integration is asked of a seq2seq network, or of an integration model not sampling
        integration = task == "integration" or (not task and not kind.tokens)
        if not kind.samples or (integration and not kind.seq2seq):
            sampling = ", ".join(
                f"{name}:"
                for name, other in MODELS.items()
                if other.samples and (other.seq2seq or not integration)
            )
            asked = " the integration task" if integration and kind.samples else ""
            raise ConfigError(
                named,
                f"left out for a model that does not sample{asked} ({sampling} do)",
                str(self),
            )

    def checkpoint_file(self) -> Path | None:
        """The checkpoint file a `ckpt:`, `lc:` or `bundled:` spec names (a run directory's
        `model.pt`), or None for other kinds."""
        from genprobe.models.bundled import WEIGHTS

        if self.prefix not in ("ckpt", "lc", "bundled"):
            return None
        path = WEIGHTS / self.target / "model.pt" if self.prefix == "bundled" else Path(self.target)
        return path / "model.pt" if self.prefix == "ckpt" and path.is_dir() else path

    def fingerprint(self) -> str | None:
        """sha256 of the checkpoint a `ckpt:`, `lc:` or `bundled:` spec names (None for other
        kinds, or a file that is not there: loading it will say so)."""
        from genprobe.runs.provenance import file_digest

        path = self.checkpoint_file()
        return file_digest(path) if path is not None and path.is_file() else None


def load_model(spec: str, **settings: Any) -> Model:
    """The model the spec text names: `ModelSpec.parse(spec).load(**settings)`.

    Raises:
        UnknownModelError: the prefix names no kind (with near matches and the full list).
        GenprobeError: the argument is missing, malformed or names nothing, or the model
            cannot be loaded.
    """
    return ModelSpec.parse(spec).load(**settings)


@contextlib.contextmanager
def _named(option: str) -> Iterator[None]:
    """A ConfigError of a spec's argument, named as `option`."""
    try:
        yield
    except ConfigError as error:
        raise ConfigError(option, error.expected, error.got) from None


def _imported(target: str) -> Callable[..., Any]:
    """The function a "module:function" string names."""
    module_name, _, function = target.partition(":")
    return getattr(importlib.import_module(module_name), function)
