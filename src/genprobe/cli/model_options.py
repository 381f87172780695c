"""The options of a model under test (`ModelOptions`): `--model`, how an integration model
decodes (`--beam`, `--decoding`, …), a language model's prompt grid (`--formats`, `--shots`,
…) and an endpoint's settings (`--api`, `--cache-dir`, `--concurrency`, …), all read into one
`genprobe.under_test.settings.ModelSettings`.

A command takes the options its study uses with `with_model_options`: an integration study
(`brittleness`, `sagga`, `predict`, `integration evaluate`) those of `INTEGRATION`, a study of
a token task (`probe`, `search`, `evaluate --model`) those of `SEQUENCE`, `integration score`
(teacher-forced, so no decoding) those of `SCORING`; the others keep their defaults."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_type_hints

import typer

from genprobe.cli.paths import output_folder

if TYPE_CHECKING:
    from genprobe.under_test.settings import ModelSettings

ModelSpec = Annotated[
    str,
    typer.Option(
        "--model",
        help="ckpt:PATH, lc:PATH, bundled:NAME, sympy, openai:MODEL@URL, py:mod:fn "
        "(`genprobe models` lists every kind).",
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
Concurrency = Annotated[int, typer.Option(help="openai: requests in flight at once (default 8).")]
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
    """Every option of a model under test; a command takes those its study uses."""

    model_spec: ModelSpec
    # how an integration model decodes
    beam: Beam = 10
    decoding: Decoding = "beam"
    length_penalty: LengthPenalty = 1.0
    max_len: MaxLen = 200
    temperature: Temperature = None
    batch_size: BatchSize = 64
    model_deadline: Deadline = 5.0
    # a language model's prompt grid, asked a token task
    formats: Formats = 1
    shots: Shots = 0
    shot_draws: ShotDraws = 1
    samples: Samples = 0
    prompt_seed: PromptSeed = 0
    api: Api = "chat"
    # where it runs, and how an endpoint's requests are made
    device: Device = "cpu"
    cache_dir: CacheDir = None
    concurrency: Concurrency = None
    timeout: Timeout = None
    retries: Retries = None

    def settings(self) -> ModelSettings:
        """The settings a run records, once `--model` is parsed and checked (before anything
        is written).

        Raises:
            GenprobeError: `--model` names no model (`ModelSpec.parse`), or the prompt grid's
                numbers are out of range.
        """
        from genprobe.under_test.registry import ModelSpec

        spec = ModelSpec.parse(self.model_spec)  # told before torch and the studies load
        from genprobe.decoding.config import DecodingConfig
        from genprobe.under_test.adapters.prompted import PromptGrid
        from genprobe.under_test.settings import ModelSettings

        t = self.temperature
        decoding = DecodingConfig(
            method=self.decoding, beam_size=self.beam, max_len=self.max_len,
            length_penalty=self.length_penalty, temperature=1.0 if t is None else t,
            batch_size=self.batch_size,
        )  # fmt: skip
        prompts = PromptGrid(
            self.formats, self.shots, self.shot_draws, self.samples, self.prompt_seed
        )
        return ModelSettings(
            spec, decoding, deadline=self.model_deadline, temperature=t, prompts=prompts,
            api=self.api, device=self.device,
            cache_dir=None if self.cache_dir is None else str(self.cache_dir),
            concurrency=self.concurrency, timeout=self.timeout, retries=self.retries,
        )  # fmt: skip

    def load(self, min_beam: int = 1) -> Any:
        """The model, as an integration study asks it (`ModelSettings.load`)."""
        return self.settings().load(min_beam)

    def given(self) -> dict[str, Any]:
        """The options set to other than their defaults, by flag (`--model` aside)."""
        return {
            _flag(f.name): getattr(self, f.name)
            for f in fields(self)
            if f.default is not MISSING and getattr(self, f.name) != f.default
        }


def _flag(name: str) -> str:
    return "--model" if name == "model_spec" else "--" + name.replace("_", "-")


# the options of an integration study's model (a `Model` that decodes as set) and of a token
# task's (a `SequenceModel` that decodes by the study's k)
RUNNING = ("device", "cache_dir", "concurrency", "timeout", "retries")
INTEGRATION = (
    "model_spec", "beam", "decoding", "length_penalty", "max_len", "temperature",
    "batch_size", "model_deadline", *RUNNING,
)  # fmt: skip
# teacher-forced scoring (`integration score`): no decoding, so none of its options
SCORING = ("model_spec", "batch_size", "device")
SEQUENCE = (
    "model_spec",
    "formats",
    "shots",
    "shot_draws",
    "samples",
    "prompt_seed",
    "api",
    *RUNNING,
)


def with_model_options(
    taken: tuple[str, ...], **own: Any
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the options of `ModelOptions` named in `taken`; it receives them as one
    argument, `model` (the rest at their defaults). `own` gives a command's own form of one
    (`model_spec=typer.Option(None, "--model", help=...)`: its help, its default). The
    required options come first, then the command's own, then the rest."""
    hints = get_type_hints(ModelOptions, include_extras=True)
    keyword, required = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.empty
    defaults = {f.name: f.default for f in fields(ModelOptions)}
    extra = [
        inspect.Parameter(name, keyword, annotation=get_args(hints[name])[0], default=own[name])
        if name in own
        else inspect.Parameter(name, keyword, annotation=hints[name],
                               default=required if defaults[name] is MISSING else defaults[name])
        for name in taken
    ]  # fmt: skip
    # required: no default, or a command's own form whose default is typer's `...`
    first = [p for p in extra if p.default is required or getattr(p.default, "default", 0) is ...]

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        parameters = inspect.signature(command, eval_str=True).parameters.values()
        mine = [p.replace(kind=keyword) for p in parameters if p.name != "model"]

        @functools.wraps(command)
        def wrapper(**options: Any) -> None:
            model = ModelOptions(**{name: options.pop(name) for name in taken})
            command(model=model, **options)

        rest = [p for p in extra if p not in first]
        wrapper.__signature__ = inspect.Signature(first + mine + rest)
        wrapper.__annotations__ = {p.name: p.annotation for p in extra + mine}
        return wrapper

    return decorate
