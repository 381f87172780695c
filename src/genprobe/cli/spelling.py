"""Settings as the user typed them: a run's config key or a `ConfigError`'s setting
`seeds_per_shard` is `--seeds-per-shard`, `train.batch_size` is `--batch-size`,
`model.decoding.beam_size` is `--beam`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# settings whose option is not the setting's own name with dashes
OPTIONS = {
    "ks": "--k",
    "preset": "--mutation-params",  # SAGGA's, stored under its old name
    "beam size": "--beam",
    "decoding method": "--decoding",
    "model.spec": "--model",
    "model.decoding.method": "--decoding",
    "model.decoding.beam_size": "--beam",
    "model.decoding.length_penalty": "--length-penalty",
    "model.decoding.max_len": "--max-len",
    "model.decoding.temperature": "--temperature",
    "model.decoding.batch_size": "--batch-size",
    "model.deadline": "--model-deadline",
    "model.temperature": "--temperature",
}
# sections whose keys are options of the same name: the top level, a sweep's training settings,
# a generation run's generator and tree settings
FLAT_SECTIONS = ("", "train", "generator", "generator.tree")


def option_spelling(command: Any) -> Callable[[str], str]:
    """Names a setting as the option of `command` (a click command) that sets it, where one
    does; others stay as they are."""
    options = {name for parameter in command.params for name in parameter.opts}

    def spell(key: str) -> str:
        section, _, name = key.rpartition(".")
        option = OPTIONS.get(key)
        if option is None and section in FLAT_SECTIONS:
            option = "--" + name.replace("_", "-")
        return option if option in options else key

    return spell
