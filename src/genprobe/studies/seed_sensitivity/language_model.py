"""What a language model's run of the seed study is (`genprobe evaluate --task T --model
hf:PATH|openai:MODEL@URL`): the model, the task it is asked, the suites' data, and the members,
which are the ways of asking it (prompt format × few-shot draw × sampling seed,
`under_test.adapters.prompted.PromptGrid`) as a sweep's are its seeds.

Member i is cell i of the prompt grid (format-major, as `PromptGrid.cells` lists them): the
run's predictions name it in their `seed` column, as a grid sweep names its cells, so the
sweep's summary, report, tables and `compare` read the run as they read a sweep's. The suites
are a sweep's of the same task, data seed and suite size (`tasks.task.split_examples`), example
for example. An endpoint's API is part of the config; how its requests are made (concurrency,
timeout, retries, the answer cache) and the device are not: they change no answer.

Example:
    model = ModelSettings(ModelSpec.parse("hf:models/addition-lm"), prompts=PromptGrid(formats=4))
    LanguageModelConfig(model, load_task("addition")).validated()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from genprobe.errors import ConfigError
from genprobe.prompts import text_form
from genprobe.runs.config import Recorded
from genprobe.tasks.registry import TaskRef, task_name
from genprobe.tasks.task import Examples, Task, split_examples
from genprobe.under_test.adapters.prompted import Member
from genprobe.under_test.settings import ModelSettings

LANGUAGE_MODELS = "a language model: hf:PATH, hf:ORG/NAME or openai:MODEL@URL"


@dataclass(frozen=True)
class LanguageModelConfig(Recorded):
    """A `genprobe.runs.config.RunConfig`; `validated` checks it without loading the model."""

    FLAT: ClassVar[tuple[str, ...]] = ("model",)
    NOT_OPTIONS: ClassVar[tuple[str, ...]] = ("model", "task")  # `--model`'s group; `--task`
    # hf:PATH, hf:ORG/NAME or openai:MODEL@URL, with its prompt grid and an endpoint's
    # settings; recorded at the top of the identity (`ModelSettings.flat_identity`, which
    # leaves the model's runtime settings out)
    model: ModelSettings
    task: TaskRef
    # With --model: seed of the suites' data; each suite is drawn from it and its own name, so
    # a sweep's suites of the same seed and `suite_size` are the same examples.
    data_seed: int = 0
    # With --model: examples per test suite (default: each suite's size; a finite one whole).
    suite_size: int | None = None

    @property
    def seeds(self) -> tuple[int, ...]:
        """The members' numbers (the predictions' `seed`): 0 .. formats × draws × samples - 1."""
        return tuple(range(len(self.cells())))

    grid = None  # no init × data-order grid: a sweep's

    def cells(self) -> list[Member]:
        """Each member's format, few-shot draw and sampling seed, in member order."""
        return self.model.prompts.cells()

    def load_task(self) -> Task:
        """The task (as a probe's config gives it, for the model task it shares)."""
        return self.task

    def split(self, suite: str) -> Examples:
        """The examples of one of the task's suites (`Task.suites`), as a sweep draws them."""
        return split_examples(self.task, suite, self.suite_size, self.data_seed)

    def validated(self) -> LanguageModelConfig:
        """Checked without loading the model.

        Raises:
            ConfigError: not a language model, the integration task (its models are evaluated
                by `genprobe integration evaluate`), a task whose tokens cannot be written as
                text, or a setting out of range.
        """
        if "prompts" not in self.model.spec.kind.settings:
            raise ConfigError(
                "--model",
                f"{LANGUAGE_MODELS} (a sweep's seeds: `genprobe evaluate RUN_DIR --input FILE`)",
                str(self.model.spec),
            )
        if task_name(self.task) == "integration":
            raise ConfigError(
                "--task", "a token task other than integration (whose models, openai: among "
                "them, `genprobe integration evaluate` evaluates)", task_name(self.task),
            )  # fmt: skip
        self.model.validated_as_sequence_model()
        text_form(self.task)  # a task whose tokens cannot be read as text is refused here
        if self.suite_size is not None and self.suite_size < 1:
            raise ConfigError("--suite-size", "at least 1", self.suite_size)
        return self
