"""A Hugging Face `transformers` architecture trained from scratch: `--arch hf:TYPE`.

    genprobe sweep --task scan --arch hf:gpt2 --model-option n_layer=2 \
        --model-option n_embd=64 --model-option n_head=4 …

builds `AutoConfig.for_model(TYPE, **options)` and a model of that config with fresh weights
(`AutoModelForCausalLM.from_config`; an encoder-decoder type such as `t5` or `bart` through
`AutoModelForSeq2SeqLM`). Nothing is downloaded. The options are the config's fields (or their
aliases, such as `hidden_size` for GPT-2's `n_embd`), with the library's defaults for the rest;
genprobe sets the vocabulary (`ModelShape.seq_vocab`: input and output ids in one table), the
padding id (0) and, where the config has a position table and `max_position_embeddings` is not
given, its size (`ModelShape.max_positions`). The model then trains and decodes like any module
genprobe did not write (`module.ModuleArchitecture`), as a decoder-only or an encoder-decoder
module; the `transformers` version is recorded in each run's provenance.

Needs the `transformers` package (`pip install 'genprobe[hf]'`), imported only when used.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from genprobe.data.seq2seq import BOS, EOS, PAD
from genprobe.errors import ConfigError, GenprobeError
from genprobe.models.architectures.base import ModelShape
from genprobe.models.architectures.module import ModuleArchitecture, checked_module
from genprobe.options import typed_options

# Fields of a transformers config that genprobe sets or that do not describe the model.
NOT_OPTIONS = frozenset(
    {
        "_name_or_path", "architectures", "bos_token_id", "decoder_start_token_id", "dtype",
        "eos_token_id", "id2label", "is_encoder_decoder", "label2id", "model_type",
        "output_attentions", "output_hidden_states", "pad_token_id", "problem_type",
        "return_dict", "torch_dtype", "transformers_version", "use_cache", "vocab_size",
    }
)  # fmt: skip


# transformers' own attention: its masks need no data-dependent branch, so vmap can batch it
EAGER = {"attn_implementation": "eager"}


@dataclass(frozen=True)
class HuggingFaceArchitecture(ModuleArchitecture):
    """`builder` is the spec (hf:TYPE); `settings` the config fields given, as given."""

    @classmethod
    def load(cls, spec: str, options: Mapping[str, Any]) -> HuggingFaceArchitecture:
        """`hf:TYPE` with `options` (text is converted to the type of the field's default).

        Raises:
            GenprobeError: transformers is not installed, or knows no such type.
            ConfigError: a field the type's config does not have (the message lists them).
        """
        defaults = _config_fields(spec)
        types = {name: Any if value is None else type(value) for name, value in defaults.items()}
        given = typed_options(spec, options, {**types, "stacking": str}, "model option")
        stacking = given.pop("stacking", "auto")
        return cls(spec, tuple(sorted(given.items())), stacking)

    @property
    def model_type(self) -> str:
        return self.builder.partition(":")[2]

    def describe(self) -> str:
        settings = ", ".join(f"{name}={value}" for name, value in self.settings)
        return f"Hugging Face {self.model_type} ({settings or 'its defaults'}), from scratch"

    def build_module(self, shape: ModelShape, seed: int) -> nn.Module:
        return checked_module(self.builder, lambda: _hf_module(self, shape), seed)


def _transformers() -> Any:
    try:
        import transformers
    except ImportError:
        raise GenprobeError(
            "hf: architectures need the transformers package: pip install 'genprobe[hf]'"
        ) from None
    return transformers


def _config(model_type: str, spec: str, **fields: Any) -> Any:
    transformers = _transformers()
    known = transformers.models.auto.configuration_auto.CONFIG_MAPPING_NAMES
    if model_type not in known:
        near = difflib.get_close_matches(model_type, known, n=3)
        hint = f" (did you mean {', '.join(f'hf:{name}' for name in near)}?)" if near else ""
        if "/" in model_type:  # a folder or a hub name: trained weights, which --model loads
            hint = " (a model already trained is a model under test: --model hf:PATH)"
        raise ConfigError("arch", f"hf:TYPE with a model type transformers knows{hint}", spec)
    return transformers.AutoConfig.for_model(model_type, **fields)


def _config_fields(spec: str) -> dict[str, Any]:
    """The options of `hf:TYPE`: its config's fields and their aliases, with their defaults."""
    config = _config(spec.partition(":")[2], spec)
    fields = {k: v for k, v in config.to_dict().items() if k not in NOT_OPTIONS}
    for alias, field in getattr(config, "attribute_map", {}).items():
        if field in fields:
            fields.setdefault(alias, fields[field])
    return fields


def _hf_module(arch: HuggingFaceArchitecture, shape: ModelShape) -> nn.Module:
    fields = dict(arch.settings)
    config = _config(arch.model_type, arch.builder, **fields)
    if hasattr(config, "max_position_embeddings") and not (
        {"max_position_embeddings", "n_positions"} & fields.keys()
    ):
        config.max_position_embeddings = shape.max_positions
    config.vocab_size = shape.seq_vocab
    config.pad_token_id = PAD
    config.bos_token_id, config.eos_token_id = shape.src_vocab + BOS, shape.src_vocab + EOS
    if config.is_encoder_decoder:
        config.decoder_start_token_id = shape.src_vocab + BOS
        return EncoderDecoderLM(config, shape.src_vocab)
    return DecoderOnlyLM(config)


class DecoderOnlyLM(nn.Module):
    """A causal language model in the decoder-only layout: forward(seq) → logits."""

    def __init__(self, config: Any) -> None:
        super().__init__()
        self.model = _transformers().AutoModelForCausalLM.from_config(config, **EAGER)
        self.max_positions = _learned_positions(config)

    def forward(self, seq: Tensor) -> Tensor:
        return self.model(input_ids=seq, attention_mask=seq != PAD, use_cache=False).logits


class EncoderDecoderLM(nn.Module):
    """An encoder-decoder language model in genprobe's encoder-decoder layout: output ids in
    the joint vocabulary inside, the output tokens' logits out."""

    def __init__(self, config: Any, src_vocab: int) -> None:
        super().__init__()
        self.model = _transformers().AutoModelForSeq2SeqLM.from_config(config, **EAGER)
        self.src_vocab = src_vocab
        self.max_positions = _learned_positions(config)

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        decoder_ids = torch.where(tgt_in == PAD, PAD, tgt_in + self.src_vocab)
        logits = self.model(
            input_ids=src,
            attention_mask=src != PAD,
            decoder_input_ids=decoder_ids,
            use_cache=False,
        ).logits
        return logits[..., self.src_vocab :]


def _learned_positions(config: Any) -> int | None:
    """The positions a config's table holds (`ModuleArchitecture.takes`); None for a type
    without one (T5's relative positions)."""
    limit = getattr(config, "max_position_embeddings", None)
    return limit if isinstance(limit, int) else None
