"""Every kind of model under test, by spec-string prefix. One explicit table; each entry names
its factory as "module:function", imported only when that kind is loaded, so listing models
imports neither torch nor httpx.

To add a kind: write an adapter (a `genprobe.under_test.adapters.integration_model.Model` for the
integration task, a `genprobe.under_test.sequences.SequenceModel` for token tasks, `tokens=True`)
with a factory taking the text after the colon plus its keyword settings, and add a row here.
A kind that knows the inputs its models were trained on names a `trained_on` function too: the
probe and the search mark those inputs.

Example:
    load_model("lc:fwd_bwd_ibp.pth", decoding=DecodingConfig(beam_size=10))
    load_model("sympy", deadline=5.0)
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genprobe.errors import ConfigError, UnknownModelError

if TYPE_CHECKING:
    import numpy as np

    from genprobe.tasks.task import Task
    from genprobe.under_test.adapters.integration_model import Model


def _checkpoint_path(argument: str) -> None:
    if not Path(argument).exists():
        raise ConfigError("--model", "a checkpoint file that exists", argument)


def _run_directory(argument: str) -> None:
    path = run_spec(argument)[0]
    if not Path(path).is_dir():
        raise ConfigError("--model", "a run directory that exists", path)


def run_spec(argument: str) -> tuple[str, tuple[int, ...] | None]:
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


def _absolute_path(argument: str) -> str:
    return str(Path(argument).absolute())


def _absolute_run(argument: str) -> str:
    """The run directory absolute, the seeds listed one by one."""
    path, seeds = run_spec(argument)
    chosen = "" if seeds is None else "@" + ",".join(map(str, seeds))
    return f"{Path(path).absolute()}{chosen}"


def _absolute_folder(argument: str) -> str:
    """A model's folder absolute; a hub name as given."""
    from genprobe.under_test.adapters.causal_lm import hub_name

    return argument if hub_name(argument) is not None else _absolute_path(argument)


def _bundled_name(argument: str) -> None:
    from genprobe.models.bundled import bundled_checkpoint

    bundled_checkpoint(argument)


def _model_folder_or_hub_name(argument: str) -> None:
    """A folder that exists, or a Hugging Face hub name (not loaded: whether the hub or the
    cache holds it is known only then)."""
    from genprobe.under_test.adapters.causal_lm import hub_name

    if hub_name(argument) is None and not Path(argument).is_dir():
        expected = "the folder of a saved model that exists, or a Hugging Face hub name ORG/NAME"
        raise ConfigError("--model", expected, argument)


def _user_function(argument: str) -> None:
    from genprobe.under_test.adapters.callable import user_function

    user_function(argument)


@dataclass(frozen=True)
class ModelKind:
    factory: str  # "module:function"; the function takes the spec's argument and settings
    usage: str
    help: str
    settings: tuple[str, ...]  # the keyword settings the factory accepts
    takes_argument: bool = True
    # a seq2seq network: beam and sampling settings apply, and `score` gives log-probabilities
    seq2seq: bool = False
    # its `SequenceModel.sampled` draws samples (a probe's --temperature applies)
    samples: bool = False
    # checks the spec's argument without loading the model (raises a GenprobeError)
    check: Callable[[str], None] | None = None
    # a model of a token task (`genprobe.under_test.sequences.SequenceModel`), not of integration
    tokens: bool = False
    # the argument with its local path absolute, so a worker elsewhere finds it (None: no path)
    absolute: Callable[[str], str] | None = None
    # "module:function" taking the argument and the task: the inputs the model was trained on
    # (ids as in `Examples.src`), or None where it cannot say; None: the kind never can
    trained_on: str | None = None


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
    "py": ModelKind(
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
        ("device",),
        check=_run_directory,
        tokens=True,
        samples=True,
        absolute=_absolute_run,
        trained_on="genprobe.studies.seed_sensitivity.as_model:trained_on",
    ),
}


def model_kind(spec: str) -> ModelKind:
    """The kind a spec names.

    Raises:
        UnknownModelError: the prefix names no kind (with near matches and the full list).
    """
    prefix = spec.partition(":")[0]
    kind = MODELS.get(prefix)
    if kind is None:
        near = difflib.get_close_matches(prefix, MODELS, n=3)
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        known = ", ".join(k.usage for k in MODELS.values())
        raise UnknownModelError(f"unknown model {spec!r}.{hint} Known: {known}")
    return kind


def check_spec(spec: str, option: str = "--model") -> ModelKind:
    """The kind `spec` names, once its argument is checked without loading the model: a
    checkpoint path exists, a `py:` function imports. For commands, before they write anything;
    a ConfigError names the spec as `option`.

    Raises:
        UnknownModelError: the prefix names no kind (with near matches and the full list).
        GenprobeError: the argument is missing, malformed or names nothing (ConfigError, or
            the import error of a `py:` module).
    """
    kind = model_kind(spec)
    _, colon, argument = spec.partition(":")
    if kind.takes_argument and not argument:
        raise ConfigError(option, kind.usage, spec)
    if not kind.takes_argument and colon:
        raise ConfigError(option, f"{kind.usage} (no argument)", spec)
    if kind.check is not None:
        try:
            kind.check(argument)
        except ConfigError as error:
            raise ConfigError(option, error.expected, error.got) from None
    return kind


def absolute_spec(spec: str) -> str:
    """`spec` with the local path it names absolute (a checkpoint, a run directory and its seeds
    listed one by one, a model's folder), for workers in other directories or on other
    machines; a name, an endpoint or a function as given."""
    kind = model_kind(spec)
    prefix, _, argument = spec.partition(":")
    return spec if kind.absolute is None else f"{prefix}:{kind.absolute(argument)}"


def load_model(spec: str, **settings: Any) -> Model:
    """The model a spec string names. Settings a kind does not take are ignored, so one set of
    CLI options serves every kind.

    Raises:
        UnknownModelError: the prefix names no kind (with near matches and the full list).
        GenprobeError: the argument is missing, malformed or names nothing (see `check_spec`).
    """
    kind = check_spec(spec)
    _, _, argument = spec.partition(":")
    factory = _imported(kind.factory)
    chosen = {name: value for name, value in settings.items() if name in kind.settings}
    return factory(argument, **chosen) if kind.takes_argument else factory(**chosen)


def training_inputs(spec: str, task: Task) -> np.ndarray | None:
    """(n, L) the inputs of `task` the model `spec` names was trained on, where it knows them
    (a sweep's training data), without loading it; None where it does not.

    Raises:
        UnknownModelError, GenprobeError: as `check_spec`.
        DataFormatError: the model's record of its training data is damaged.
    """
    kind = check_spec(spec)
    if kind.trained_on is None:
        return None
    return _imported(kind.trained_on)(spec.partition(":")[2], task)


def _imported(target: str) -> Callable[..., Any]:
    """The function a "module:function" string names."""
    module_name, _, function = target.partition(":")
    return getattr(importlib.import_module(module_name), function)
