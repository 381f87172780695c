"""Hugging Face causal LM generation: batched against one prompt at a time, in one run.

Both paths complete the same prompts with the same model and settings through
`CausalLM.complete` (genprobe.under_test.adapters.causal_lm): batched, `--batch-size` prompts of
similar length at a time, left-padded, one forward per step for the whole batch; one at a time,
`complete([prompt])` per prompt. The model is a random-weight GPT-2 (`--layers` 2, `--width`
128, 4 heads) with a character-level tokenizer over addition text, saved and loaded from a
temporary directory as a user's checkpoint would be; the prompts are 3-shot addition problems
("12+34=46\\n…"), 30 to 50 tokens each. Random weights rarely emit the end token, so every
completion runs its `--new-tokens`: both paths do the same work. Greedy and beam completions
are the same both ways (printed); samples differ, as each is seeded by its prompt's position
in the list given.

Each path runs `--repeats` times, the two taking turns (a change in the load of a shared machine
falls on both); the medians give prompts/s, and the last line is `speedup = X.X` (batched
against one at a time). The issue's target is 5x or more on CPU.

Run: .venv/bin/python benchmarks/hf_generation.py [--prompts 64] [--new-tokens 16]
     [--method greedy|sample|beam] [--repeats 3] [--threads 2] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import torch

from genprobe.under_test.adapters.causal_lm import CausalLM, load_causal_lm

CHARACTERS = "0123456789+=\n"


def addition(rng: random.Random) -> tuple[str, str]:
    a, b = rng.randrange(1000), rng.randrange(1000)
    return f"{a}+{b}=", str(a + b)


def prompts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        shots = "".join(q + a + "\n" for q, a in (addition(rng) for _ in range(3)))
        out.append(shots + addition(rng)[0])
    return out


def save_random_gpt2(path: Path, layers: int, width: int, seed: int) -> None:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab = {"<eos>": 0, **{c: i + 1 for i, c in enumerate(CHARACTERS)}}
    characters = Tokenizer(models.WordLevel(vocab, unk_token="<eos>"))
    characters.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    characters.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=characters, eos_token="<eos>")
    torch.manual_seed(seed)
    config = GPT2Config(
        n_layer=layers,
        n_head=4,
        n_embd=width,
        n_positions=128,
        vocab_size=len(vocab),
        bos_token_id=0,
        eos_token_id=0,
    )
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)


def timed(runs: list, repeats: int) -> list[tuple[float, list[list[str]]]]:
    """Each run's median time and output, the runs taking turns."""
    times: list[list[float]] = [[] for _ in runs]
    outs: list[list[list[str]]] = [[] for _ in runs]
    for _ in range(repeats):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            outs[i] = run()
            times[i].append(time.perf_counter() - start)
    return [(statistics.median(seconds), out) for seconds, out in zip(times, outs, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--method", choices=["greedy", "sample", "beam"], default="greedy")
    parser.add_argument("--beams", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as directory:
        save_random_gpt2(Path(directory), args.layers, args.width, seed=0)
        lm = load_causal_lm(directory, device=args.device)
    texts = prompts(args.prompts, seed=0)
    settings = {"method": args.method, "seed": 0 if args.method == "sample" else None}
    if args.method == "beam":
        settings["beams"] = args.beams

    def complete(lm: CausalLM, some: list[str], batch_size: int) -> list[list[str]]:
        return lm.complete(some, args.new_tokens, batch_size=batch_size, **settings)

    lengths = [len(lm.tokenizer(text).input_ids) for text in texts]
    print(
        f"GPT-2 {args.layers} layers, width {args.width}, random weights, {args.device}, "
        f"{args.threads} threads; {len(texts)} prompts of {min(lengths)}-{max(lengths)} tokens, "
        f"{args.new_tokens} new tokens, {args.method}, median of {args.repeats}"
    )
    complete(lm, texts[:4], 4)  # warm up
    (batched, together), (alone, one_by_one) = timed(
        [
            lambda: complete(lm, texts, args.batch_size),
            lambda: [complete(lm, [text], 1)[0] for text in texts],
        ],
        args.repeats,
    )
    same = sum(a == b for a, b in zip(together, one_by_one, strict=True))
    print(
        f"batched, {args.batch_size} a batch: {batched:.3f} s, {len(texts) / batched:.0f} prompts/s"
    )
    print(f"one prompt at a time:  {alone:.3f} s, {len(texts) / alone:.0f} prompts/s")
    # a sample is seeded by the prompt's position in the list: one at a time, every one is 0
    print(f"same completions: {same}/{len(texts)}")
    print(f"speedup = {alone / batched:.1f}")


if __name__ == "__main__":
    main()
