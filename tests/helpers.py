"""Module-level functions for pool tests (spawned workers import them by name), what the
study tests compare between runs, damage done to a run's files (or edits recorded), a small
disk, and synthetic curves over training time (what `read_curves` returns)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sympy as sp
import torch

from genprobe.runs.provenance import config_hash, file_sha256
from genprobe.runs.sealed import CHECKSUM, seal
from genprobe.tasks.integration import X, from_sympy, problem_prefix, to_prefix


def save_random_transformer(path):
    """A tiny random-weight transformer over L&C's vocabulary, saved as `ckpt:` reads it."""
    from genprobe.models.checkpoints import save_transformer
    from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig

    torch.manual_seed(0)
    config = TransformerConfig(dim=16, n_enc_layers=1, n_dec_layers=1, n_heads=2, max_positions=256)
    save_transformer(path, Seq2SeqTransformer(config), {})
    return path


def write_validation(path):
    """A tiny validation file in L&C's format: short problems SymPy integrates."""
    antiderivatives = [X**2, sp.sin(X), sp.exp(X), X**4 / 4, X + X**2 / 2, sp.cos(3 * X)]
    path.write_text("".join(_validation_line(big_f) + "\n" for big_f in antiderivatives))
    return path


def _validation_line(big_f) -> str:
    f = sp.diff(big_f, X)
    return f"1|{' '.join(problem_prefix(from_sympy(f)))}\t{' '.join(to_prefix(from_sympy(big_f)))}"


def damage(path, how: str) -> None:
    """Damage a file as disks and copies do: `truncated` (cut to half), `flipped` (one byte
    in the middle inverted) or `missing`."""
    data = bytearray(path.read_bytes())
    if how == "missing":
        path.unlink()
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(data)


@contextlib.contextmanager
def small_disk(folder: Path, size: str) -> Iterator[tuple[Path, Callable[[str], None]]]:
    """A file system of `size` (a tmpfs, "8k") on `folder`, where a superuser may mount one
    (the test is skipped elsewhere), and a function that gives it another size (space freed)."""
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("mounting a small tmpfs needs a superuser")

    def resize(size: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size}", str(folder)], check=True)

    try:
        yield folder, resize
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def rerecord(run, path) -> None:
    """Record `path`'s present bytes in the manifest of the shard that wrote it, as if the
    shard had written them (an edit of a result file that the run does not take as damage)."""
    name = path.relative_to(run).as_posix()
    for manifest in (run / "shards").glob("*/*.json"):
        recorded = json.loads(manifest.read_text())
        if name in recorded["files"]:
            recorded["files"][name] = file_sha256(path)
            recorded.pop(CHECKSUM, None)
            manifest.write_text(json.dumps(seal(recorded)))


class _RunsACommand:
    """What a hostile pickle holds: unpickled, it would run a shell command."""

    def __reduce__(self):
        return os.system, ("echo this should never run",)


def save_refused(path, **entries) -> None:
    """A `torch.save` file of `entries` and an object whose unpickling would run a command:
    what `weights_only=True` refuses."""
    torch.save({**entries, "hook": _RunsACommand()}, path)


def square_slowly(delay: float, n: int) -> int:
    if n == -1:
        raise ValueError("negative")
    if n == -2:
        os._exit(3)  # a worker that dies without a word
    if n >= 2000:
        while True:  # spends CPU time: meets the CPU budget
            pass
    if n >= 1000:
        time.sleep(60)  # spends no CPU time: meets the wall-clock backstop
    time.sleep(delay)
    return n * n


# Inputs on which SymPy is known to run away (research notes, Section E, and the linked issues).
HANG_CORPUS = {
    # sympy#19651: heurisch tries over a thousand polynomial coefficients
    "integrate-19651": lambda: sp.integrate(
        (sp.sin(X) ** 2 + 2 * sp.cos(X)) * sp.sqrt(3 * sp.sin(X) ** 2 + 1), X
    ),
    # sympy#21787: futrig expands the trig argument massively
    "simplify-21787": lambda: sp.simplify(40 * (X + 5) ** 3 * sp.cos(10 * (X + 5) ** 4)),
    # sympy#9032: time grows exponentially with the frequency
    "simplify-9032": lambda: sp.simplify(-128 * sp.sin(128 * X) / sp.sqrt(sp.cos(128 * X))),
}


def frozen_objects(shared: None, item: int) -> int:
    """A pool item: how many objects this worker's garbage collector leaves alone."""
    import gc

    return gc.get_freeze_count()


def run_hang_item(shared: None, name: str) -> str:
    return str(HANG_CORPUS[name]())


def simplify_text(shared: None, text: str) -> str:
    return str(sp.simplify(sp.sympify(text)))  # trusted test input


def examples(run) -> pd.DataFrame:
    """What must not depend on interruptions or backends: every candidate and verdict, timing
    aside."""
    frame = pd.read_parquet(run / "examples.parquet").sort_values(["suite", "row"])
    frame["candidates"] = [
        [(c["rank"], c["answer"], c["outcome"], c["logprob"]) for c in cands]
        for cands in frame["candidates"]
    ]
    return frame[["suite", "row", "first_correct_rank", "reference_logprob", "candidates"]]


def ranked_problems(first_correct, first_generous=None, **columns) -> pd.DataFrame:
    """Brittleness examples, one per rank of `first_correct`, as judged outputs
    (`analysis.judged.from_brittleness`, the rows its Fail@k counts): each problem's candidates
    are wrong but for a correct one at its `first_correct` rank (None: none) and a timeout at
    its `first_generous` rank where that is earlier; `columns`: the suites' (suite, set,
    template, readable, ...; one value for every problem, or one per problem)."""
    from genprobe.analysis.judged import from_brittleness

    first_generous = first_generous or [None] * len(first_correct)
    candidates = []
    for strict, generous in zip(first_correct, first_generous, strict=True):
        ranks = max(strict or 0, generous or 0, 1)
        outcome = {strict: "correct", **({generous: "timeout"} if generous != strict else {})}
        candidates.append(
            [{"outcome": outcome.get(rank, "incorrect"), "logprob": -float(rank)}
             for rank in range(1, ranks + 1)]
        )  # fmt: skip
    rows = {"suite": "s", "readable": True, "reference_logprob": None, **columns}
    n = len(first_correct)
    frame = pd.DataFrame(
        {"row": range(n), "problem": [f"p{i}" for i in range(n)], "reference": None, **rows}
    )
    return from_brittleness(frame.assign(candidates=candidates), "model")


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def swallow_once_then_spin(shared: None, seconds: float) -> str:
    """Spends CPU time in a bare `except:` that swallows the first interruption, as SymPy's
    code can, then spends as much again."""
    del shared
    try:  # noqa: SIM105 (written as SymPy's code is)
        _spin(seconds)
    except BaseException:
        pass
    _spin(seconds)
    return "finished"


def swallow_every_time(shared: None, seconds: float) -> str:
    """Spends CPU time in small steps, each in a bare `except:`: no interruption gets out."""
    del shared
    end = time.process_time() + seconds
    while time.process_time() < end:
        try:  # noqa: SIM105 (written as SymPy's code is)
            _spin(0.01)
        except BaseException:
            pass
    return "finished"


def curves_frame(steps, train, held_out, held_out_role="held_out") -> pd.DataFrame:
    """A curves table (`read_curves`' columns) from accuracies per seed at `steps`: `train`
    and `held_out` map a seed to one accuracy per step; the weight norm falls as held-out
    accuracy rises, the loss is 1 - accuracy."""
    rows = [
        {
            "seed": seed,
            "step": step,
            "role": role,
            "accuracy": float(accuracy[seed][i]),
            "loss": 1.0 - float(accuracy[seed][i]),
            "weight_norm": 30.0 - 20.0 * float(held_out[seed][i]),
        }
        for seed in train
        for i, step in enumerate(steps)
        for role, accuracy in (("train", train), (held_out_role, held_out))
    ]
    return pd.DataFrame(rows).astype({"seed": "int64", "step": "int64"})


def grokking_curves(seeds: int = 12, budget: int = 10_000) -> pd.DataFrame:
    """Synthetic curves over a log-spaced schedule: every seed memorizes early; two thirds grok
    later (held-out accuracy a sigmoid in log steps that ends at 100 %); seed 0 passes 99 %
    held-out accuracy and drops back to 90 %; the rest never grok (censored)."""
    steps = np.unique(np.r_[0, np.geomspace(1, budget, 40).round().astype(int)])
    log = np.log10(np.maximum(steps, 1))
    rng = np.random.default_rng(0)

    def sigmoid(center: float, top: float) -> np.ndarray:
        return np.clip(top / (1 + np.exp(-8 * (log - center))), 0, 1)

    train, held_out = {}, {}
    for seed in range(seeds):
        train[seed] = np.where(log >= rng.uniform(1.5, 2.3), 1.0, sigmoid(1.6, 0.98))
        if seed == 0:
            held_out[seed] = np.where((log > 2.8) & (log < 3.2), 0.995, sigmoid(2.8, 0.9))
        elif seed % 3:
            held_out[seed] = np.where(log >= (center := rng.uniform(2.3, 3.2)) + 0.4, 1.0,
                                      sigmoid(center, 1.0))  # fmt: skip
        else:
            held_out[seed] = sigmoid(3.0, rng.uniform(0.3, 0.6))
    return curves_frame(steps, train, held_out)


def addition_lines(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    pairs = ((rng.randrange(100), rng.randrange(100)) for _ in range(count))
    return [f"{a}+{b}={a + b}\n" for a, b in pairs]


def save_tiny_gpt2(path, seed: int = 0, positions: int = 64, corpus=None):
    """A GPT-2 of one layer, width 16 and random weights, with a byte-level BPE tokenizer trained
    on `corpus` (lines of text; default: addition problems), saved in folder `path` as
    `transformers` saves them."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    # only the corpus's characters: a random model then emits printable text
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<eos>"])
    bpe.train_from_iterator(addition_lines(500, seed) if corpus is None else corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>")
    torch.manual_seed(seed)
    config = GPT2Config(
        n_layer=1,
        n_head=2,
        n_embd=16,
        n_positions=positions,
        initializer_range=0.5,  # larger weights: positions and padding matter to the argmax
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


HUB_COMMIT = "0123456789abcdef0123456789abcdef01234567"


def offline_hub_cache(monkeypatch, cache):
    """Point huggingface_hub at the cache folder `cache`, offline: it reads HF_HUB_CACHE and
    HF_HUB_OFFLINE when imported, so its constants are patched as well as the environment."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return cache


def save_in_hub_cache(folder, cache, repo: str):
    """Lay out the files of `folder` as huggingface_hub caches the hub model `repo` (ORG/NAME):
    models--ORG--NAME/snapshots/<commit>/<files>, and refs/main naming the commit."""
    cached = cache / f"models--{repo.replace('/', '--')}"
    shutil.copytree(folder, cached / "snapshots" / HUB_COMMIT)
    (cached / "refs").mkdir()
    (cached / "refs" / "main").write_text(HUB_COMMIT)
    return cached / "snapshots" / HUB_COMMIT


class MinuteClock:
    """A clock one minute later at each reading: a budget counted in checks, not seconds."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 60.0
        return self.now


def model_settings(spec, **settings):
    """The settings of the model `spec` names, read as a run's record (its paths need not
    exist); a prompt grid's numbers given flat (`formats=4`, `prompt_seed=1`)."""
    from genprobe.under_test.adapters.prompted import PromptGrid
    from genprobe.under_test.registry import ModelSpec
    from genprobe.under_test.settings import ModelSettings

    names = {"formats": "formats", "shots": "shots", "shot_draws": "shot_draws",
             "samples": "samples", "prompt_seed": "seed"}  # fmt: skip
    grid = {names[k]: settings.pop(k) for k in list(settings) if k in names}
    return ModelSettings(ModelSpec.read(spec), prompts=PromptGrid(**grid), **settings)


def write_run_config(run: Path, kind: str, config: dict | None = None) -> None:
    """A run directory's `config.json` as genprobe writes it (kind, config and its hash), for
    tests that need a run of a kind without running one."""
    config = {} if config is None else config
    run.mkdir(parents=True, exist_ok=True)
    stored = {"kind": kind, "hash": config_hash(config), "config": config}
    (run / "config.json").write_text(json.dumps(stored))


def unfinish(run: Path, stage: str) -> Path:
    """`run` as if killed while `stage` was under way: one of its shards not recorded (its
    manifest removed, the first in key order) and the stage not finished (its plan removed).
    The removed manifest's path."""
    manifest = sorted((run / "shards" / stage).glob("*.json"))[0]
    manifest.unlink()
    (run / "shards" / f"{stage}.json").unlink(missing_ok=True)
    return manifest


def levenshtein(a, b) -> int:
    """The edit distance of two sequences, as its dynamic programme: what RapidFuzz's is
    checked against."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        before, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            before, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, before + (x != y))
    return row[-1]
