"""Our transformer, or Lample & Charton's checkpoints, as a `Model`: batched beam search,
greedy (a beam of one) or temperature sampling, and teacher-forced scoring.

Problems go in as `<s> sub Y' f <s>` (L&C's input), sorted by length and cut into batches of
`batch_size` problems, so padding stays small; each batch is decoded in one beam search.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from genprobe.decoding.beam import beam_search
from genprobe.decoding.config import DecodingConfig
from genprobe.decoding.sampling import sample, source_seed
from genprobe.decoding.scoring import sequence_logprobs
from genprobe.errors import CheckpointError, ConfigError, GenprobeError
from genprobe.models.checkpoints import load_transformer
from genprobe.models.transformer import Seq2SeqTransformer, pad_sequences
from genprobe.tasks.integration.expression import Expr
from genprobe.tasks.integration.prefix import from_prefix, problem_prefix, to_prefix
from genprobe.tasks.integration.vocab import EOS_INDEX, PAD_INDEX, VOCAB, encode_tokens
from genprobe.under_test.adapters.integration_model import Candidate, Model


class Seq2SeqModel(Model):
    can_score = True

    def __init__(
        self,
        network: Seq2SeqTransformer,
        decoding: DecodingConfig | None = None,
        device: str = "cpu",
        name: str = "seq2seq",
    ) -> None:
        config = network.config
        if (config.n_words, config.eos_index, config.pad_index) != (
            len(VOCAB), EOS_INDEX, PAD_INDEX
        ):  # fmt: skip
            raise CheckpointError(
                f"{name}: vocabulary of {config.n_words} tokens (eos {config.eos_index}, pad "
                f"{config.pad_index}); the integration task needs L&C's {len(VOCAB)} (eos 0, pad 1)"
            )
        self.network = network.to(device).eval()
        self.decoding = (decoding or DecodingConfig()).validated()
        if self.decoding.max_len > config.max_positions:
            raise ConfigError(
                "max_len", f"at most the model's {config.max_positions} positions",
                self.decoding.max_len,
            )  # fmt: skip
        self.device = torch.device(device)
        self.name = name

    def with_decoding(self, decoding: DecodingConfig) -> Seq2SeqModel:
        """The same network (shared, not copied) decoding another way."""
        return Seq2SeqModel(self.network, decoding, str(self.device), self.name)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.network.config.to_dict(), **asdict(self.decoding)}

    def _batches(self, sequences: list[list[int]]) -> Iterator[tuple[list[int], Tensor]]:
        """(indices, padded ids) batches of similar length; indices into `sequences`."""
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        size = self.decoding.batch_size
        for start in range(0, len(order), size):
            chosen = order[start : start + size]
            yield chosen, pad_sequences([sequences[i] for i in chosen], PAD_INDEX).to(self.device)

    def _sources(self, problems: Sequence[Expr]) -> list[list[int]]:
        wrap = VOCAB[EOS_INDEX]
        return [encode_tokens([wrap, *problem_prefix(p), wrap]) for p in problems]

    def _fits(self, sequence: Sequence[int], decoder_input: bool = False) -> bool:
        """Whether the position table holds `sequence` (a decoder input adds BOS)."""
        return len(sequence) <= self.network.config.max_positions - decoder_input

    def readable(self, problems: Sequence[Expr]) -> list[bool]:
        return [self._fits(source) for source in self._sources(problems)]

    def candidates(self, problems: Sequence[Expr], k: int) -> list[list[Candidate]]:
        if k < 1:
            raise ConfigError("k", "at least 1", k)
        results: list[list[Candidate]] = [[] for _ in problems]
        sources = self._sources(problems)
        fitting = [i for i, source in enumerate(sources) if self._fits(source)]
        for chosen, src in self._batches([sources[i] for i in fitting]):
            chosen = [fitting[i] for i in chosen]
            seeds = [source_seed(self.decoding.seed, sources[i]) for i in chosen]
            tokens, lengths, scores, logprobs = self._decode(src, k, seeds)
            for row, index in enumerate(chosen):
                results[index] = [
                    Candidate(
                        _read(tokens[row][i][: lengths[row][i]]), scores[row][i], logprobs[row][i]
                    )
                    for i in range(len(scores[row]))
                    if scores[row][i] != float("-inf")
                ][:k]
        return results

    def _decode(self, src: Tensor, k: int, seeds: list[int]) -> tuple[list, list, list, list]:
        d = self.decoding
        if d.method == "sample":
            drawn = sample(self.network, src, d.samples or k, d.temperature, d.max_len, seeds)
            return _unique_by_logprob(
                drawn.tokens.tolist(), drawn.lengths.tolist(), drawn.logprobs.tolist()
            )
        beam = 1 if d.method == "greedy" else max(d.beam_size, k)
        found = beam_search(
            self.network, src, beam, min(k, beam), d.length_penalty, d.early_stopping, d.max_len
        )
        return (
            found.tokens.tolist(), found.lengths.tolist(),
            found.scores.tolist(), found.logprobs.tolist(),
        )  # fmt: skip

    def score(self, pairs: Sequence[tuple[Expr, Expr]]) -> list[float]:
        """Total log-probabilities; -inf where the problem or the candidate is longer than the
        position table (the model cannot read or write it)."""
        sources = self._sources([problem for problem, _ in pairs])
        targets = [encode_tokens(to_prefix(candidate)) for _, candidate in pairs]
        out = [float("-inf")] * len(pairs)
        fitting = [
            i
            for i, (source, target) in enumerate(zip(sources, targets, strict=True))
            if self._fits(source) and self._fits(target, decoder_input=True)
        ]
        for chosen, src in self._batches([sources[i] for i in fitting]):
            chosen = [fitting[i] for i in chosen]
            chosen_targets = [targets[i] for i in chosen]
            lengths = torch.tensor([len(t) for t in chosen_targets], device=self.device)
            tgt = pad_sequences(chosen_targets, PAD_INDEX).to(self.device)
            for index, value in zip(
                chosen, sequence_logprobs(self.network, src, tgt, lengths).tolist(), strict=True
            ):
                out[index] = value
        return out


def _read(ids: list[int]) -> Expr | tuple[str, ...]:
    tokens = tuple(VOCAB[i] for i in ids)
    try:
        return from_prefix(tokens)
    except GenprobeError:
        return tokens


def _unique_by_logprob(
    tokens: list, lengths: list, logprobs: list
) -> tuple[list, list, list, list]:
    """Samples per source → distinct outputs ranked by log-probability (score = log-prob)."""
    out_tokens, out_lengths, out_scores = [], [], []
    for rows, row_lengths, row_logprobs in zip(tokens, lengths, logprobs, strict=True):
        best: dict[tuple[int, ...], float] = {}
        for ids, n, logprob in zip(rows, row_lengths, row_logprobs, strict=True):
            best[tuple(ids[:n])] = logprob
        ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
        out_tokens.append([list(ids) for ids, _ in ranked])
        out_lengths.append([len(ids) for ids, _ in ranked])
        out_scores.append([logprob for _, logprob in ranked])
    return out_tokens, out_lengths, out_scores, out_scores


def from_checkpoint(
    path: str, decoding: DecodingConfig | None = None, device: str = "cpu"
) -> Seq2SeqModel:
    """`ckpt:PATH`: a checkpoint written by `genprobe integration train` (a file, or the run
    directory, whose `model.pt` is used)."""
    file = Path(path)
    if file.is_dir():
        file = file / "model.pt"
    network, _ = load_transformer(file)
    return Seq2SeqModel(network, decoding, device, name=f"ckpt:{path}")


def from_bundled(
    name: str, decoding: DecodingConfig | None = None, device: str = "cpu"
) -> Seq2SeqModel:
    """`bundled:NAME`: a checkpoint shipped with genprobe (`genprobe.models.bundled`)."""
    from genprobe.models.bundled import bundled_checkpoint

    network, _ = load_transformer(bundled_checkpoint(name))
    return Seq2SeqModel(network, decoding, device, name=f"bundled:{name}")


def from_lc_checkpoint(
    path: str, decoding: DecodingConfig | None = None, device: str = "cpu"
) -> Seq2SeqModel:
    """`lc:PATH`: one of Lample & Charton's checkpoints (`fwd_bwd_ibp.pth`, ...), read without
    unpickling anything but tensors and plain values (see `checkpoints.py`)."""
    network, _ = load_transformer(path)
    return Seq2SeqModel(network, decoding, device, name=f"lc:{path}")
