"""`genprobe models`: the kinds of model under test and how to name them.

Example:
    genprobe models
    genprobe integration evaluate --model lc:fwd_bwd_ibp.pth --data prim_bwd.test --k 1 10
"""

from __future__ import annotations

import json

import typer


def models(as_json: bool = typer.Option(False, "--json", help="One JSON object per kind.")) -> None:
    """List the model specs --model accepts (reads the registry; imports no backend)."""
    from genprobe.under_test.registry import MODELS

    for name, kind in MODELS.items():
        if as_json:
            prompted = "prompts" in kind.settings
            tasks = "token tasks" if kind.tokens else "every task" if prompted else "integration"
            print(
                json.dumps({"kind": name, "usage": kind.usage, "help": kind.help, "tasks": tasks})
            )
        else:
            print(f"{kind.usage:<20} {kind.help}")
