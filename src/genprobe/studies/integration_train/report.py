"""The report of a training run: its config, the training curve and validation Fail@1 per
epoch, read from the run's files (`results.py`)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from genprobe.analysis.plots import save_figure
from genprobe.analysis.render import Figure, Heading, Table, Text
from genprobe.analysis.render import write_report as render
from genprobe.studies.integration_train.results import read_metrics, read_train_config


def write_train_report(run: str | Path) -> tuple[Path, Path]:
    """report.md and report.html of a training run; returns their paths."""
    run = Path(run)
    config = read_train_config(run)
    metrics = read_metrics(run)
    last = metrics.iloc[-1]
    partial = "partial" in metrics and pd.notna(last.get("partial"))
    epochs = int(last["epoch"]) + (0 if partial else 1)
    text = (
        f"Trained on `{config['data']}` ({config['size']} model) for {epochs} of "
        f"{config['epochs']} epochs, {int(last['step']):,} steps"
        f"{' (stopped inside an epoch by the time budget)' if partial else ''}. Validation "
        f"Fail@1 (greedy, verified) on {int(last['valid_size']):,} problems "
        f"(`{last.get('valid_from', 'held out of the data')}`): {last['valid_fail@1']:.1%}."
    )
    figure = _curve(metrics, run / "figures" / "training.png").relative_to(run)
    blocks = [
        Text(text),
        Figure(figure, "Training loss and validation Fail@1 per validation"),
        Heading("Validations"),
        Table(_validations(metrics)),
        Heading("Config"),
        Table(
            pd.DataFrame(
                [(name, str(value)) for name, value in config.items() if name != "extra"],
                columns=["setting", "value"],
            )
        ),
    ]
    return render(run, "Training the integration transformer", blocks)


def _validations(metrics: pd.DataFrame) -> pd.DataFrame:
    partial = metrics["partial"] if "partial" in metrics else pd.Series(float("nan"), metrics.index)
    return pd.DataFrame(
        {
            "epoch": [
                f"{int(e) + 1}" + ("" if pd.isna(p) else f" ({p:.0%} of it)")
                for e, p in zip(metrics["epoch"], partial, strict=True)
            ],
            "step": [f"{int(s):,}" for s in metrics["step"]],
            "train loss": [f"{v:.4f}" for v in metrics["train_loss"]],
            "valid Fail@1": [f"{v:.1%}" for v in metrics["valid_fail@1"]],
            "seconds": [f"{v:,.0f}" for v in metrics["train_seconds"]],
        }
    )


def _curve(metrics: pd.DataFrame, path: Path) -> Path:
    fig, loss = plt.subplots(figsize=(6.5, 3.8))
    lines = loss.plot(metrics["step"], metrics["train_loss"], marker="o", label="train loss")
    loss.set_xlabel("step")
    loss.xaxis.set_major_locator(MaxNLocator(integer=True))
    loss.set_ylabel("train loss (per token)")
    loss.grid(alpha=0.3)
    fail = loss.twinx()
    lines += fail.plot(
        metrics["step"], 100 * metrics["valid_fail@1"], marker="s", color="tab:red",
        label="valid Fail@1",
    )  # fmt: skip
    fail.set_ylabel("validation Fail@1 (%)")
    fail.set_ylim(-3, 103)
    loss.legend(handles=lines, loc="lower left")
    loss.set_title("Training curve")
    return save_figure(fig, path)
