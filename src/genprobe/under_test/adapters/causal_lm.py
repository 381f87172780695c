"""A Hugging Face causal language model from a local directory or a hub name: prompts in,
completions and answer log-probabilities out (the core of the `hf:PATH` model under test).

    lm = load_causal_lm("checkpoints/gpt2-addition")              # or "openai-community/gpt2"
    lm.complete(["12+34="], 8, stop=["\\n"])                      # [["46"]]
    lm.complete(["12+34="], 8, method="sample", seed=0)            # reproducible for the seed
    lm.complete(["12+34="], 8, method="beam", beams=4)             # 4 completions, best first
    lm.logprob(["12+34="], ["46"])                                 # array([-1.7])

Prompts are tokenized as generation feeds them (with the tokenizer's special tokens, e.g. a
BOS), batched by length and padded on the left with an attention mask and matching position
ids. Greedy decoding and sampling run genprobe's own loop on the model's key/value cache, so
that each prompt samples from a generator of its own, seeded by (seed, its position in the
list) or by a seed of its own: a prompt's sample does not depend on the prompts batched with
it or on `batch_size` (up to float rounding of the logits, which can differ between batch
shapes). Beam search is
`transformers`' `generate`, handed each prompt's key/value cache computed once for all its
beams. A completion ends at an end-of-sequence token (not part of the
text), at a stop string (cut before it) or after `max_new_tokens`.

A directory is read with `local_files_only`; a hub name (a path that does not exist, shaped
as `ORG/NAME` or `NAME`: `hub_name`) through the Hugging Face cache, which honours
HF_HUB_OFFLINE. Weights come from safetensors where present, a `.bin` checkpoint only through
`torch.load(weights_only=True)`, and no code from the checkpoint is run. Needs
`transformers` (`pip install 'genprobe[hf]'`), imported when used.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from genprobe.errors import CheckpointError, ConfigError, GenprobeError, check_choice, finite

METHODS = ("greedy", "sample", "beam")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# cache layers of keys and values alone (transformers 5), repeated for the beams
KEY_VALUE_LAYERS = ("DynamicLayer", "DynamicSlidingWindowLayer")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


def load_causal_lm(
    path: str | Path, device: str | torch.device = "cpu", dtype: str | torch.dtype | None = None
) -> CausalLM:
    """The causal language model and tokenizer of `path`, on `device`, in `dtype` (None: as
    saved; or float32, float16, bfloat16): a directory made by `save_pretrained`, or, where
    `hub_name` reads `path` as one, a Hugging Face hub name (from the Hugging Face cache, or
    downloaded into it unless HF_HUB_OFFLINE is set).

    Raises:
        CheckpointError: `path` is not a directory, has no config, holds no causal language
            model (an encoder-only or encoder-decoder one), no weights, or no tokenizer; a hub
            name that cannot be loaded (not cached while offline, unknown, unreachable).
        ConfigError: an unknown dtype.
        GenprobeError: transformers is not installed.
    """
    transformers = _hf_package("transformers")
    name = hub_name(path)
    if name is None:
        root = Path(path)
        _check_saved(root)
        source: str | Path = root
        config_file, unreadable = root / "config.json", "cannot be read"
        options = {"local_files_only": True, "use_safetensors": any(root.glob("*.safetensors"))}
        reason = _first_line
    else:  # transformers tries safetensors first, then a .bin (weights_only below)
        source, config_file, options, reason = name, name, {}, _hub_reason
        unreadable = "not a folder, and cannot be loaded as a Hugging Face hub name"
    try:
        config = transformers.AutoConfig.from_pretrained(source, **options)
    except (OSError, ValueError, KeyError) as error:
        raise CheckpointError(f"{config_file}: {unreadable} ({reason(error)})") from None
    _check_causal(config, config_file)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, **options)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"{source}: tokenizer cannot be read ({reason(error)})") from None
    from safetensors import SafetensorError

    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(
            source, weights_only=True, dtype=_dtype(dtype), **options
        )
    except (OSError, ValueError, RuntimeError, pickle.UnpicklingError, SafetensorError) as error:
        # weights_only refuses a pickle holding anything but tensors: UnpicklingError
        raise CheckpointError(f"{source}: weights cannot be read ({reason(error)})") from None
    return CausalLM(model.to(device).eval(), tokenizer, name=str(source))


def hub_name(path: str | Path) -> str | None:
    """`path` as a Hugging Face hub name (`ORG/NAME` or `NAME`), or None for a local path: one
    that exists, or one that no hub name can be (huggingface_hub's `validate_repo_id`: it
    starts with `.`, `/` or `~`, has two `/` or more, or a character other than letters,
    digits, `-`, `_` and `.`).

    Raises:
        GenprobeError: huggingface_hub (a part of transformers) is not installed.
    """
    text = str(path)
    if Path(text).exists():
        return None
    validators = _hf_package("huggingface_hub.utils")
    try:
        validators.validate_repo_id(text)
    except validators.HFValidationError:
        return None
    return text


def _check_saved(root: Path) -> None:
    """Refuse a local directory that lacks what `save_pretrained` writes."""
    if not root.is_dir():
        raise CheckpointError(f"{root}: not a directory holding a causal language model")
    if not (root / "config.json").is_file():
        raise CheckpointError(f"{root}: no config.json (a directory made by save_pretrained?)")
    if not any(root.glob("*.safetensors")) and not any(root.glob("*.bin")):
        raise CheckpointError(f"{root}: no weights (*.safetensors or *.bin)")
    if not any((root / name).is_file() for name in TOKENIZER_FILES):
        raise CheckpointError(f"{root}: no tokenizer (none of {', '.join(TOKENIZER_FILES)})")


class CausalLM:
    """A causal language model and its tokenizer (see the module's docstring)."""

    can_sample = True  # at any temperature, from a seed per prompt (`complete`)

    def __init__(self, model: Any, tokenizer: Any, name: str) -> None:
        self.model, self.tokenizer, self.name = model, tokenizer, name
        eos = model.generation_config.eos_token_id
        if eos is None:
            eos = tokenizer.eos_token_id
        self.eos_ids = frozenset([] if eos is None else [eos] if isinstance(eos, int) else eos)
        # padding is masked out: any id of the vocabulary does, the tokenizer's own first
        pad = next(
            (i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id) if i is not None), 0
        )
        self.pad_id: int = pad
        # logits of the last position only: a long prompt's would fill memory (vocab x length)
        keep = "logits_to_keep" in inspect.signature(model.forward).parameters
        self._last_logits_only = {"logits_to_keep": 1} if keep else {}

    @property
    def device(self) -> torch.device:
        return self.model.device

    def count_tokens(self, text: str) -> int:
        """The tokens `text` takes on its own."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def fits(self, prompts: Sequence[str], max_new_tokens: Sequence[int]) -> np.ndarray:
        """(n,) bool: whether prompt i leaves room for `max_new_tokens[i]` new tokens in the
        model's positions (`complete` refuses one that does not)."""
        limit = _max_positions(self.model.config)
        if limit is None or not len(prompts):
            return np.ones(len(prompts), dtype=bool)
        tokens = np.array([len(ids) for ids in self.tokenizer(list(prompts))["input_ids"]])
        return tokens + np.asarray(max_new_tokens) <= limit

    def complete(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        *,
        method: str = "greedy",
        seed: int | Sequence[int] | None = None,
        temperature: float = 1.0,
        beams: int = 1,
        stop: Sequence[str] | None = None,
        batch_size: int = 32,
    ) -> list[list[str]]:
        """Per prompt, its completions: one for greedy and sample, `beams` (best first) for
        beam. Sampling draws at `temperature` and needs a `seed`: one for all (each prompt
        then draws from (seed, its position)), or one per prompt.

        Raises:
            ConfigError: a setting out of range, or a prompt that tokenizes to nothing or
                leaves no room for `max_new_tokens` in the model's positions.
        """
        check_choice("method", method, METHODS)
        _at_least("max_new_tokens", max_new_tokens, 1)
        _at_least("batch_size", batch_size, 1)
        _at_least("beams", beams, 1)
        keys: list[list[int]] = []  # each prompt's sampling seed
        if method == "sample":
            if seed is None:
                raise ConfigError("seed", "an integer when method is sample", seed)
            if not (finite(temperature) and temperature > 0):
                raise ConfigError("temperature", "a positive number", temperature)
            keys = _seed_keys(seed, len(prompts))
        stops = [text for text in stop or () if text]
        ids = self._prompt_ids(prompts, max_new_tokens)
        out: list[list[str]] = [[] for _ in prompts]
        for batch in _batches(ids, batch_size):
            rows = [ids[i] for i in batch]
            if method == "beam":
                texts = self._beam(rows, max_new_tokens, beams, stops)
            else:
                sampled = [keys[i] for i in batch] if keys else []
                choose = _greedy if method == "greedy" else _sampler(sampled, temperature)
                texts = [[text] for text in self._decode(rows, max_new_tokens, choose, stops)]
            for i, completions in zip(batch, texts, strict=True):
                out[i] = [_cut(text, stops) for text in completions]
        return out

    def logprob(
        self, prompts: Sequence[str], answers: Sequence[str], batch_size: int = 32
    ) -> np.ndarray:
        """(N,) the summed log-probability of answer i's tokens after prompt i, teacher-forced.

        The prompt's tokens are those generation feeds the model; the answer's tokens are the
        tokenizer's split of prompt + answer after them, or, where that split merges across
        the boundary and so changes the prompt's tokens, the answer tokenized on its own
        (when its tokens decode back to it after the prompt). An end-of-sequence token is not
        part of an answer; an empty answer has log-probability 0.

        Raises:
            ConfigError: the lists differ in length, a prompt tokenizes to nothing, or an
                answer cannot be tokenized after its prompt.
        """
        if len(prompts) != len(answers):
            raise ConfigError("answers", f"one per prompt ({len(prompts)})", len(answers))
        _at_least("batch_size", batch_size, 1)
        prompt_ids = self._prompt_ids(prompts, 0)
        pairs = [
            (p, self._answer_ids(p, prompt, answer, i))
            for i, (p, prompt, answer) in enumerate(zip(prompt_ids, prompts, answers, strict=True))
        ]
        limit = _max_positions(self.model.config)
        for i, (p, a) in enumerate(pairs):
            if limit is not None and len(p) + len(a) > limit:
                raise ConfigError(
                    f"answers[{i}]",
                    f"at most {limit} tokens with its prompt (the model's positions)",
                    f"{len(p) + len(a)} tokens",
                )
        total = np.zeros(len(pairs))
        for batch in _batches([p + a for p, a in pairs], batch_size):
            total[batch] = self._score([pairs[i] for i in batch])
        return total

    def _prompt_ids(self, prompts: Sequence[str], max_new_tokens: int) -> list[list[int]]:
        limit = _max_positions(self.model.config)
        ids = self.tokenizer(list(prompts))["input_ids"] if prompts else []
        for i, row in enumerate(ids):
            if not row:
                raise ConfigError(f"prompts[{i}]", "text that tokenizes to a token or more", "")
            if limit is not None and len(row) + max_new_tokens > limit:
                raise ConfigError(
                    f"prompts[{i}]",
                    f"at most {limit - max_new_tokens} tokens, leaving room for "
                    f"{max_new_tokens} new ones in the model's {limit} positions",
                    f"{len(row)} tokens",
                )
        return ids

    def _answer_ids(self, prompt_ids: list[int], prompt: str, answer: str, i: int) -> list[int]:
        joint = self.tokenizer(prompt + answer)["input_ids"]
        if joint[: len(prompt_ids)] == prompt_ids:
            return joint[len(prompt_ids) :]
        alone = self.tokenizer(answer, add_special_tokens=False)["input_ids"]
        decode = self.tokenizer.decode
        if decode(prompt_ids + alone) != decode(prompt_ids) + answer:
            raise ConfigError(f"answers[{i}]", "text that can follow its prompt's tokens", answer)
        return alone

    @torch.inference_mode()
    def _score(self, pairs: list[tuple[list[int], list[int]]]) -> np.ndarray:
        ids, mask = self._pad([p + a for p, a in pairs], left=False)
        logits = self.model(input_ids=ids, attention_mask=mask).logits
        rows = torch.tensor([r for r, (p, a) in enumerate(pairs) for _ in a], dtype=torch.long)
        cols = torch.tensor([len(p) + j for p, a in pairs for j in range(len(a))])
        if not len(rows):
            return np.zeros(len(pairs))
        # the logits at position t predict token t + 1
        chosen = torch.log_softmax(logits[rows, cols - 1].float(), dim=-1)
        token_logprob = chosen.gather(1, ids[rows, cols][:, None].to(chosen.device))[:, 0]
        total = torch.zeros(len(pairs), dtype=torch.float64, device=token_logprob.device)
        total.index_add_(0, rows.to(total.device), token_logprob.double())
        return total.cpu().numpy()

    @torch.inference_mode()
    def _decode(
        self,
        rows: list[list[int]],
        max_new_tokens: int,
        choose: Callable[[Tensor], Tensor],
        stops: list[str],
    ) -> list[str]:
        """One completion per row (greedy or sampled, as `choose` picks the next tokens)."""
        ids, mask = self._pad(rows, left=True)
        step, positions = self._prefill(ids, mask)
        new: list[list[int]] = [[] for _ in rows]
        done = [False] * len(rows)
        cache = _cache_argument(self.model)
        for _ in range(max_new_tokens):
            tokens = choose(step.logits[:, -1].float()).tolist()
            for r, token in enumerate(tokens):
                if done[r]:
                    continue
                if token in self.eos_ids:
                    done[r] = True
                    continue
                new[r].append(token)
                done[r] = bool(stops) and _has_stop(self._text(new[r]), stops)
            if all(done):
                break
            mask = torch.cat([mask, mask.new_ones(len(rows), 1)], dim=1)
            positions = positions[:, -1:] + 1
            step = self.model(
                input_ids=torch.tensor(tokens, device=self.device)[:, None],
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                **{cache: getattr(step, cache)},
            )
        return [self._text(tokens) for tokens in new]

    def _beam(
        self, rows: list[list[int]], max_new_tokens: int, beams: int, stops: list[str]
    ) -> list[list[str]]:
        out = self._generate_beams(rows, max_new_tokens, beams, stops)
        texts = [self._text(row) for row in out[:, max(map(len, rows)) :].tolist()]
        return [texts[r * beams : (r + 1) * beams] for r in range(len(rows))]

    @torch.inference_mode()
    def _generate_beams(
        self,
        rows: list[list[int]],
        max_new_tokens: int,
        beams: int,
        stops: list[str],
        **options: Any,
    ) -> Any:
        """`generate`'s beam search (its output; `options` go to it), on the cache of each
        prompt but its last token, computed once and repeated for the beams: `generate` alone
        would run each prompt `beams` times over, most of a beam search's time. A cache that
        holds more than keys and values is left to `generate` (`_repeatable`)."""
        ids, mask = self._pad(rows, left=True)
        extra = {"stop_strings": stops, "tokenizer": self.tokenizer} if stops else {}
        if ids.shape[1] > 1:
            cache = _cache_argument(self.model)
            prefix = getattr(self._prefill(ids[:, :-1], mask[:, :-1])[0], cache)
            if _repeatable(prefix):
                prefix.batch_repeat_interleave(beams)
                extra[cache] = prefix
        return self.model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=max_new_tokens,
            do_sample=False,
            num_beams=beams,
            num_return_sequences=beams,
            eos_token_id=sorted(self.eos_ids) or None,
            pad_token_id=self.pad_id,
            **extra,
            **options,
        )

    def _prefill(self, ids: Tensor, mask: Tensor) -> tuple[Any, Tensor]:
        """The model's output on left-padded prompts (the last position's logits, the key/value
        cache) and their position ids, which count from each prompt's first token."""
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        step = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            **self._last_logits_only,
        )
        return step, positions

    def _text(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens, skip_special_tokens=True)

    def _pad(self, rows: list[list[int]], left: bool) -> tuple[Tensor, Tensor]:
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            span = slice(width - len(row), width) if left else slice(0, len(row))
            ids[r, span] = torch.tensor(row, dtype=torch.long)
            mask[r, span] = 1
        return ids.to(self.device), mask.to(self.device)


def _greedy(logits: Tensor) -> Tensor:
    return logits.argmax(dim=-1)


def _seed_keys(seed: int | Sequence[int], prompts: int) -> list[list[int]]:
    """Each prompt's sampling seed: (seed, its position), or its own seed of a sequence.

    Raises:
        ConfigError: a sequence of another length than the prompts.
    """
    if isinstance(seed, int | np.integer):
        return [[int(seed), i] for i in range(prompts)]
    if len(seed) != prompts:
        raise ConfigError("seed", f"an integer, or one per prompt ({prompts})", len(seed))
    return [[int(one)] for one in seed]


def _sampler(keys: list[list[int]], temperature: float) -> Callable[[Tensor], Tensor]:
    """Draws each row's next token from a generator of its own, seeded by its prompt's key
    (`_seed_keys`), so that a prompt's sample does not depend on its batch."""
    generators: list[torch.Generator] = []

    def choose(logits: Tensor) -> Tensor:
        if not generators:  # made on the logits' device, where multinomial draws
            for key in keys:
                state = np.random.SeedSequence(key).generate_state(2, np.uint64)[0]
                generators.append(torch.Generator(logits.device).manual_seed(int(state)))
        probs = torch.softmax(logits / temperature, dim=-1)
        return torch.cat(
            [torch.multinomial(p, 1, generator=g) for p, g in zip(probs, generators, strict=True)]
        )

    return choose


def _batches(rows: list[list[int]], batch_size: int) -> list[list[int]]:
    """Positions of `rows` in batches of similar length (little padding)."""
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def _has_stop(text: str, stops: list[str]) -> bool:
    return any(stop in text for stop in stops)


def _cut(text: str, stops: list[str]) -> str:
    """`text` up to the first stop string in it."""
    return text[: min((text.find(s) for s in stops if s in text), default=len(text))]


def _check_causal(config: Any, config_file: str | Path) -> None:
    """Refuse a config that `AutoModelForCausalLM` cannot build as a causal LM, or whose saved
    architectures are none of the causal ones (an encoder-only BERT for masked LM)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    causal = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(config.model_type)
    classes = {causal} if isinstance(causal, str) else set(causal or ())
    saved = getattr(config, "architectures", None) or []
    if (
        causal is None
        or getattr(config, "is_encoder_decoder", False)
        or (saved and not classes & set(saved))
    ):
        kind = ", ".join(saved) or config.model_type
        raise CheckpointError(
            f"{config_file}: {kind} is not a causal language model "
            "(a decoder-only model such as GPT-2 or Llama is needed)"
        )


def _repeatable(cache: Any) -> bool:
    """Whether `cache` holds keys and values alone, in transformers' dynamic layers (full or
    sliding-window attention), so that repeating its batch repeats all of it: not the state
    of a linear-attention layer, nor an older transformers' cache."""
    from transformers import cache_utils

    plain = tuple(getattr(cache_utils, name, None) for name in KEY_VALUE_LAYERS)
    layers = getattr(cache, "layers", None)
    return bool(layers) and all(type(layer) in plain for layer in layers)


def _cache_argument(model: Any) -> str:
    """transformers 5.24 renamed the key/value cache, argument and output, to `cache`."""
    forward = inspect.signature(model.forward).parameters
    return "cache" if "cache" in forward else "past_key_values"


def _max_positions(config: Any) -> int | None:
    for field in ("max_position_embeddings", "n_positions"):
        value = getattr(config, field, None)
        if isinstance(value, int):
            return value
    return None


def _dtype(dtype: str | torch.dtype | None) -> torch.dtype | None:
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    check_choice("dtype", dtype, DTYPES)
    return DTYPES[dtype]


def _at_least(name: str, value: int, least: int) -> None:
    if not (isinstance(value, int) and value >= least):
        raise ConfigError(name, f"an integer of at least {least}", value)


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _hub_reason(error: Exception) -> str:
    """Why loading a hub name failed, in a line: in offline mode, an OSError is a file missing
    from the cache (which transformers words as a failed connection)."""
    from huggingface_hub import constants

    if isinstance(error, OSError) and constants.is_offline_mode():
        return f"not in the Hugging Face cache {constants.HF_HUB_CACHE}, and HF_HUB_OFFLINE is set"
    return _first_line(error)


def _hf_package(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise GenprobeError(
            "hf: models need the transformers package: pip install 'genprobe[hf]'"
        ) from None
