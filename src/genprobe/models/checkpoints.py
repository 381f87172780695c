"""Reading and writing transformer checkpoints: ours, and Lample & Charton's released ones.

Both are `torch.save` dicts with `encoder` and `decoder` state dicts (keys possibly prefixed
`module.` by DistributedDataParallel) and `params`. Nothing is unpickled beyond tensors and
plain containers: loading always uses `weights_only=True`. L&C's `params` is a dict of their
argparse values, or in some files the `argparse.Namespace` itself; for the latter the name
`argparse.Namespace` is mapped to `LCParams`, an inert attribute holder of our own, for the
duration of the load only, so no class of theirs (or argparse's) is ever instantiated.

Dimensions are read from the tensors (vocabulary, dim, layers, position table); the head count,
which no tensor shows, from `params["n_heads"]` (8, L&C's value, if absent).

The `model.pt` of a training run is read only as the run recorded it (its checkpoint shard):
damaged, or found without its record, it is a `DamagedFileError` naming it, never loaded.
"""

from __future__ import annotations

import pickle
import re
import warnings
from pathlib import Path
from typing import Any

import torch

from genprobe.errors import CheckpointError
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig
from genprobe.runs.checkpoint import CHECKPOINT, MODEL
from genprobe.runs.rundir import CONFIG_FILE
from genprobe.runs.shards import MANIFESTS, ShardStore
from genprobe.runs.torch_files import load_torch, save_torch, torch_bytes

FORMAT = "genprobe.seq2seq_transformer/1"
_PRIMITIVE = (str, int, float, bool, type(None))


class LCParams:
    """Stand-in for the `argparse.Namespace` pickled in some L&C checkpoints: keeps the values
    that are plain data (str, numbers, bools, None, lists of those) and nothing else."""

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("argparse.Namespace state is not a dict")
        self.values = {
            key: value for key, value in state.items() if isinstance(key, str) and _is_plain(value)
        }


def _is_plain(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(isinstance(item, _PRIMITIVE) for item in value)
    return isinstance(value, _PRIMITIVE)


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict, tensors on CPU, `params` as a plain dict.

    Raises:
        CheckpointError: unreadable, not a dict with `encoder` and `decoder`, or holding
            objects other than tensors and plain data.
        DamagedFileError: the `model.pt` of a training run is not the one the run recorded.
    """
    path = _as_recorded(Path(path))
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    with (
        torch.serialization.safe_globals([(LCParams, "argparse.Namespace")]),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # torch's notes on pickle protocols
        data = load_torch(path)
    if not isinstance(data, dict) or not {"encoder", "decoder"} <= data.keys():
        raise CheckpointError(f"{path}: expected a dict with 'encoder' and 'decoder' state dicts")
    params = data.get("params", {})
    data["params"] = params.values if isinstance(params, LCParams) else dict(params or {})
    for side in ("encoder", "decoder"):
        data[side] = _strip_module_prefix(data[side])
    return data


def _as_recorded(path: Path) -> Path:
    """`path`, checked against its run's record where it is the `model.pt` of a training run
    that records it (stage `CHECKPOINT`: `genprobe integration train`); any other checkpoint,
    and one of a run made before, as it is.

    Raises:
        DamagedFileError: the run's model is missing or damaged, or its record is.
    """
    run, records = path.parent, path.parent / MANIFESTS
    recorded = (records / CHECKPOINT).is_dir() or (records / f"{CHECKPOINT}.json").is_file()
    if path.name != MODEL or not recorded or not (run / CONFIG_FILE).is_file():
        return path
    # none: the trainer of this process is writing it (or there is none: loading says so)
    return ShardStore(run).file(CHECKPOINT, MODEL) or path


def _strip_module_prefix(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    if state and all(key.startswith("module.") for key in state):
        return {key[len("module.") :]: value for key, value in state.items()}
    return dict(state)


def _count_layers(state: dict[str, torch.Tensor]) -> int:
    indices = {int(m.group(1)) for key in state if (m := re.match(r"attentions\.(\d+)\.", key))}
    return max(indices) + 1 if indices else 0


def infer_config(data: dict[str, Any], path: str | Path = "checkpoint") -> TransformerConfig:
    """Model sizes from the tensors; head count and special ids from `params`."""
    encoder, decoder, params = data["encoder"], data["decoder"], data["params"]
    for side, state in (("encoder", encoder), ("decoder", decoder)):
        for key in ("embeddings.weight", "position_embeddings.weight"):
            if key not in state:
                raise CheckpointError(f"{path}: {side} has no '{key}'")
    n_words, dim = encoder["embeddings.weight"].shape
    return TransformerConfig(
        n_words=n_words,
        dim=dim,
        n_enc_layers=_count_layers(encoder),
        n_dec_layers=_count_layers(decoder),
        n_heads=int(params.get("n_heads", 8)),
        max_positions=encoder["position_embeddings.weight"].shape[0],
        eos_index=int(params.get("eos_index", 0)),
        pad_index=int(params.get("pad_index", 1)),
    )


def load_state_strictly(
    model: Seq2SeqTransformer, data: dict[str, Any], path: str | Path = "checkpoint"
) -> None:
    """Load both sides; a missing, unexpected or mis-shaped key is a `CheckpointError` naming it."""
    for side in ("encoder", "decoder"):
        module = getattr(model, side)
        expected = module.state_dict()
        given = data[side]
        missing = sorted(expected.keys() - given.keys())
        unexpected = sorted(given.keys() - expected.keys())
        if missing:
            raise CheckpointError(
                f"{path}: {side} is missing '{missing[0]}' ({len(missing)} missing)"
            )
        if unexpected:
            raise CheckpointError(
                f"{path}: {side} has unexpected '{unexpected[0]}' ({len(unexpected)} unexpected)"
            )
        for key, tensor in expected.items():
            if tuple(given[key].shape) != tuple(tensor.shape):
                raise CheckpointError(
                    f"{path}: {side}.{key} has shape {tuple(given[key].shape)}, "
                    f"the model expects {tuple(tensor.shape)}"
                )
        if side == "decoder" and not torch.equal(given["proj.weight"], given["embeddings.weight"]):
            raise CheckpointError(
                f"{path}: decoder.proj.weight differs from decoder.embeddings.weight; "
                "only a tied output projection is supported"
            )
        module.load_state_dict(given, strict=True)


def load_transformer(path: str | Path) -> tuple[Seq2SeqTransformer, dict[str, Any]]:
    """A model (eval mode, CPU) from our checkpoint or L&C's, and the checkpoint's `params`."""
    data = read_checkpoint(path)
    stored = data.get("config")
    try:
        config = (
            TransformerConfig(**stored) if isinstance(stored, dict) else infer_config(data, path)
        )
    except TypeError as error:
        raise CheckpointError(f"{path}: bad 'config' ({error})") from None
    model = Seq2SeqTransformer(config)
    load_state_strictly(model, data, path)
    return model.eval(), data["params"]


def save_transformer(
    path: str | Path, model: Seq2SeqTransformer, params: dict[str, Any], **extra: Any
) -> None:
    """Write our checkpoint (`transformer_bytes`), atomically.

    Raises:
        DiskFullError: the file system ran out of space while writing it.
    """
    save_torch(path, _checkpoint(model, params, extra))


def transformer_bytes(model: Seq2SeqTransformer, params: dict[str, Any], **extra: Any) -> bytes:
    """Our checkpoint's contents (L&C's layout plus `config` and `format`): the same model and
    params give the same bytes."""
    return torch_bytes(_checkpoint(model, params, extra))


def _checkpoint(
    model: Seq2SeqTransformer, params: dict[str, Any], extra: dict[str, Any]
) -> dict[str, Any]:
    unwrapped = getattr(model, "_orig_mod", model)  # a torch.compile'd model
    return {
        "format": FORMAT,
        "config": unwrapped.config.to_dict(),
        "encoder": unwrapped.encoder.state_dict(),
        "decoder": unwrapped.decoder.state_dict(),
        "params": params,
        **extra,
    }
