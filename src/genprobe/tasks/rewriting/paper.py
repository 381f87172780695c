"""What Weber, Shekhar & Balasubramanian (2018) report, to print beside a run's numbers.

Table 3 (accuracy % over their 50 seeds), the Repeat-Long Pearson correlation from section 4,
and the model and training settings of Table 1 (input feeding and the attentional layer are
not stated there).
"""

from __future__ import annotations

from genprobe.tasks.published import Published

WEBER_2018 = Published(
    source="Weber et al. 2018, Table 3",
    seeds=50,
    suites={
        suite: dict(zip(("mean", "std", "min", "max"), values, strict=True))
        for suite, values in {
            "standard": (99.85, 0.03, 99.73, 99.88),
            "repeat": (86.67, 13.39, 45.70, 99.85),
            "short": (64.36, 18.61, 32.80, 96.35),
            "long": (32.09, 20.63, 0.15, 97.60),
        }.items()
    },
    pairs={("repeat", "long"): -0.71, ("short", "long"): None},
    settings={
        "arch": "recurrent",
        "model.cell": "lstm",
        "model.attention": "bilinear",
        "model.layers": 1,
        "model.emb": 32,
        "model.hidden": 32,
        "model.dropout": 0.1,
        "train.optimizer": "sgd",
        "train.lr": 0.125,
        "train.batch_size": 64,
        "train_size": 100_000,
    },
    note="their test files differ from our generated suites",
)
