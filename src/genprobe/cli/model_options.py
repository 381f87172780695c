"""The options that name a model under test and how it decodes, shared by every command that
runs one (`predict`, `score`, `evaluate`, `brittleness`): `--model`, `--beam`, `--decoding`, …
(`ModelOptions`); and those of a language model's prompt grid (`--formats`, `--shots`, …) and
an endpoint's settings (`--api`, `--cache-dir`, `--concurrency`, …) that `probe` and `search`
share (`PromptOptions`). A command takes a group whole with `with_options`."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer

from genprobe.cli.paths import output_folder

if TYPE_CHECKING:
    from genprobe.under_test.settings import ModelSettings

ModelSpec = Annotated[
    str,
    typer.Option(
        "--model", help="ckpt:PATH, lc:PATH, bundled:NAME, sympy, openai:MODEL@URL, py:mod:fn."
    ),
]
Decoding = Annotated[str, typer.Option("--decoding", help="beam, greedy or sample.")]
# `probe` and `search`: the k candidates sampled instead of the beam's
TEMPERATURE = typer.Option(
    None,
    help="Sample the k candidates instead: the distinct outputs among k samples at this "
    "temperature, most probable first (a sweep, a seq2seq integration model, hf: or openai: "
    "of a token task) [beam].",
)
Beam = Annotated[int, typer.Option("--beam", help="Beam size (raised to k if smaller).")]
LengthPenalty = Annotated[float, typer.Option(help="Beam score = log-prob / length^this.")]
MaxLen = Annotated[int, typer.Option(help="Most generated tokens per candidate.")]
Temperature = Annotated[float, typer.Option(help="Sampling temperature (also for openai:).")]
BatchSize = Annotated[int, typer.Option(help="Problems per model call.")]
Device = Annotated[str, typer.Option(help="cpu, cuda, cuda:1, ...")]
Deadline = Annotated[float, typer.Option("--model-deadline", help="sympy: seconds per problem.")]
CacheDir = Annotated[
    Path,
    typer.Option(
        help="openai: answer cache directory (a rerun sends nothing).", callback=output_folder
    ),
]
Concurrency = Annotated[int, typer.Option(help="openai: requests in flight at once.")]
Timeout = Annotated[float, typer.Option(help="openai: seconds per request (default 60).")]
Retries = Annotated[
    int, typer.Option(help="openai: further attempts after a failed request (default 4).")
]
Formats = Annotated[
    int, typer.Option(help="hf:, openai: equivalent prompt formats, one member each.")
]
Shots = Annotated[int, typer.Option(help="hf:, openai: training examples shown in each prompt.")]
ShotDraws = Annotated[
    int, typer.Option(help="hf:, openai: draws of those examples, one member each.")
]
Samples = Annotated[
    int, typer.Option(help="hf:, openai: sampling seeds per format and draw [0: greedy].")
]
PromptSeed = Annotated[
    int, typer.Option(help="hf:, openai: seed of the formats, shots and samples.")
]
Api = Annotated[
    str,
    typer.Option(
        help="openai: chat (the prompt as the user's message) or completions (as the legacy "
        "API's prompt: a base model served without a chat template)."
    ),
]


@dataclass(frozen=True)
class ModelOptions:
    """The options naming a model under test and how it decodes (`--model`, `--beam`, …)."""

    model_spec: ModelSpec
    beam: Beam = 10
    decoding: Decoding = "beam"
    length_penalty: LengthPenalty = 1.0
    max_len: MaxLen = 200
    temperature: Temperature = None
    batch_size: BatchSize = 64
    device: Device = "cpu"
    model_deadline: Deadline = 5.0
    cache_dir: CacheDir = None
    concurrency: Concurrency = 8

    def settings(self) -> ModelSettings:
        """The settings a run records, once `--model` is checked (before anything is written).

        Raises:
            GenprobeError: `--model` names no model (see `genprobe.under_test.registry.check_spec`).
        """
        from genprobe.decoding.config import DecodingConfig
        from genprobe.under_test.registry import check_spec
        from genprobe.under_test.settings import ModelSettings

        check_spec(self.model_spec)
        t = self.temperature
        decoding = DecodingConfig(
            method=self.decoding, beam_size=self.beam, max_len=self.max_len,
            length_penalty=self.length_penalty, temperature=1.0 if t is None else t,
            batch_size=self.batch_size,
        )  # fmt: skip
        return ModelSettings(
            self.model_spec, decoding, deadline=self.model_deadline, temperature=t,
            device=self.device, cache_dir=None if self.cache_dir is None else str(self.cache_dir),
            concurrency=self.concurrency,
        )  # fmt: skip

    def load(self, min_beam: int = 1) -> Any:
        return self.settings().load(min_beam)


@dataclass(frozen=True)
class PromptOptions:
    """A language model's prompt grid and an endpoint's settings (`--formats`, `--api`, …)."""

    formats: Formats = 1
    shots: Shots = 0
    shot_draws: ShotDraws = 1
    samples: Samples = 0
    prompt_seed: PromptSeed = 0
    api: Api = "chat"
    cache_dir: CacheDir = None
    concurrency: Concurrency = None
    timeout: Timeout = None
    retries: Retries = None

    def settings(self) -> dict[str, Any]:
        """The fields of `studies.model_settings.ModelUnderTestSettings` they set."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**given, "cache_dir": None if self.cache_dir is None else str(self.cache_dir)}


def with_options(group: type, name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command every option of the dataclass `group`; it receives them as one argument,
    `name`. The group's required options come first, then the command's own, then the rest."""
    hints = get_type_hints(group, include_extras=True)
    keyword, required = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.empty
    extra = [
        inspect.Parameter(f.name, keyword, annotation=hints[f.name],
                          default=required if f.default is MISSING else f.default)
        for f in fields(group)
    ]  # fmt: skip
    first = [p for p in extra if p.default is required]

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        own = [
            parameter.replace(kind=keyword)
            for parameter in inspect.signature(command, eval_str=True).parameters.values()
            if parameter.name != name
        ]

        @functools.wraps(command)
        def wrapper(**options: Any) -> None:
            taken = group(**{f.name: options.pop(f.name) for f in fields(group)})
            command(**{name: taken}, **options)

        rest = [p for p in extra if p.default is not required]
        wrapper.__signature__ = inspect.Signature(first + own + rest)
        wrapper.__annotations__ = {p.name: p.annotation for p in extra + own}
        return wrapper

    return decorate


with_model_options = with_options(ModelOptions, "model")
with_prompt_options = with_options(PromptOptions, "prompts")
