"""Every architecture the seed study trains, by name: one explicit table of "module:Class",
each imported only when used.

A row's class is the architecture's options (a frozen dataclass, `base.Architecture`), which
builds S seeds of it as one stacked model. Two kinds of name stand for models genprobe did not
write: `py:module:function`, a researcher's own `torch.nn.Module` (`module.ModuleArchitecture`:
the function's keyword arguments are its options), and `hf:TYPE`, a Hugging Face `transformers`
architecture built from its config and trained from scratch (`huggingface`). Both are trained
S seeds at once with `torch.func` where the module allows it.

To add an architecture to genprobe: write it in one file here, add its row; the model check
(`tests/models/test_architectures.py`) then runs over it.

Example:
    model = load_architecture("recurrent", {"hidden": "64", "attention": "dot"})
    model = load_architecture("py:my_model:build", {"width": 128})
    model = load_architecture("hf:gpt2", {"n_layer": 2, "n_embd": 64, "n_head": 4})
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping
from typing import Any

from genprobe.errors import UnknownArchitectureError
from genprobe.models.architectures.base import Architecture, ModelShape
from genprobe.options import field_types, typed_options
from genprobe.user_code import USER_PREFIX, names_user_code

ARCHITECTURES: dict[str, str] = {
    "recurrent": "genprobe.models.architectures.recurrent:RecurrentConfig",  # Weber et al.'s
    "transformer": "genprobe.models.architectures.transformer:TransformerSeedConfig",
    "mlp": "genprobe.models.architectures.mlp:MLPConfig",
    "nanda_transformer": "genprobe.models.architectures.nanda_transformer:NandaTransformerConfig",
}
HUGGING_FACE = "hf"  # hf:TYPE, a transformers architecture such as hf:gpt2

__all__ = [
    "ARCHITECTURES",
    "Architecture",
    "ModelShape",
    "architecture_class",
    "architecture_name",
    "load_architecture",
]


def architecture_class(name: str) -> type[Architecture]:
    """The options class of a row of the table.

    Raises:
        UnknownArchitectureError: no such row (with the nearest names and the full list).
    """
    if name not in ARCHITECTURES:
        near = difflib.get_close_matches(name, ARCHITECTURES, n=3)
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        raise UnknownArchitectureError(
            f"unknown architecture {name!r}.{hint} Known: {', '.join(ARCHITECTURES)}, "
            f"{USER_PREFIX}:module:function or {HUGGING_FACE}:TYPE"
        )
    module, _, cls = ARCHITECTURES[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def load_architecture(name: str, options: Mapping[str, Any] | None = None) -> Architecture:
    """The architecture `name` with `options` (values of the right types, or text to convert).

    Raises:
        UnknownArchitectureError: no such architecture.
        ConfigError: an option it does not have (the message lists those it has), or a value
            of the wrong type or out of range.
        ModelContractError: a `py:` builder that cannot be imported or called as one.
        GenprobeError: `hf:` without the `transformers` package, or a type it does not know.
    """
    options = dict(options or {})
    if names_user_code(name):
        from genprobe.models.architectures.module import ModuleArchitecture

        return ModuleArchitecture.load(name, options)
    if name.startswith(f"{HUGGING_FACE}:"):
        from genprobe.models.architectures.huggingface import HuggingFaceArchitecture

        return HuggingFaceArchitecture.load(name, options)
    cls = architecture_class(name)
    return cls(**typed_options(name, options, field_types(cls), "model option"))


def architecture_name(model: Architecture) -> str:
    """The name that `load_architecture` builds `model` from."""
    if (spec := model.spec()) is not None:
        return spec
    path = f"{type(model).__module__}:{type(model).__qualname__}"
    return next(name for name, row in ARCHITECTURES.items() if row == path)
