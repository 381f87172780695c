"""`genprobe sweep | evaluate | compare`: the seed-sensitivity study on any task, and on a
language model (`evaluate --model`: its members the ways of asking it).

Examples:
    genprobe sweep --task scan --task-option split=length --seeds 10 --out runs/scan-length
    genprobe sweep --task reverse_string --seeds 10 --attention none --out runs/reverse
    genprobe sweep --task addition --arch transformer --decoder-only --positions rope \
        --init-seeds 5 --order-seeds 5 --optimizer adamw --out runs/addition-grid
    genprobe evaluate runs/scan-length --input more.jsonl --name more
    genprobe evaluate --model hf:models/addition-lm --task addition --formats 8 --shots 2 \
        --shot-draws 3 --out runs/lm-addition
    genprobe evaluate --model openai:Qwen/Qwen2.5-0.5B@http://localhost:8000/v1 --task scan \
        --api completions --formats 4 --input mine.jsonl --out runs/qwen-scan
    genprobe compare runs/scan-lstm runs/scan-gru --out runs/scan-compare
    genprobe sweep --task binary_operation --arch mlp --steps 3000 --full-batch \
        --optimizer adamw --lr 0.003 --weight-decay 1 --seeds 100 --out runs/grok
    genprobe sweep --task binary_operation --arch mlp --steps 3000 --full-batch \
        --optimizer adamw --lr 0.003 --vary task.train_fraction=0.3,0.5 \
        --vary train.weight_decay=0.1,1 --seeds 20 --out runs/grok-grid
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import typer

from genprobe.cli.backend import BACKEND, RAY_ADDRESS, Backend, make_executor
from genprobe.cli.config_options import FROM_CONFIG, with_config_options
from genprobe.cli.console import console, progress_bar
from genprobe.cli.model_options import SEQUENCE, ModelOptions, with_model_options
from genprobe.cli.paths import output_folder
from genprobe.errors import ConfigError, GenprobeError
from genprobe.runs.cpus import usable_cpus
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.training.config import TrainConfig

if TYPE_CHECKING:
    import numpy as np

DEVICE = typer.Option(
    "cpu",
    help="cpu, cuda or cuda:N: where this command trains or decodes; not part of the run's "
    "config, so a run trained on a GPU can be evaluated or resumed on a CPU.",
)
THRESHOLD = typer.Option(
    0.9,
    min=0.0,
    max=1.0,
    help="The report counts a seed (of a probe: a member) as generalizing to a suite at this "
    "accuracy (0-1).",
)
TASK_OPTION = typer.Option(
    None,
    "--task-option",
    metavar="NAME=VALUE",
    help="A task setting as name=value (repeatable; `genprobe tasks` lists each task's).",
)


MODEL_OPTION = typer.Option(
    None,
    "--model-option",
    metavar="NAME=VALUE",
    help="An option of the architecture as name=value (repeatable; `genprobe architectures` "
    "lists each one's).",
)


@dataclass(frozen=True)
class ModelFlags:
    """The model flags that predate --model-option (None: not given), each an option of the
    architecture: the option of its name, or of the name the architecture gives it
    (`RENAMED`). Each field's comment is its flag's help."""

    RENAMED: ClassVar[dict[str, dict[str, str]]] = {
        "transformer": {"hidden": "width", "emb": "width"}
    }
    FLAGS: ClassVar[dict[str, str]] = {"decoder_only": "--decoder-only/--encoder-decoder"}
    emb: int | None = None  # Embedding size (a transformer's is its width).
    hidden: int | None = None  # Hidden size of the recurrent cells; a transformer's width.
    layers: int | None = None  # Stacked layers in encoder and decoder.
    dropout: float | None = None  # Dropout on embeddings, between layers, on output.
    heads: int | None = None  # Transformer: attention heads.
    ffn: int | None = None  # Transformer: feed-forward width.
    # Transformer: one causal stack over input and output, or encoder and decoder.
    decoder_only: bool | None = None
    # Transformer position encoding: sinusoidal, learned, rope, alibi or none.
    positions: str | None = None
    # Transformer: draw each sequence's positions as a sorted random subset of 0..N-1 (Ruoss
    # et al. 2023); 0: off.
    random_positions: int | None = None
    init_range: float | None = None  # Recurrent: uniform init range.
    cell: str | None = None  # Recurrent cell of encoder and decoder: lstm or gru.
    # Recurrent attention score: bilinear (Luong general), dot, mlp or none.
    attention: str | None = None
    input_feeding: bool | None = None  # Recurrent: Luong input feeding in the decoder.
    # Recurrent: tanh(W_c [ctx; h]) before the output layer (off: the output layer reads
    # [ctx; h]).
    attention_layer: bool | None = None

    def options(
        self, arch: str, given: dict[str, str], spelled: Callable[[str], str] | None = None
    ) -> dict[str, Any]:
        """The options of the architecture `arch` that these flags and `given` (the
        --model-option NAME=VALUE pairs; `spelled`: how each option of it was typed) set.

        Raises:
            GenprobeError: two flags that set one option to two values, or a flag and
                --model-option that set the same option.
        """
        renamed = self.RENAMED.get(arch, {})
        chosen: dict[str, Any] = {}
        set_by: dict[str, str] = {}  # option → the flag that set it, as typed
        for name, value in asdict(self).items():
            if value is None:
                continue
            option, typed = renamed.get(name, name), self._typed(name, value)
            if chosen.get(option, value) != value:
                raise GenprobeError(
                    f"model option {option} is given twice: as {set_by[option]} and as {typed}"
                )
            chosen[option], set_by[option] = value, typed
        for option, value in given.items():
            if option in chosen:
                typed = spelled(option) if spelled else f"--model-option {option}={value}"
                raise GenprobeError(
                    f"model option {option} is given twice: as {set_by[option]} and as {typed}"
                )
            chosen[option] = value
        return chosen

    def _typed(self, name: str, value: Any) -> str:
        """The flag as typed: `--hidden 64`; `--encoder-decoder` (decoder_only off)."""
        dashed = name.replace("_", "-")
        if isinstance(value, bool):
            on, _, off = self.FLAGS.get(name, f"--{dashed}/--no-{dashed}").partition("/")
            return on if value else off
        return f"--{dashed} {value}"


ARCHITECTURES_OWN = dict.fromkeys((f.name for f in fields(ModelFlags)), "the architecture's")


@with_config_options(ModelFlags, "model_flags", derived=ARCHITECTURES_OWN)
@with_config_options(TrainConfig, "train", dict, given_only=True)
@with_config_options(SweepConfig, "data", dict)
def sweep(
    out: Path = typer.Option(
        ...,
        help="Run directory (created, or resumed if it holds this config).",
        callback=output_folder,
    ),
    task: str = typer.Option("rewriting", help="The task (`genprobe tasks` lists them)."),
    task_option: list[str] = TASK_OPTION,
    seeds: int = typer.Option(
        50, help="Number of seeds (models); seeds are first-seed .. first-seed+N-1."
    ),
    first_seed: int = typer.Option(1, help="The first seed."),
    init_seeds: int = typer.Option(
        None,
        help="With --order-seeds: train the grid of this many initialization seeds × that many "
        "data-order seeds (each from first-seed on), and report which explains the variance "
        "(replaces --seeds).",
    ),
    order_seeds: int = typer.Option(
        None, help="Data-order seeds of the grid (order, dropout, random positions)."
    ),
    data: dict[str, Any] = FROM_CONFIG,  # --data-seed, --train-size, … and --seeds-per-shard
    train: dict[str, Any] = FROM_CONFIG,  # --batch-size, --lr, … as given
    full_batch: bool = typer.Option(
        False, "--full-batch", help="Every step on the whole training set (sets --batch-size)."
    ),
    arch: str = typer.Option(
        "recurrent",
        help="The architecture: recurrent (LSTM/GRU), transformer, mlp, nanda_transformer, "
        "py:module:function (your own torch.nn.Module) or hf:TYPE (a Hugging Face architecture "
        "trained from scratch); `genprobe architectures` lists them with their options.",
    ),
    model_option: list[str] = MODEL_OPTION,
    model_flags: ModelFlags = FROM_CONFIG,  # --emb, --hidden, …
    settings: list[str] = typer.Option(
        None,
        "--set",
        metavar="PLACE.NAME=VALUE",
        help="A setting named where it lives, as --vary names it (repeatable): a task option "
        "(task.split=length: --task-option split=length), a training setting (train.lr=0.01: "
        "--lr 0.01) or a model option (model.hidden=64: --model-option hidden=64, --hidden 64). "
        "A setting given both ways is refused.",
    ),
    vary: list[str] = typer.Option(
        None,
        "--vary",
        metavar="PLACE.NAME=V1,V2",
        help="Run a grid of sweeps, one per combination of values (repeatable): a task option "
        "(task.train_fraction=0.3,0.5), a training setting (train.weight_decay=0.1,1) or a model "
        "option (model.hidden=64,128). --out then holds one run per cell and grid.json.",
    ),
    device: str = DEVICE,
    workers: int = typer.Option(
        None,
        help="Processes running shards at once (chunks of seeds, then suites); "
        "default: one per CPU this process may use (with --backend ray: as many as the cluster "
        "holds).",
    ),
    backend: Backend = BACKEND,
    ray_address: str = RAY_ADDRESS,
    threshold: float = THRESHOLD,
    report: bool = typer.Option(
        True, "--report/--no-report", help="Write report.md and report.html."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the per-suite summary as JSON."),
) -> None:
    """Train N seeds of a model on a task at once, evaluate every suite, report. Resumable."""
    from genprobe.options import field_types, parse_pairs, typed_options
    from genprobe.studies.seed_sensitivity.grid import parse_axes, parse_settings
    from genprobe.tasks.registry import load_task

    train_size = data["train_size"]
    # the members counted before any work (the task loaded, its training split drawn)
    count = SweepConfig.member_count(seeds, init_seeds, order_seeds)
    addressed = parse_settings(settings or [])
    varied = parse_axes(vary) if vary else {}
    for place, names in addressed.items():
        for name in names:
            if f"{place}.{name}" in varied:
                raise ConfigError("--set", "a setting that --vary does not vary", f"{place}.{name}")
    pairs = parse_pairs(task_option, "--task-option")
    task_options = merged("task option", "task", pairs, _pair("--task-option"), addressed)
    chosen = load_task(task, task_options)
    pairs = parse_pairs(model_option, "--model-option")
    model_options = merged("model option", "model", pairs, _pair("--model-option"), addressed)
    options = model_flags.options(arch, model_options, _spelled(pairs, addressed["model"]))
    from genprobe.models.architectures import load_architecture

    model = load_architecture(arch, options)
    typed = typed_options(
        "training", addressed["train"], field_types(TrainConfig), "training setting"
    )
    addressed["train"] = typed
    given = merged("training setting", "train", train, _flag, addressed)
    trained = TrainConfig.for_optimizer(**given)
    # only now the study's modules (torch, pandas): a mistyped task or model is told at once
    from genprobe.studies.seed_sensitivity import run_sweep
    from genprobe.studies.seed_sensitivity.memory import check_memory

    config = SweepConfig(
        seeds=(first_seed,),  # the members once they are known to fit
        task=chosen,
        model=model,
        train=trained,
        **{name: value for name, value in data.items() if name != "train_size"},
    ).with_sizes(train_size, full_batch)
    # before the members are listed: a billion of them would fill the memory by themselves
    check_memory(config, count, workers or usable_cpus())
    config = config.with_members(seeds, first_seed, init_seeds, order_seeds)
    executor = make_executor(
        backend,
        ray_address,
        local_workers=workers or usable_cpus(),
        ray_workers=workers,
        gpus=1 if device.startswith("cuda") else 0,
    )
    with executor, progress_bar(quiet=as_json) as bar:
        log = bar.console.log if not as_json else lambda m: None

        def run_one(cell: Any, folder: Path, label: str = "") -> Path:
            return run_sweep(cell, folder, device, executor, _progress(bar, label), log)

        if not vary:
            finish(run_one(config, out), report, as_json, threshold)
            return
        from genprobe.studies.seed_sensitivity.grid import run_grid

        cells = run_grid(
            config,
            varied,
            out,
            lambda cell, folder: run_one(cell, folder, folder.name),
            lambda cell: cell.with_sizes(train_size, full_batch),  # its own task's sizes
        )
    for cell in cells:
        finish(cell.run, report, as_json, threshold)
    if report:
        from genprobe.studies.seed_sensitivity.grid_report import report_grid

        console.print(f"grid report: {report_grid(out)[1]}")


def merged(
    what: str,
    place: str,
    flagged: dict[str, Any],
    typed: Callable[[str, Any], str],
    addressed: dict[str, dict],
) -> dict[str, Any]:
    """The settings of `place` given by their old flags (`flagged`: name → value, each flag
    as `typed(name, value)` spells it) merged with those `--set PLACE.NAME=VALUE` gives.

    Raises:
        GenprobeError: a setting given both ways.
    """
    chosen = addressed[place]
    if both := flagged.keys() & chosen.keys():
        name = min(both)
        raise GenprobeError(
            f"{what} {name} is given twice: as {typed(name, flagged[name])} and as --set "
            f"{place}.{name}={chosen[name]}"
        )
    return {**flagged, **chosen}


def _pair(flag: str) -> Callable[[str, Any], str]:
    return lambda name, value: f"{flag} {name}={value}"


def _flag(name: str, value: Any) -> str:
    return f"--{name.replace('_', '-')} {value}"


def _spelled(pairs: dict[str, str], addressed: dict[str, str]) -> Callable[[str], str]:
    """How a model option given by name was typed: --model-option NAME=V or --set model.NAME=V."""

    def spelled(option: str) -> str:
        if option in addressed:
            return f"--set model.{option}={addressed[option]}"
        return f"--model-option {option}={pairs[option]}"

    return spelled


def _progress(bar: Any, label: str) -> Any:
    """What receives a sweep's progress: one bar per stacked model (shard), its description
    headed by `label` (a grid's cell)."""
    tasks: dict[str, Any] = {}
    validated: dict[str, str] = {}  # each stacked model's latest validation, described

    def on_progress(shard: Any, p: Any) -> None:
        chunk = shard.spec["seeds"]
        if shard.key not in tasks:
            tasks[shard.key] = bar.add_task(shard.key, total=p.steps)
        if p.evaluation is not None:
            validated[shard.key] = f" ({describe_evaluation(p.epoch, p.evaluation)})"
        where = f"step {p.step:,} of {p.steps:,}" if p.over_time else f"epoch {p.epoch}"
        bar.update(
            tasks[shard.key],
            completed=p.step,
            total=p.steps,
            description=f"{label + ': ' if label else ''}seeds {chunk[0]}-{chunk[-1]}: {where}, "
            f"{p.active} of {len(chunk)} training{validated.get(shard.key, '')}",
        )

    return on_progress


def describe_evaluation(epoch: int, evaluation: Any) -> str:
    """A stacked model's validation after `epoch` (a `training.trainer.Evaluation`) in a few
    words: its members' accuracy and loss, as a range where they differ."""
    percent = [100 * accuracy for accuracy in evaluation.accuracy]
    text = f"validation after epoch {epoch}: accuracy {_span(percent, '.1f')} %"
    return text if evaluation.loss is None else f"{text}, loss {_span(evaluation.loss, '#.3g')}"


def _span(values: Any, spec: str) -> str:
    low, high = format(min(values), spec), format(max(values), spec)
    return low if low == high else f"{low}–{high}"


@with_model_options(
    SEQUENCE,
    model_spec=typer.Option(
        None,
        "--model",
        help="A language model instead of a sweep: hf:PATH or hf:ORG/NAME (a causal language "
        "model in a folder or named on the Hugging Face hub) or openai:MODEL@URL (an "
        "OpenAI-compatible endpoint), asked the task's inputs as prompts; its members are "
        "the ways of asking it (--formats x --shot-draws x --samples), reported as a sweep's "
        "seeds.",
    ),
    device=DEVICE,
)
@with_config_options(LanguageModelConfig, "suites", dict, given_only=True)
def evaluate(
    model: ModelOptions,  # `with_model_options`: --model, --formats, --api, …
    run_dir: Path = typer.Argument(
        None,
        help="A finished sweep's run directory; or leave it out and name a language model "
        "(--model, --task, --out).",
        show_default=False,
    ),
    input: Path = typer.Option(
        None,
        "--input",
        "--src",
        help='Inputs to evaluate: JSON lines with an "input" field (a rewriting run also '
        "reads the authors' .src and the machine-tasks .tsv); with --model, a suite besides "
        "the task's own.",
    ),
    name: str = typer.Option(None, help="Suite name in the results (default: the file name)."),
    task: str = typer.Option(
        None, help="With --model: the task it is asked (`genprobe tasks` lists them)."
    ),
    task_option: list[str] = TASK_OPTION,
    out: Path = typer.Option(
        None,
        help="With --model: run directory (created, or resumed if it holds this config).",
        callback=output_folder,
    ),
    suites: dict = FROM_CONFIG,  # `with_config_options`: --data-seed, --suite-size
    threshold: float = THRESHOLD,
    report: bool = typer.Option(True, "--report/--no-report", help="Rewrite the report."),
    as_json: bool = typer.Option(False, "--json", help="Print the per-suite summary as JSON."),
) -> None:
    """Evaluate every member of a run on other inputs and add them to its results; or run a
    language model on a task's suites as a sweep's seeds are (--model). Resumable.

    Evaluating other inputs under a name already used replaces that suite's predictions. With
    --model, the members are the ways of asking the model (prompt format x few-shot draw x
    sampling seed), every suite (and --input) is answered by each, and the run directory gets
    a sweep's predictions, report and tables; a rerun asks nothing answered before.
    """
    if run_dir is None:
        run = _evaluate_language_model(model, task, task_option, out, input, name, suites)
        finish(run, report, as_json, threshold)
        return
    language_model = {
        "--model": model.model_spec, "--task": task, "--task-option": task_option or None,
        "--out": out, **{"--" + field.replace("_", "-"): v for field, v in suites.items()},
        **{flag: value for flag, value in model.given().items() if flag != "--device"},
    }  # fmt: skip
    if given := [(option, value) for option, value in language_model.items() if value is not None]:
        option, value = given[0]
        raise ConfigError(option, "left out with RUN_DIR (a language model's, --model's)", value)
    if input is None:
        raise ConfigError("--input", "a file of inputs to evaluate with RUN_DIR", "none")
    from genprobe.studies.seed_sensitivity import evaluate_external
    from genprobe.studies.seed_sensitivity.results import read_members
    from genprobe.tasks.lines import MAX_LINE_BYTES

    config = read_members(run_dir)
    if isinstance(config, LanguageModelConfig):
        raise GenprobeError(
            f"{run_dir} holds a language model's run: add inputs to it with the command that "
            "made it (the same --model, --task and --out) and --input FILE"
        )
    longest = config.longest_taken(MAX_LINE_BYTES)
    src = _inputs(input, config.task, longest)
    evaluate_external(run_dir, src, name or input.stem, model.device)
    finish(run_dir, report, as_json, threshold)


def _evaluate_language_model(
    model: ModelOptions,
    task: str | None,
    task_option: list[str] | None,
    out: Path | None,
    input: Path | None,
    name: str | None,
    suites: dict[str, Any],
) -> Path:
    """`evaluate --model`: the language model's run in `out`, checked before anything is
    written; returns its directory."""
    if model.model_spec is None:
        raise ConfigError(
            "RUN_DIR", "given (a finished sweep's run directory), or --model with --task and "
            "--out (a language model)", "neither",
        )  # fmt: skip
    for option, value in (("--task", task), ("--out", out)):
        if value is None:
            raise ConfigError(option, "given with --model", "none")
    from genprobe.options import parse_pairs
    from genprobe.tasks.registry import load_task

    settings = model.settings()  # a mistyped or missing model is told before the study loads
    chosen = load_task(task, parse_pairs(task_option, "--task-option"))
    from genprobe.cli.console import status
    from genprobe.studies.seed_sensitivity import evaluate_language_model

    config = LanguageModelConfig(settings, chosen, **suites)
    inputs = None if input is None else (name or input.stem, _inputs(input, chosen))
    with status("starting") as log:
        return evaluate_language_model(config, out, inputs, log)


def _inputs(path: Path, task: Any, longest: int | None = None) -> np.ndarray:
    """(n, L) the input ids of a file of inputs of `task`: JSON lines, or for the rewriting
    task the authors' .src and the machine-tasks .tsv; JSON lines of at most `longest` tokens
    (the model's).

    Raises:
        GenprobeError: a .src or .tsv file for another task.
        DataFormatError: a line that is no input of the task, or longer than `longest`.
    """
    from genprobe.tasks.files import read_examples
    from genprobe.tasks.rewriting.formats import read_inputs
    from genprobe.tasks.rewriting.task import RewritingTask

    if path.suffix in (".src", ".tsv"):
        if not isinstance(task, RewritingTask):
            raise GenprobeError(f"{path}: .src and .tsv inputs are for rewriting runs only")
        return read_inputs(path, task)
    return read_examples(path, task, outputs=False, longest=longest).src


def compare(
    runs: list[Path] = typer.Argument(..., help="Two or more sweep run directories."),
    out: Path = typer.Option(
        ..., help="Directory for report.md, report.html, compare.json.", callback=output_folder
    ),
    names: str = typer.Option(
        None, help="Comma-separated run names (default: the directory names)."
    ),
) -> None:
    """Seed distributions of several sweeps side by side; the first run is the reference."""
    from genprobe.studies.seed_sensitivity.compare import load_runs, write_comparison

    loaded = load_runs(runs, names.split(",") if names else None)
    _, html = write_comparison(loaded, out)
    console.print(f"compared {len(loaded)} runs: {html}")


LINES_SHOWN = 10  # lines of wrong outputs a plain line names (--json lists them all)


def print_judged(
    accepted: np.ndarray,
    lines: np.ndarray,
    as_json: bool,
    words: tuple[str, str] = ("right", "wrong"),
) -> None:
    """Which outputs a rule accepted (`accepted`, one per example, on `lines` of its file):
    {n, right, wrong, accuracy, wrong_lines} as JSON, or a line naming the first wrong lines
    (`words` names the two kinds)."""
    good, bad = words
    n, right = len(accepted), int(accepted.sum())
    wrong = lines[~accepted].tolist()
    if as_json:
        result = {"n": n, good: right, bad: n - right, "accuracy": right / n, f"{bad}_lines": wrong}
        print(json.dumps(result))
        return
    shown = ", ".join(map(str, wrong[:LINES_SHOWN]))
    more = f" and {len(wrong) - LINES_SHOWN:,} more (--json lists all)" * (len(wrong) > LINES_SHOWN)
    console.print(
        f"{right:,} of {n:,} outputs {good}, accuracy {100 * right / n:.2f} %"
        + (f"; {bad}: line{'s' * (len(wrong) > 1)} {shown}{more}" if wrong else "")
    )


def finish(run: Path, report: bool, as_json: bool, threshold: float) -> None:
    """Write the report (unless not wanted, or it is the run's as it is) and print the
    per-suite summary."""
    from genprobe.studies.seed_sensitivity.results import read_members, read_metrics

    config = read_members(run)
    if report:
        from genprobe.studies import study_of

        study_of(run).update_report(run, threshold=threshold)  # also writes stats.json
        stored = json.loads((run / "stats.json").read_text())["summary"]  # keys sorted
        order = read_metrics(run)["suites"]
        summary = {suite: stored[suite] for suite in order}
    else:
        from genprobe.studies.seed_sensitivity.results import accuracy_by, read_predictions
        from genprobe.studies.seed_sensitivity.summary import suite_summaries

        accuracy = accuracy_by(read_predictions(run, config), "suite", config.task.suites())
        summary = {s: v.to_dict() for s, v in suite_summaries(accuracy).items()}
    if as_json:
        print(json.dumps({"run": str(run), "summary": summary}))
        return
    from rich.table import Table

    members = next(iter(summary.values()))["n"]
    noun = "member" if isinstance(config, LanguageModelConfig) else "seed"
    table = Table(title=f"accuracy % across {members} {noun}s")
    for column in ("suite", "mean", "std", "min", "median", "max"):
        table.add_column(column, justify="right")
    for suite, s in summary.items():
        table.add_row(
            suite, *(f"{100 * s[k]:.2f}" for k in ("mean", "std", "min", "median", "max"))
        )
    console.print(table)
    if report:
        console.print(f"report: {run / 'report.html'}")
