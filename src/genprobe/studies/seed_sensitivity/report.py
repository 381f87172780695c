"""The report of a seed sweep on any task: what it says (tables, figures, text), from result
files only.

The statistics come from `summary.py`, which writes them to `stats.json`; this module renders
them: figures to `figures/`, the blocks to `analysis.render`, which writes `report.md` and
`report.html`. What a paper reports for the task (its `published()`) is printed beside the
run, labelled as the paper's. The validation curves also go to TensorBoard
(`analysis.tensorboard`).

A language model's run (`language_model.py`) is reported from the same statistics, its members
the ways of asking it: the same tables of accuracy across members and per member, per-length
and per-token accuracy, correlations and figures, with its prompt grid in place of training.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genprobe.analysis import plots
from genprobe.analysis.correlations import correlation_section
from genprobe.analysis.grokking import THRESHOLD as GROKKING
from genprobe.analysis.render import Block, Figure, Heading, Table, Text, interval
from genprobe.analysis.render import write_report as render
from genprobe.analysis.stats import N_RESAMPLES, Correlation, Share, Summary
from genprobe.analysis.tensorboard import write_validation_curves
from genprobe.analysis.variance import Component, VarianceDecomposition
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.curves import read_curves
from genprobe.studies.seed_sensitivity.history_report import history_blocks
from genprobe.studies.seed_sensitivity.language_model import LanguageModelConfig
from genprobe.studies.seed_sensitivity.memorization_report import memorization_blocks
from genprobe.studies.seed_sensitivity.over_time_report import over_time_blocks
from genprobe.studies.seed_sensitivity.results import (
    read_config_hash,
    read_members,
    read_model_notes,
    read_predictions,
    read_subsets,
    read_training,
    shard_devices,
    trained_lengths,
    training_pairs,
)
from genprobe.studies.seed_sensitivity.summary import (
    DIVERGENCE,
    EARLY_STOPPING,
    EPOCH_CAP,
    MAX_SUITES,
    STALL_THRESHOLD,
    THRESHOLD,
    SweepSummary,
    learned,
    stopped_by,
    summarize_sweep,
    write_stats,
)
from genprobe.studies.seed_sensitivity.tables import history_tables
from genprobe.tasks.published import Published
from genprobe.tasks.registry import task_name
from genprobe.training.trainer import TrainConfig

TITLE = "Seed sensitivity of generalization"
PROMPT_TITLE = "Prompt sensitivity of generalization"  # a language model's run
STATS_DETAILS = "`stats.json` has every pair with Spearman ρ, p-values and bootstrap intervals."


def write_report(
    run: str | Path, threshold: float = THRESHOLD, grokking_threshold: float = GROKKING
) -> tuple[Path, Path]:
    """Summarize the run's result files (`stats.json`), draw figures, write `report.md` and
    `report.html`.

    Args:
        run: the sweep's run directory (or a language model's run).
        threshold: the accuracy (in [0, 1]) at which a seed (member) counts as generalizing to
            a suite.
        grokking_threshold: trained over time, the accuracy (in (0, 1]) at which a seed has
            memorized (training) or grokked (held out, and staying there).

    Raises:
        ConfigError: a threshold outside [0, 1].
        RunDirError: not a sweep (nor a language model's run), or nothing evaluated yet.
    """
    run = Path(run)
    config = read_members(run)
    training = read_training(run)
    predictions = read_predictions(run, config)
    summary = summarize_sweep(config, predictions, training, threshold)
    write_stats(run, summary)
    if isinstance(config, LanguageModelConfig):
        return render(run, PROMPT_TITLE, _language_model_blocks(run, config, summary))
    published = config.task.published()
    accuracy, stalled = summary.accuracy, summary.stalled
    shown = accuracy[accuracy.columns[:MAX_SUITES]]
    over_time = config.train.steps is not None
    stopping = learned(training) and not over_time
    blocks = [
        _introduction(read_config_hash(run), config, len(accuracy), published),
        Text(_devices(*shard_devices(run)) + _members_alone(read_model_notes(run))),
        *_diverged_blocks(summary.diverged, training, config.train),
        *(
            []
            if learned(training) or over_time
            else _nothing_learned(training, accuracy, config.train, summary.diverged)
        ),
        *_across_blocks(summary, "seed"),
        *(_over_time_blocks(run, config, grokking_threshold) if over_time else []),
        *(_history_blocks(run, config) if over_time else []),
        *(_variance_blocks(config.grid, summary.variance) if config.grid else []),
        *(
            _published_blocks(published, summary.summaries, summary.correlations)
            if published
            else []
        ),
        *(_stalled_blocks(summary, training, config.train) if stopping else []),
        *_length_blocks(run, summary.by_length, "accuracy", "per_length.png"),
        *(_token_blocks(run, summary, "seed") if _tokens_differ(config, summary) else []),
        *(memorization_blocks(run, config, predictions) if config.train.subsets else []),
        Heading("Accuracy per seed (%)"),
        Text(
            "Each suite's highest value in bold (green in report.html), its lowest in italics "
            "(red), where the seeds differ"
            + (
                "; the final weights of each seed."
                if over_time
                else "; `validation`: the best validation accuracy, the epoch kept after "
                f"`epochs` epochs; `stopped by`: {EARLY_STOPPING} (no improvement for "
                f"{config.train.patience} epochs){', ' if summary.diverged else ' or '}the "
                f"{EPOCH_CAP} (`--max-epochs` {config.train.max_epochs})"
                + (f" or {DIVERGENCE} (above)" if summary.diverged else "")
                + "; `stalled`: stopped below "
                f"{_pct(STALL_THRESHOLD, 0)} % validation accuracy."
            )
            + _cut_note(accuracy.columns)
        ),
        _per_seed_table(shown, {} if over_time else training, stalled, config),
        *_correlation_blocks(run, shown, summary.correlations, published),
        *(
            []
            if over_time
            else [Heading("Learning curves"), *_learning_curves(run, training, stalled)]
        ),
        Heading("Figures"),
        *_figures(run, shown, published),
    ]
    write_validation_curves(run, {seed: t["validation"] for seed, t in training.items()})
    return render(run, TITLE, blocks)


def _across_blocks(summary: SweepSummary, noun: str) -> list[Block]:
    """The per-suite summary across the members (`noun`: what one is, a seed or a member)."""
    return [
        Heading(f"Accuracy across {noun}s (%)"),
        Text(
            f"Per suite: mean, sample standard deviation, extremes and median over {noun}s; the "
            f"interquartile mean (IQM: the mean of the middle half of the {noun}s) with a 95 % "
            f"percentile-bootstrap interval over {noun}s; a 95 % bootstrap interval of the mean; "
            f"and how many {noun}s generalize, i.e. reach {_pct(summary.threshold)} % (95 % "
            "Wilson interval of the share). Pooled over all suites, with a bootstrap stratified "
            f"by suite ({noun}s resampled within each): IQM {_pct(summary.pooled.iqm)} %"
            + (
                f" (no interval: {summary.pooled.ci_reason})"
                if summary.pooled.ci_reason
                else f" {interval(summary.pooled.ci_low, summary.pooled.ci_high, _pct)}"
            )
            + "."
            + _no_interval(summary.summaries)
        ),
        _summary_table(summary.summaries, summary.shares, noun),
    ]


def _language_model_blocks(
    run: Path, config: LanguageModelConfig, summary: SweepSummary
) -> list[Block]:
    """A language model's report: its members are the ways of asking it, so the spread across
    them is the prompt's, as a sweep's is the seed's; no training to report."""
    accuracy = summary.accuracy
    shown = accuracy[accuracy.columns[:MAX_SUITES]]
    return [
        _prompted_introduction(run, config, len(accuracy)),
        *_across_blocks(summary, "member"),
        *_length_blocks(run, summary.by_length, "accuracy", "per_length.png", "member"),
        *(_token_blocks(run, summary, "member") if _tokens_differ(config, summary) else []),
        Heading("Accuracy per member (%)"),
        Text(
            "Each suite's highest value in bold (green in report.html), its lowest in italics "
            "(red), where the members differ; a member is the prompt format, few-shot draw and "
            "sampling seed (none: greedy) it asks with." + _cut_note(accuracy.columns)
        ),
        _per_seed_table(shown, {}, [], config),
        *correlation_section(run, shown, "members", STATS_DETAILS),
        Heading("Figures"),
        *_figures(run, shown, None, "member"),
    ]


def _prompted_introduction(run: Path, config: LanguageModelConfig, members: int) -> Text:
    model = config.model
    local = "device" in model.spec.kind.settings  # hf: runs here, an endpoint not
    answered = shard_devices(run)[1]
    endpoint = "" if local else f", through the {model.api} API"
    return Text(
        f"{members} member{'s' * (members > 1)} of the language model `{model.spec}`: the "
        f"ways of asking it, {' × '.join(_prompt_grid_words(config))} (prompt seed "
        f"{model.prompts.seed}){endpoint}. Every input of the task "
        f"`{task_description(config)}` is asked as a prompt, the answer read strictly from "
        "the first line of the completion. Accuracy = share of answers the task's verifier "
        "accepts (an answer that does not parse counts as wrong). Config hash "
        f"`{read_config_hash(run)}`, data seed {config.data_seed}: the suites are a sweep's "
        "of the same task, "
        "data seed and suite size, example for example."
        + (f" The model ran on {_places(answered)}." if answered and local else "")
    )


def _history_blocks(run: Path, config: SweepConfig) -> list[Block]:
    tables = history_tables(run, config)
    if not tables:
        return []
    trained = read_subsets(run)[1] if config.train.subsets else None
    pairs = training_pairs(run)
    return history_blocks(run, tables["history"], tables["data_map"], trained, pairs)


def _over_time_blocks(run: Path, config: SweepConfig, threshold: float) -> list[Block]:
    assert config.train.steps is not None
    held_out = config.task.suites()[0]
    return over_time_blocks(run, read_curves(run), config.train.steps, threshold, held_out)


def task_description(config: SweepConfig) -> str:
    """`name` and the options that differ from the task's defaults, e.g. `scan (split=length)`."""
    task = config.task
    changed = [
        f"{f.name}={getattr(task, f.name)}"
        for f in (dataclasses.fields(task) if dataclasses.is_dataclass(task) else ())
        if f.default is not dataclasses.MISSING and getattr(task, f.name) != f.default
    ]
    return task_name(task) + (f" ({', '.join(changed)})" if changed else "")


def differences(config: SweepConfig, published: Published) -> list[str]:
    """`--option ours (paper: theirs)` for every setting the paper states that the run does not
    share (named as the sweep's option: `train.batch_size` is `--batch-size`)."""
    identity = config.identity()
    flat = {k: v for k, v in identity.items() if k not in ("model", "train", "task", "grammar")}
    flat.update({f"train.{k}": v for k, v in dataclasses.asdict(config.train).items()})
    flat["arch"] = identity["model"]["arch"]
    if flat["arch"] == published.settings.get("arch", flat["arch"]):  # else options differ all
        flat.update({f"model.{k}": v for k, v in identity["model"]["options"].items()})
    return [
        f"--{name.rpartition('.')[2].replace('_', '-')} {flat[name]} (paper: {value})"
        for name, value in published.settings.items()
        if name in flat and flat[name] != value
    ]


def _introduction(
    digest: str, config: SweepConfig, seeds: int, published: Published | None
) -> Text:
    train = config.train
    rule = (
        "the paper's rule taken literally: a seed stops at its first epoch without improvement"
        if train.patience == 1
        else f"a seed stops after {train.patience} epochs without improvement"
    )
    if train.min_delta:
        rule += f" of more than {100 * train.min_delta:g} points"
    differs = differences(config, published) if published else []
    optimizer = f"{train.optimizer.upper()} lr {train.lr}"
    if train.weight_decay:
        optimizer += f" weight decay {train.weight_decay}"
    if train.beta2 != 0.999 and train.optimizer != "sgd":
        optimizer += f" β₂ {train.beta2}"
    if train.warmup or train.schedule != "constant":
        optimizer += f" ({train.warmup} warmup steps, {train.schedule} schedule)"
    members = f"{seeds} seeds"
    if config.grid:
        members = f"{seeds} members (the grid of {_grid_words(config.grid)})"
    clip = f"gradient norm {train.max_grad_norm}" if train.max_grad_norm else "no gradient clip"
    stopping = (
        f"with early stopping on {config.validation_size:,} validation examples ({rule}; at most "
        f"{train.max_epochs} epoch{'s' * (train.max_epochs != 1)}; it keeps its best epoch)"
        if train.steps is None
        else f"for exactly {train.steps:,} steps each (no early stopping; the final weights are "
        "evaluated)"
    )
    return Text(
        f"{members} of one {model_description(config)}, trained with {optimizer}, batch "
        f"{train.batch_size}, {clip}, on {config.train_size:,} examples of the task "
        f"`{task_description(config)}` {stopping}. "
        "Accuracy = share of outputs the task's verifier accepts. "
        + (f"Differs from {published.source} in: {'; '.join(differs)}. " if differs else "")
        + f"Config hash `{digest}`, data seed {config.data_seed}."
    )


def model_description(config: SweepConfig | LanguageModelConfig) -> str:
    """The architecture in words, e.g. "2-layer LSTM seq2seq with bilinear attention (…)"; a
    language model's spec and how it is asked."""
    if isinstance(config, LanguageModelConfig):
        return f"{config.model.spec} ({', '.join(_prompt_grid_words(config))})"
    return config.model.describe()


def _prompt_grid_words(config: LanguageModelConfig) -> list[str]:
    """A language model's members in words: formats, few-shot draws, sampling."""
    grid = config.model.prompts
    shots = (
        f"{grid.shot_draws} draw{'s' * (grid.shot_draws > 1)} of {grid.shots} few-shot "
        f"example{'s' * (grid.shots > 1)}"
        if grid.shots
        else "no few-shot examples"
    )
    sampled = (
        f"{grid.samples} sampling seed{'s' * (grid.samples > 1)}" if grid.samples else "greedy"
    )
    return [f"{grid.formats} prompt format{'s' * (grid.formats > 1)}", shots, sampled]


STACKING_WORDS = {
    "stacked": "The members of a stacked model run as one model",
    "loop": "The members of a stacked model run one after another (torch.func)",
    "vmap": "The members of a stacked model run as one batched call (torch.func.vmap)",
}


def _members_alone(notes: dict[str, Any] | None) -> str:
    """Whether a member computes what its seed alone computes, as measured before training."""
    if notes is None:
        return ""
    how = STACKING_WORDS.get(notes["stacking"], notes["stacking"])
    if notes["members_equal_alone"]:
        return f" {how}, each bit for bit its seed trained alone ({notes['measured']})."
    if not np.isfinite(notes["largest_difference"]):
        return (
            f" {how}; whether a member computes what its seed trained alone computes is not "
            f"known: the training loss diverged when it was measured ({notes['measured']}), "
            "leaving weights that are not finite."
        )
    return (
        f" {how}; a member's weights differ from its seed trained alone by up to "
        f"{notes['largest_difference']:.2g} ({notes['measured']}): rounding, which training "
        "can amplify."
    )


def _devices(trained: list[dict[str, Any]], evaluated: list[dict[str, Any]]) -> str:
    """Where the shards ran, as their manifests record it."""

    if not trained:
        return "No training shard recorded its device."
    where = f"Trained on {_places(trained)}"
    if evaluated and _places(evaluated) != _places(trained):
        return f"{where}; evaluated on {_places(evaluated)}."
    return where + ("; evaluated on the same." if evaluated else ".")


def _places(facts: list[dict[str, Any]]) -> str:
    counts = Counter(_place(f) for f in facts)
    if len(counts) == 1:
        return next(iter(counts))
    return "; ".join(f"{place} ({n} shard{'s' * (n > 1)})" for place, n in counts.items())


def _place(facts: dict[str, Any]) -> str:
    threads = facts.get("torch_threads")
    detail = facts.get("gpu") or ", ".join(
        [
            *([f"{threads} torch thread{'s' * (threads != 1)}"] if threads is not None else []),
            *([f"{facts['cpu']}, {facts['kernels']} kernels"] if "kernels" in facts else []),
        ]
    )
    place = f"`{facts.get('device', 'an unrecorded device')}`"
    place += f" ({detail})" if detail else ""
    return place + (f" on host `{facts['host']}`" if "host" in facts else "")


def _diverged_blocks(
    diverged: list[str], training: dict[str, Any], train: TrainConfig
) -> list[Block]:
    if not diverged:
        return []
    listed = ", ".join(f"{seed} (step {training[seed]['diverged']:,})" for seed in diverged)
    return [
        Heading("Seeds whose training loss diverged"),
        Text(
            f"The training loss of {len(diverged)} seed{'s' * (len(diverged) > 1)} went NaN or "
            f"inf, at the step given: {listed}. From that step on a seed's weights are not "
            "finite. "
            + (
                "Each trained on to the step budget all the same, so its final accuracies are "
                "those of weights that are not finite."
                if train.steps is not None
                else "Training stopped each at the end of that epoch, whatever its validation "
                "accuracy, and kept its best epoch before; one that diverged in its first "
                "epoch has no other, so its accuracies are those of weights that are not finite."
            )
            + f" A learning rate smaller than `--lr` {train.lr} may keep the loss finite."
        ),
    ]


def _nothing_learned(
    training: dict[str, Any], accuracy: pd.DataFrame, train: TrainConfig, diverged: list[str]
) -> list[Block]:
    epochs = sorted({t["epochs"] for t in training.values()})
    trained = f"{epochs[0]}" if len(epochs) == 1 else f"{epochs[0]} to {epochs[-1]}"
    trained += " epoch" + "s" * (epochs[-1] != 1)
    best = {suite: _pct(np.nanmax(accuracy[suite].to_numpy())) for suite in accuracy.columns}
    capped = len(training) - len(diverged)
    cap = f"the epoch cap (`--max-epochs` {train.max_epochs}) ended"
    if not diverged:
        ended = f"Early stopping waits while a seed is at 0 %, so {cap} every seed."
    elif capped:
        ended = (
            f"The training loss of {len(diverged)} of them diverged (above); early stopping "
            f"waits while a seed is at 0 %, so {cap} the other {capped}."
        )
    else:
        ended = f"The training loss of {_all_seeds(len(training))} diverged (above)."
    advice = "train longer or on more examples" if capped else "train with a smaller `--lr`"
    return [
        Heading("No seed learned the task"),
        Text(
            f"No seed learned the in-distribution task: {_all_seeds(len(training))} stayed at "
            f"0 % validation accuracy in every epoch ({trained} each), and the best seed "
            "on each test suite reaches "
            + ", ".join(f"{suite} {value} %" for suite, value in best.items())
            + f". {ended} The statistics below describe untrained models, not generalization; "
            f"{advice}."
        ),
    ]


def _all_seeds(n: int) -> str:
    return "the one seed" if n == 1 else "both seeds" if n == 2 else f"all {n} seeds"


def _grid_words(grid: tuple[tuple[int, ...], tuple[int, ...]]) -> str:
    return f"{len(grid[0])} initialization seeds × {len(grid[1])} data-order seeds"


def _variance_blocks(
    grid: tuple[tuple[int, ...], tuple[int, ...]], variance: dict[str, VarianceDecomposition]
) -> list[Block]:
    def cell(c: Component) -> str:
        if c.share is None:
            return "–"
        if c.share_ci is None:
            return _pct(c.share, 0)
        return f"{_pct(c.share, 0)} [{_pct(c.share_ci[0], 0)}, {_pct(c.share_ci[1], 0)}]"

    def test(c: Component) -> str:
        return "–" if c.p is None else f"{c.p:.3g}"

    rows = [
        {
            "suite": suite,
            "sd (points)": "–" if v.total is None else f"{100 * np.sqrt(v.total):.1f}",
            "init %": cell(v.init),
            "order %": cell(v.order),
            "residual %": cell(v.residual),
            "p (init)": test(v.init),
            "p (order)": test(v.order),
        }
        for suite, v in variance.items()
    ]
    reasons = sorted({v.reason for v in variance.values() if v.reason})
    return [
        Heading("Where the variance comes from"),
        Text(
            f"Each member is one cell of a grid of {_grid_words(grid)} (the "
            "order seed also draws dropout and random positions). Per suite, the variance of "
            "accuracy across members is split by a two-way random-effects ANOVA into the init "
            "seed's part, the order seed's part and a residual (their interaction and any other "
            "noise, which one member per cell cannot tell apart): shares of the total with 95 % "
            "pigeonhole-bootstrap intervals (rows and columns resampled), and the F tests' p "
            "for each seed having no effect. `sd`: the standard deviation the components add "
            "up to. On small grids the intervals are wide; trust the shares more than the "
            "components." + (f" Left out: {'; '.join(reasons)}." if reasons else "")
        ),
        Table(pd.DataFrame(rows)),
    ]


def _published_blocks(
    published: Published, summaries: dict[str, Summary], correlations: list[Correlation]
) -> list[Block]:
    rows = []
    for suite, theirs in published.suites.items():
        s = summaries.get(suite)
        ours = [np.nan] * 4 if s is None else [100 * v for v in (s.mean, s.std, s.min, s.max)]
        paper = [theirs.get(k, np.nan) for k in ("mean", "std", "min", "max")]
        rows.append(
            {
                "suite": suite,
                "ours, mean ± std": _mean_std(ours),
                "ours, min – max": _range(ours),
                "paper, mean ± std": _mean_std(paper),
                "paper, min – max": _range(paper),
            }
        )
    found = {(c.a, c.b): c for c in correlations}
    reported = [
        f"{a}–{b} Pearson r ours {_ours(found[a, b])}, the paper's {value:+.2f}"
        for (a, b), value in published.pairs.items()
        if value is not None and (a, b) in found
    ]
    n = next(iter(summaries.values())).n if summaries else 0
    return [
        Heading(f"Beside the paper ({published.source})"),
        Text(
            f"Our {n} seeds beside the paper's {published.seeds} (their numbers, from "
            f"{published.source}"
            + (f"; {published.note}" if published.note else "")
            + ")."
            + (f" {'; '.join(reported)}." if reported else "")
        ),
        Table(pd.DataFrame(rows)),
    ]


def _stalled_blocks(
    summary: SweepSummary, training: dict[str, Any], train: TrainConfig
) -> list[Block]:
    stalled = summary.stalled
    if not stalled:
        return []
    listed = ", ".join(
        f"{seed} ({100 * training[seed]['best_accuracy']:.2f} % after "
        f"{training[seed]['epochs']} epoch{'s' * (training[seed]['epochs'] != 1)}, "
        f"{stopped_by(training[seed], train)})"
        for seed in stalled
    )
    ended = Counter(stopped_by(training[seed], train) for seed in stalled)
    capped, patient, diverged = ended[EPOCH_CAP], ended[EARLY_STOPPING], ended[DIVERGENCE]
    blocks: list[Block] = [
        Heading(f"Seeds that stopped below {_pct(STALL_THRESHOLD, 0)} % validation accuracy"),
        Text(
            f"{len(stalled)} seed{'s' * (len(stalled) > 1)} (best validation accuracy, epochs, "
            f"what ended training): {listed}. They stopped before they learned the training "
            "distribution, so their test accuracies say little about generalization."
            + (
                f" The epoch cap (`--max-epochs` {train.max_epochs}) ended {capped} of them, "
                "which more epochs may let learn."
                if capped
                else ""
            )
            + (
                f" Early stopping (`--patience` {train.patience}) ended {patient} of them: a "
                "seed on a plateau may leave it later than its patience (seeds of one "
                "configuration often leave a plateau epochs apart), so a longer patience may "
                "let them learn."
                if patient
                else ""
            )
            + (f" Their training loss diverged for {diverged} of them (above)." if diverged else "")
            + (
                " The statistics without them:"
                if summary.without_stalled is not None
                else " Every seed stalled, so no statistics are left without them."
            )
        ),
    ]
    if summary.without_stalled is not None:
        blocks.append(_summary_table(summary.without_stalled))
        if note := _no_interval(summary.without_stalled).strip():
            blocks.append(Text(note))
    return blocks


def _tokens_differ(config: SweepConfig | LanguageModelConfig, summary: SweepSummary) -> bool:
    """Whether per-token accuracy can say more than accuracy: it is scored, and some suite has
    outputs longer than one token."""
    task = config.task
    longest = (task.max_output_length(task.split_spec(s).lengths[1]) for s in task.suites())
    return summary.tokens is not None and max(longest) > 1


def _length_blocks(
    run: Path, by_length: pd.DataFrame, what: str, name: str, noun: str = "seed"
) -> list[Block]:
    if len(by_length.columns) < 2:
        return []  # one length: the table per suite says it all
    trained = trained_lengths(run)
    path = plots.length_curves(
        by_length, run / "figures" / name, trained, what=what, who=f"{noun}s"
    )
    lengths = by_length.columns
    return [
        Heading(f"{what.capitalize()} per length"),
        Text(
            f"Every evaluated example by its length ({lengths.min()} to {lengths.max()}, all "
            f"suites pooled): one thin line per {noun}, the median over {noun}s, and a band "
            f"from the 25th to the 75th percentile of the {noun}s"
            + (f"; shaded: the training lengths ({trained[0]}–{trained[1]})." if trained else ".")
        ),
        Figure(path.relative_to(run), f"{what.capitalize()} per length, one line per {noun}."),
    ]


def _token_blocks(run: Path, summary: SweepSummary, noun: str) -> list[Block]:
    assert summary.token_by_length is not None
    return [
        Heading(f"Per-token accuracy across {noun}s (%)"),
        Text(
            f"The share of each right output's positions that a {noun}'s output gets right, "
            "averaged over a suite's examples: the score of Delétang et al. (2023), where "
            "accuracy above counts whole outputs only. Columns as above."
            + _no_interval(summary.token_summaries)
        ),
        _summary_table(summary.token_summaries, summary.token_shares, noun),
        *_length_blocks(
            run, summary.token_by_length, "per-token accuracy", "per_length_tokens.png", noun
        ),
    ]


def _correlation_blocks(
    run: Path, accuracy: pd.DataFrame, correlations: list[Correlation], published: Published | None
) -> list[Block]:
    blocks = correlation_section(run, accuracy, "seeds", STATS_DETAILS)
    if len(blocks) < 3:  # not computed
        return blocks
    called_out = [c for c in correlations if published and (c.a, c.b) in published.pairs]
    if called_out:
        blocks += [
            Text(
                "The pairs the paper discusses, with n, 95 % bootstrap intervals over seeds and "
                "the p of a permutation test of no correlation: exact (every order of the seeds) "
                f"up to 7 seeds, else over {N_RESAMPLES:,} random orders:"
            ),
            _correlation_table(called_out),
        ]
        notes = [
            f"No interval (–) for {c.a} vs {c.b}, {name}: {reason}."
            for c in called_out
            for name, reason in (
                ("Pearson", c.pearson_ci_reason),
                ("Spearman", c.spearman_ci_reason),
            )
            if reason
        ]
        blocks += [Text(" ".join(notes))] if notes else []
    return blocks


def _learning_curves(run: Path, training: dict[str, Any], stalled: list[str]) -> list[Block]:
    if not training:
        return [Text("No training summaries recorded.")]
    path = plots.learning_curves(
        {seed: t["validation"] for seed, t in training.items()},
        {seed: t["best_epoch"] for seed, t in training.items()},
        set(stalled),
        run / "figures" / "learning_curves.png",
    )
    return [
        Figure(
            path.relative_to(run),
            "Validation accuracy per epoch, one line per seed in its own colour (the bar names "
            "the seeds); dot: the epoch kept, x: the epoch it stopped; dashed and labelled: "
            f"stopped below {_pct(STALL_THRESHOLD, 0)} %.",
        )
    ]


def _figures(
    run: Path, accuracy: pd.DataFrame, published: Published | None, noun: str = "seed"
) -> list[Block]:
    suites = plots.suite_distributions(accuracy, run / "figures" / "suites.png", f"{noun}s")
    figures: list[Block] = [
        Figure(suites.relative_to(run), f"Accuracy per suite; one dot per {noun}.")
    ]
    for x, y in published.pairs if published else ():
        if x in accuracy and y in accuracy:
            path = plots.suite_scatter(accuracy, x, y, run / "figures" / f"scatter_{x}_{y}.png")
            figures.append(Figure(path.relative_to(run), f"{y} against {x}, one dot per seed."))
    return figures


def _cut_note(suites: Sequence[str]) -> str:
    if len(suites) <= MAX_SUITES:
        return ""
    return f" The first {MAX_SUITES} of {len(suites)} suites (`metrics.json` has them all)."


def _pct(x: float, digits: int = 2) -> str:
    return "–" if np.isnan(x) else f"{100 * x:.{digits}f}"


def _signed(x: float) -> str:
    return "–" if np.isnan(x) else f"{x:+.2f}"


def _p(x: float) -> str:
    return "–" if np.isnan(x) else f"{x:.2g}"


def _no_interval(summaries: dict[str, Summary]) -> str:
    """What a `–` in a summary table's interval columns stands for, suites grouped by reason."""
    suites: dict[str, list[str]] = {}
    for suite, s in summaries.items():
        for reason in dict.fromkeys(r for r in (s.ci_reason, s.iqm_ci_reason) if r):
            suites.setdefault(reason, []).append(suite)
    return "".join(
        f" No interval (–) for "
        f"{'every suite' if len(names) == len(summaries) > 1 else ', '.join(names)}: {reason}."
        for reason, names in suites.items()
    )


def _ours(c: Correlation) -> str:
    return f"undefined ({c.reason})" if np.isnan(c.pearson) else _signed(c.pearson)


def _mean_std(values: Sequence[float]) -> str:
    if np.isnan(values[0]):
        return ""
    return f"{values[0]:.2f}" if np.isnan(values[1]) else f"{values[0]:.2f} ± {values[1]:.2f}"


def _range(values: Sequence[float]) -> str:
    return "" if np.isnan(values[2]) else f"{values[2]:.2f} – {values[3]:.2f}"


def _summary_table(
    summaries: dict[str, Summary], shares: dict[str, Share] | None = None, noun: str = "seed"
) -> Table:
    rows = []
    for suite, s in summaries.items():
        row = {
            "suite": suite,
            f"{noun}s": str(s.n),
            "mean": _pct(s.mean),
            "std": _pct(s.std),
            "min": _pct(s.min),
            "median": _pct(s.median),
            "max": _pct(s.max),
            "IQM": _pct(s.iqm),
            "95% CI of IQM": interval(s.iqm_ci_low, s.iqm_ci_high, _pct),
            "95% CI of mean": interval(s.ci_low, s.ci_high, _pct),
        }
        if shares is not None:
            share = shares[suite]
            row[share.header] = str(share)
        rows.append(row)
    return Table(pd.DataFrame(rows))


def _per_seed_table(
    accuracy: pd.DataFrame,
    training: dict[str, Any],
    stalled: list[str],
    config: SweepConfig | LanguageModelConfig,
) -> Table:
    frame = accuracy.map(_pct).reset_index()
    if config.grid:
        streams = config.streams()
        frame.insert(1, "init", [str(streams[int(s)].init) for s in frame["seed"]])
        frame.insert(2, "order", [str(streams[int(s)].order) for s in frame["seed"]])
    if isinstance(config, LanguageModelConfig):  # a member: the way it asks
        cells = [config.cells()[int(s)] for s in frame["seed"]]
        named = ("format", "draw", "sample") if config.model.prompts.samples else ("format", "draw")
        for at, name in enumerate(named, start=1):
            frame.insert(at, name, [str(getattr(cell, name)) for cell in cells])
        return _marked(frame.rename(columns={"seed": "member"}).astype({"member": str}), accuracy)
    frame["seed"] = frame["seed"].astype(str)
    if training:
        frame["validation"] = [_pct(training[s]["best_accuracy"]) for s in frame["seed"]]
        frame["epochs"] = [str(training[s]["epochs"]) for s in frame["seed"]]
        frame["stopped by"] = [stopped_by(training[s], config.train) for s in frame["seed"]]
        frame["stalled"] = ["yes" if s in stalled else "" for s in frame["seed"]]
    return _marked(frame, accuracy)


def _marked(frame: pd.DataFrame, accuracy: pd.DataFrame) -> Table:
    """`frame` (a row per member of `accuracy`) with each suite's highest and lowest marked."""
    high, low = set(), set()
    for suite in accuracy.columns:
        values = accuracy[suite].to_numpy()
        if np.nanmax(values) > np.nanmin(values):  # a suite where every seed ties has neither
            high.update((int(i), suite) for i in np.flatnonzero(values == np.nanmax(values)))
            low.update((int(i), suite) for i in np.flatnonzero(values == np.nanmin(values)))
    return Table(frame, high, low)


def _correlation_table(correlations: list[Correlation]) -> Table:
    frame = pd.DataFrame(
        [
            {
                "suites": f"{c.a} vs {c.b}",
                "n": str(c.n),
                "Pearson r": _signed(c.pearson),
                "95% CI (Pearson)": interval(*c.pearson_ci, _signed),
                "p (Pearson)": _p(c.pearson_p),
                "Spearman ρ": _signed(c.spearman),
                "95% CI (Spearman)": interval(*c.spearman_ci, _signed),
                "p (Spearman)": _p(c.spearman_p),
            }
            for c in correlations
        ]
    )
    return Table(frame)
