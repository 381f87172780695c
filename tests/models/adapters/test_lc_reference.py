"""Our transformer against Lample & Charton's own code, on a small random-weight model.

Needs a checkout of facebookresearch/SymbolicMathematics (never part of this repository):
    GENPROBE_LC_REPO=/path/to/SymbolicMathematics pytest tests/models/adapters/test_lc_reference.py
Their `src/model/transformer.py` builds and saves the model; it must load through `lc:PATH` and
give the same log-probabilities (relative error <= 1e-4) and the same beam-search hypotheses.
"""

import argparse
import importlib.util
import os
from pathlib import Path

import pytest
import torch

from genprobe.decoding.beam import beam_search
from genprobe.tasks.integration import VOCAB, encode_tokens, from_sympy, problem_prefix, to_prefix
from genprobe.tasks.integration.expression import X
from genprobe.under_test.registry import load_model

REPO = os.environ.get("GENPROBE_LC_REPO")
pytestmark = pytest.mark.skipif(
    not REPO or not (Path(REPO) / "src/model/transformer.py").is_file(),
    reason="set GENPROBE_LC_REPO to a SymbolicMathematics checkout",
)


def their_modules():
    spec = importlib.util.spec_from_file_location(
        "lc_transformer", Path(REPO) / "src/model/transformer.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    params = argparse.Namespace(
        n_words=len(VOCAB), eos_index=0, pad_index=1, emb_dim=64, n_enc_layers=2,
        n_dec_layers=3, n_heads=4, dropout=0.0, attention_dropout=0.0,
        sinusoidal_embeddings=False, share_inout_emb=True,
    )  # fmt: skip
    id2word = dict(enumerate(VOCAB))
    torch.manual_seed(0)
    encoder = module.TransformerModel(params, id2word, is_encoder=True, with_output=False)
    decoder = module.TransformerModel(params, id2word, is_encoder=False, with_output=True)
    for side in (encoder, decoder):  # random LayerNorms and biases too, not just the defaults
        for parameter in side.parameters():
            parameter.data.add_(torch.randn_like(parameter), alpha=0.1)
    decoder.proj.bias.data[0] += 2.5  # EOS: hypotheses of many lengths, not all cut at max_len
    return encoder.eval(), decoder.eval(), params


PAIRS = [
    (X**2 * 3, X**3),
    (X * X.__rpow__(2), X),  # x * 2**x (a nonsense candidate is fine: any pair has a log-prob)
    (1 / X + X, X**2 / 2),
]


def batch(sequences):
    lengths = torch.tensor([len(s) for s in sequences])
    x = torch.full((int(lengths.max()), len(sequences)), 1)
    for i, s in enumerate(sequences):
        x[: len(s), i] = torch.tensor(s)
    return x, lengths


def their_logprobs(encoder, decoder, problems, candidates):
    x1, len1 = batch([encode_tokens(["<s>", *problem_prefix(p), "<s>"]) for p in problems])
    x2, len2 = batch([encode_tokens(["<s>", *to_prefix(c), "<s>"]) for c in candidates])
    with torch.no_grad():
        enc = encoder("fwd", x=x1, lengths=len1, causal=False).transpose(0, 1)
        dec = decoder("fwd", x=x2, lengths=len2, causal=True, src_enc=enc, src_len=len1)
        logp = torch.log_softmax(decoder.proj(dec), dim=-1)  # (T, B, V)
    picked = logp[:-1].gather(2, x2[1:, :, None]).squeeze(2)  # predicts tokens 1..T-1
    keep = torch.arange(x2.shape[0] - 1)[:, None] < (len2 - 1)[None, :]
    return (picked * keep).sum(0)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    encoder, decoder, params = their_modules()
    path = tmp_path_factory.mktemp("lc") / "random.pth"
    # as their trainer saves it, with DDP's `module.` prefixes and the params namespace
    torch.save(
        {
            "encoder": {f"module.{k}": v for k, v in encoder.state_dict().items()},
            "decoder": {f"module.{k}": v for k, v in decoder.state_dict().items()},
            "params": params,
            "epoch": 3,
        },
        path,
    )
    return encoder, decoder, path


def test_loaded_model_gives_their_log_probabilities(saved):
    encoder, decoder, path = saved
    model = load_model(f"lc:{path}")
    problems = [from_sympy(f) for f, _ in PAIRS]
    candidates = [from_sympy(F) for _, F in PAIRS]
    ours = torch.tensor(model.score(list(zip(problems, candidates, strict=True))))
    theirs = their_logprobs(encoder, decoder, problems, candidates)
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=0)


def test_beam_search_finds_their_hypotheses(saved):
    encoder, decoder, path = saved
    model = load_model(f"lc:{path}")
    problems = [from_sympy(f) for f, _ in PAIRS]
    x1, len1 = batch([encode_tokens(["<s>", *problem_prefix(p), "<s>"]) for p in problems])
    with torch.no_grad():
        enc = encoder("fwd", x=x1, lengths=len1, causal=False).transpose(0, 1)
        _, _, hyps = decoder.generate_beam(enc, len1, 4, 1.0, True, max_len=21)
    ours = beam_search(model.network, x1.T.contiguous(), beam_size=4, max_len=20)
    for row, found in enumerate(hyps):
        theirs = sorted(found.hyp, key=lambda pair: -pair[0])
        for rank, (score, tokens) in enumerate(theirs):
            n = int(ours.lengths[row, rank])
            # a hypothesis cut at max_len: they drop the token it was cut at, we keep it
            n -= 0 if ours.finished[row, rank] else 1
            assert ours.tokens[row, rank, :n].tolist() == tokens[1:].tolist()
            assert ours.scores[row, rank].item() == pytest.approx(score, rel=1e-4)
