"""Models shipped inside the package, named `bundled:NAME`, so the probes run at once without
training: each is a checkpoint of `genprobe integration train` (`model.pt`) with its card
(`card.json`: what it was trained on, the recipe that rebuilds it, what it scores on its own
test set), in `bundled_weights/NAME/`.

Example:
    load_model("bundled:integration-cpu")  # the strong CPU model of docs/models.md
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from genprobe.errors import ConfigError

WEIGHTS = Path(__file__).with_name("bundled_weights")


def bundled_names() -> list[str]:
    """The names of the shipped models."""
    if not WEIGHTS.is_dir():
        return []
    return sorted(p.name for p in WEIGHTS.iterdir() if (p / "model.pt").is_file())


def bundled_checkpoint(name: str) -> Path:
    """The `model.pt` of the shipped model `name`.

    Raises:
        ConfigError: no model of that name is shipped (the names that are).
    """
    if name not in bundled_names():
        expected = "bundled:NAME, NAME one of " + (", ".join(bundled_names()) or "(none)")
        raise ConfigError("--model", expected, f"bundled:{name}")
    return WEIGHTS / name / "model.pt"


def bundled_card(name: str) -> dict[str, Any]:
    """The card of the shipped model `name` (see the module doc)."""
    card = bundled_checkpoint(name).with_name("card.json")
    return json.loads(card.read_text(encoding="utf-8"))
