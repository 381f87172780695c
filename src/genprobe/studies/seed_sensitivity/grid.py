"""A grid of seed sweeps over settings: one run per cell, the same seeds in each.

Grokking's phase diagram (Power et al. 2022, Fig. 2; Liu et al. 2022, Omnigrok) is this: the
training fraction × the weight decay, and in each cell the share of seeds that learned the rule
and when. A setting is named where it lives: `task.NAME` (a task option), `train.NAME` (a
`TrainConfig` field) or `model.NAME` (an option of the architecture). Each cell is an ordinary
sweep run in a folder of the grid named after its values, so every cell resumes, reports and
compares like any run; `grid.json` lists the axes and the cells.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from genprobe.errors import ConfigError, RunDirError
from genprobe.models.architectures import architecture_name, load_architecture
from genprobe.options import field_types, typed_options
from genprobe.runs.atomic import write_json
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.study import GRID_FILE
from genprobe.tasks.registry import load_task, task_name
from genprobe.training.trainer import TrainConfig

PLACES = ("task", "train", "model")


@dataclass(frozen=True)
class Cell:
    values: dict[str, Any]  # setting -> its value in this cell, in the order of the axes
    run: Path  # the cell's run directory

    @property
    def name(self) -> str:
        return cell_name(self.values)


def cell_name(values: Mapping[str, Any]) -> str:
    """A cell's folder: `train_fraction=0.3,weight_decay=1.0`."""
    return ",".join(f"{setting.partition('.')[2]}={value}" for setting, value in values.items())


def parse_axes(given: Sequence[str]) -> dict[str, list[str]]:
    """`["task.train_fraction=0.3,0.5", …]` → {setting: [values as text]}.

    Raises:
        ConfigError: an item that is not PLACE.NAME=V1,V2,… or a setting given twice.
    """
    axes: dict[str, list[str]] = {}
    for item in given:
        setting, _, values = item.partition("=")
        place, _, name = setting.partition(".")
        if place not in PLACES or not name or not values:
            raise ConfigError("--vary", "task.NAME=V1,V2, train.NAME=… or model.NAME=…", item)
        if setting in axes:
            raise ConfigError("--vary", "each setting once", setting)
        axes[setting] = [v.strip() for v in values.split(",")]
    return axes


def parse_settings(given: Sequence[str]) -> dict[str, dict[str, str]]:
    """`["train.lr=0.01", "task.split=length", …]` (`--set`) → {place: {name: value as text}},
    every place there.

    Raises:
        ConfigError: an item that is not PLACE.NAME=VALUE, or a setting given twice.
    """
    settings: dict[str, dict[str, str]] = {place: {} for place in PLACES}
    for item in given:
        setting, equals, value = item.partition("=")
        place, _, name = setting.strip().partition(".")
        if place not in PLACES or not name or not equals:
            raise ConfigError("--set", "task.NAME=VALUE, train.NAME=… or model.NAME=…", item)
        if name in settings[place]:
            raise ConfigError("--set", "each setting once", setting.strip())
        settings[place][name] = value.strip()
    return settings


def grid_configs(
    config: SweepConfig,
    axes: Mapping[str, Sequence[str]],
    fit: Callable[[SweepConfig], SweepConfig] = lambda cell: cell,
) -> list[tuple[dict, SweepConfig]]:
    """Every cell of the grid: its values (typed) and `config` with them set, then `fit` (what
    follows from the cell's task, such as the training set's size). Every cell's config is
    built (and so checked) before anything runs.

    Raises:
        ConfigError: a setting the task, training or model does not have, or a value that is
            not one of it (naming the cell).
    """
    cells = []
    for combination in itertools.product(*axes.values()):
        changes = dict(zip(axes, combination, strict=True))
        cell = config
        for setting, value in changes.items():
            cell = _with_setting(cell, setting, value)
        typed = {setting: _value(cell, setting) for setting in changes}
        cells.append((typed, fit(cell)))
    return cells


def _with_setting(config: SweepConfig, setting: str, value: str) -> SweepConfig:
    place, _, name = setting.partition(".")
    if place == "task":
        options = {**config.task.options(), name: value}
        return replace(config, task=load_task(task_name(config.task), options))
    if place == "model":
        arch = architecture_name(config.model)
        return replace(
            config, model=load_architecture(arch, {**config.model.options(), name: value})
        )
    typed = typed_options("training", {name: value}, field_types(TrainConfig), "setting")
    return replace(config, train=replace(config.train, **typed))


def _value(config: SweepConfig, setting: str) -> Any:
    place, _, name = setting.partition(".")
    holder = {"task": config.task.options(), "model": config.model.options()}
    return holder[place][name] if place in holder else getattr(config.train, name)


def run_grid(
    config: SweepConfig,
    axes: Mapping[str, Sequence[str]],
    out: str | Path,
    run_cell: Callable[[SweepConfig, Path], Path],
    fit: Callable[[SweepConfig], SweepConfig] = lambda cell: cell,
) -> list[Cell]:
    """Run (or resume) every cell with `run_cell(cell config, its folder)`, in order (each cell's
    config as `grid_configs` makes it with `fit`); returns the cells. `grid.json` is written
    first, so a killed grid resumes from any cell.

    Raises:
        RunDirError: `out` holds another grid.
        ConfigError: see `grid_configs`.
    """
    out = Path(out)
    configs = grid_configs(config, axes, fit)
    cells = [Cell(values, out / cell_name(values)) for values, _ in configs]
    description = _description(axes, cells)
    if (out / GRID_FILE).exists():
        if json.loads((out / GRID_FILE).read_text()) != description:
            raise RunDirError(f"{out.absolute()} holds another grid: choose another --out")
    else:
        write_json(out / GRID_FILE, description)
    for cell, (_, cell_config) in zip(cells, configs, strict=True):
        run_cell(cell_config, cell.run)
    return cells


def _description(axes: Mapping[str, Sequence[str]], cells: Sequence[Cell]) -> dict[str, Any]:
    values = {setting: [] for setting in axes}
    for cell in cells:
        for setting, value in cell.values.items():
            if value not in values[setting]:
                values[setting].append(value)
    return {
        "axes": values,
        "cells": [{"values": cell.values, "run": cell.name} for cell in cells],
    }


def read_grid(path: str | Path) -> tuple[dict[str, list[Any]], list[Cell]]:
    """The axes and cells of the grid in `path`.

    Raises:
        RunDirError: no readable grid.json.
    """
    path = Path(path)
    try:
        grid = json.loads((path / GRID_FILE).read_text())
        cells = [Cell(dict(c["values"]), path / c["run"]) for c in grid["cells"]]
        return dict(grid["axes"]), cells
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise RunDirError(f"{path / GRID_FILE}: not a grid's description ({error})") from None
