"""`genprobe architectures`: the models a sweep trains (`--arch`) and their options.

Example:
    genprobe architectures
    genprobe sweep --task scan --arch mlp --model-option hidden=512 --seeds 10 --out runs/mlp
"""

from __future__ import annotations

import dataclasses
import json

import typer

# The names outside the table, as `--arch` takes them.
OPEN = {
    "py:module:function": "your own torch.nn.Module: function(shape, seed, *, option=default, "
    "…) returns it; its keyword arguments are its options (docs/models.md)",
    "hf:TYPE": "a Hugging Face transformers architecture (hf:gpt2, hf:llama, hf:t5, …) built "
    "from its config and trained from scratch; its config's fields are its options "
    "(pip install 'genprobe[hf]')",
}


def architectures(
    as_json: bool = typer.Option(False, "--json", help="One JSON object per architecture."),
) -> None:
    """List the architectures --arch accepts, with their options and defaults."""
    from genprobe.models.architectures import ARCHITECTURES, load_architecture

    for name in ARCHITECTURES:
        model = load_architecture(name)
        about, options = model.describe(), dataclasses.asdict(model)
        if as_json:
            print(json.dumps({"arch": name, "about": about, "options": options}))
            continue
        options = ", ".join(f"{k}={v}" for k, v in options.items())
        print(f"{name}: {about}\n  options: {options}")
    for name, about in OPEN.items():
        if as_json:
            print(json.dumps({"arch": name, "about": about, "options": None}))
        else:
            print(f"{name}: {about}")
