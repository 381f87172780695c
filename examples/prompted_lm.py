"""Train a small causal language model on a task's prompts, saved as a Hugging Face model that
`genprobe probe --model hf:FOLDER` asks (docs/results/language_models.md).

The model reads prompts as genprobe renders them (`genprobe.prompts`): the first `--formats` of
the family `format_family(n, --prompt-seed)` and 0 to `--max-shots` few-shot examples, each
prompt followed by its right answer and a newline. A probe with more formats than it was trained
on then asks it in formats it never saw, and the spread across formats, few-shot draws and
samples is the prompt variance the probe study reports.

    python examples/prompted_lm.py --task addition --task-option format=plain \\
        --task-option train_digits=3 --steps 3000 --out models/addition-lm
    genprobe probe --model hf:models/addition-lm --task addition --task-option format=plain \\
        --task-option train_digits=3 --formats 8 --shots 2 --shot-draws 3 --out runs/lm-probe
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

from genprobe.options import parse_pairs
from genprobe.prompts import draw_shots, format_family, render, text_form
from genprobe.tasks.registry import load_task

EOS = "<eos>"


def prompt_texts(task, formats, max_shots: int, draws: int, src, tgt, rng) -> list[tuple[str, str]]:
    """Each example as a prompt in a random format with 0..max_shots examples of one of `draws`
    few-shot draws, and its answer as the model should write it: after the cue, up to a
    newline."""
    form = text_form(task)
    answers = form.outputs(tgt)
    fmt = rng.integers(len(formats), size=len(src))
    k = rng.integers(max_shots + 1, size=len(src))
    draw = rng.integers(draws, size=len(src))
    texts = [("", "")] * len(src)
    for shots, d in {(int(a), int(b)) for a, b in zip(k, draw, strict=True)}:
        rows = np.flatnonzero((k == shots) & (draw == d))
        examples = draw_shots(task, shots, d, 0, src[rows])
        for i, example in zip(rows, examples, strict=True):
            chosen = formats[fmt[i]]
            texts[i] = render(task, chosen, example, src[i]), chosen.lead + answers[i] + "\n"
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="addition")
    parser.add_argument("--task-option", action="append", default=[])
    parser.add_argument("--formats", type=int, default=4, help="formats trained on")
    parser.add_argument("--prompt-seed", type=int, default=0)
    parser.add_argument("--max-shots", type=int, default=2)
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    task = load_task(args.task, parse_pairs(args.task_option, "--task-option"))
    formats = format_family(args.formats, args.prompt_seed)
    rng = np.random.default_rng(args.seed)
    data = task.generate(task.train_split, args.examples, args.seed)
    texts = prompt_texts(task, formats, args.max_shots, 50, data.src, data.tgt, rng)

    bpe = Tokenizer(models.BPE())
    # Digits one by one: merged digit runs would hide the arithmetic's place values.
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False),
        ]
    )
    bpe.decoder = decoders.ByteLevel()
    corpus = (prompt + answer for prompt, answer in texts)
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=512, special_tokens=[EOS]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=EOS)
    # Prompt and answer are tokenized apart, as the model meets them when asked; the loss is
    # the answer's only.
    encoded = [
        (tokenizer(prompt).input_ids, tokenizer(answer).input_ids) for prompt, answer in texts
    ]

    torch.manual_seed(args.seed)
    config = GPT2Config(
        n_layer=args.layers, n_head=4, n_embd=args.width, n_positions=512,
        vocab_size=len(tokenizer), bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    model = GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, args.lr, total_steps=args.steps)
    start = time.perf_counter()
    for step in range(args.steps):
        rows = [encoded[i] for i in rng.integers(len(encoded), size=args.batch)]
        width = max(len(prompt) + len(answer) for prompt, answer in rows)
        ids = torch.full((len(rows), width), tokenizer.eos_token_id)
        labels = torch.full((len(rows), width), -100)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, (prompt, answer) in enumerate(rows):
            end = len(prompt) + len(answer)
            ids[r, :end] = torch.tensor(prompt + answer)
            labels[r, len(prompt) : end] = torch.tensor(answer)
            mask[r, :end] = 1
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step % 250 == 0 or step == args.steps - 1:
            print(f"step {step}: loss {loss.item():.3f} ({time.perf_counter() - start:.0f} s)")
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
