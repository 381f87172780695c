"""What the model under test was trained on, as far as a run can know it: the most operators of
its training expressions (operator-extrapolation's M) and its training data file.

A `ckpt:` model trained by `genprobe integration train` names its data in its run directory's
`config.json` (`"config": {"data": PATH}`, the path as given to `train`); `integration generate`
wrote `NAME.meta.json` beside that data, whose `"config"` holds the generator's `max_ops` (for
the text splits `NAME.train`, `NAME.valid`, `NAME.test` it is `NAME.meta.json`, for one file
`FILE.meta.json`). A `bundled:` model's card gives its max_ops (its data is not shipped).
`--train-data` and `--train-max-ops` override what is read; other models (`lc:`, `sympy`,
`py:`, `openai:`) have only the options. Unknown, M is Lample & Charton's 15.

Example:
    trained_on("ckpt:runs/bwd8-small")
    -> Training(max_ops=8, data="data/bwd8.txt.train", sources={
           "data": "read from runs/bwd8-small/config.json",
           "max_ops": "read from data/bwd8.txt.meta.json"})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from genprobe.errors import DataFormatError
from genprobe.studies.integration_train.study import INTEGRATION_TRAIN
from genprobe.tasks.integration.datasets import dataset_meta, meta_max_ops
from genprobe.tasks.lines import json_object
from genprobe.under_test.registry import ModelSpec


@dataclass(frozen=True)
class Training:
    max_ops: int | None = None  # the generator's max_ops of its training data; None: not known
    data: str | None = None  # its training data file; None: not known
    # "max_ops", "data" -> where each came from ("given by --train-max-ops", "read from FILE"),
    # or why it is not known
    sources: Mapping[str, str] = field(default_factory=dict)


def trained_on(spec: ModelSpec, max_ops: int | None = None, data: str | None = None) -> Training:
    """What the model `spec` was trained on: `max_ops` and `data` where given (the options),
    else what the model records.

    Raises:
        DataFormatError: the checkpoint's config.json or the data's meta.json is malformed (the
            file and field named).
    """
    sources = {}
    if data is None:
        data, sources["data"] = _recorded_data(spec)
    else:
        sources["data"] = "given by --train-data"
    if max_ops is not None:
        sources["max_ops"] = "given by --train-max-ops"
    elif data is None:
        max_ops, sources["max_ops"] = _card_max_ops(spec, sources["data"])
    else:
        max_ops, sources["max_ops"] = _generator_max_ops(Path(data))
    return Training(max_ops, data, sources)


def _recorded_data(spec: ModelSpec) -> tuple[str | None, str]:
    """The training data a `ckpt:` model's run directory names, and where it was read (or why
    there is none)."""
    if spec.prefix == "bundled":
        return None, f"{spec} ships without its data (its card names the recipe)"
    if spec.prefix != "ckpt":
        return None, f"{spec} records no training data"
    path = Path(spec.target)
    config = (path if path.is_dir() else path.parent) / "config.json"
    if not config.is_file():
        return None, f"no {config} beside the checkpoint"
    recorded = json_object(config)
    if recorded.get("kind") != INTEGRATION_TRAIN.kind:
        return None, f"{config} is not the record of an `integration train` run"
    settings = recorded.get("config")
    data = settings.get("data") if isinstance(settings, dict) else None
    if not isinstance(data, str):
        raise DataFormatError(config, None, "field 'config.data': expected the training data path")
    if not Path(data).is_file():
        return None, f"{config} names {data}, which is not there"
    return data, f"read from {config}"


def _card_max_ops(spec: ModelSpec, no_data: str) -> tuple[int | None, str]:
    """`max_ops` from a `bundled:` model's card, or None and why no data is known."""
    if spec.prefix != "bundled":
        return None, no_data
    from genprobe.models.bundled import bundled_card

    return bundled_card(spec.target)["trained_on"]["max_ops"], f"read from {spec}'s card"


def _generator_max_ops(data: Path) -> tuple[int | None, str]:
    """`max_ops` from the meta.json `integration generate` (or `mix`) wrote beside `data`, and
    that file (or why there is none)."""
    meta, path = dataset_meta(data)
    if meta is None:
        return None, f"no generator metadata ({path}) beside {data}"
    return meta_max_ops(meta, path), f"read from {path}"
