"""Beam-search throughput: our batched beam search against a per-example loop, in one run.

Both decode the same problems with the same model and settings (beam 10, k 10, length
penalty 1, early stopping, L&C's semantics, incremental key/value caches):
- batched: `Seq2SeqModel.candidates`, problems sorted by length and decoded `--batch-size`
  at a time, every beam of every problem in one model call per step;
- per example: the same `beam_search` called on one problem at a time, as Lample & Charton's
  evaluator and the SAGGA code call `generate_beam` (their per-step Python loop over
  hypotheses is not reproduced, so the baseline is faster than theirs).

The model is a checkpoint (`--model ckpt:PATH` or `lc:PATH`) or, by default, a random-weight
transformer of `--size` (`small`: dim 128, 2 + 2 layers, 4 heads; `paper`: Lample & Charton's
dim 1024, 6 + 6 layers, 8 heads) whose EOS bias is raised so that hypotheses end at realistic
lengths; the outputs are meaningless, the work is the same. `--device cuda` decodes on a GPU.
Problems are random integrands of 3..15 operators (L&C's BWD tree distribution).
Each path is timed `--repeats` times; the medians give problems/s, and the last line is
`speedup = X.X` (batched against our per-example loop).

`--profile` also splits each path's time by kind of op (self CPU time under torch's profiler,
as shares of the profiled total; the per-example path on its first 16 problems): the matmuls
of the layers (`addmm`), attention (`bmm`, softmax), layer norms, the key/value cache kept in
beam order (`index_select`, copies) and the rest. It prints the bound on the speedup if the
batched path did nothing but its matmuls (per-example time / batched matmul time): the limit
of batching with this model.

With `--lc-repo PATH` (a checkout of facebookresearch/SymbolicMathematics, never part of this
repository), a third path runs Lample & Charton's own `generate_beam`, one problem at a time,
on their `TransformerModel` holding the same weights (the state dicts share their names), and
`speedup vs L&C generate_beam` is printed before the last line.

Run: .venv/bin/python benchmarks/beam_throughput.py [--problems 64] [--repeats 3] [--threads 2]
     [--size small|paper] [--device cpu|cuda] [--lc-repo /tmp/lc] [--profile]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from op_profile import op_shares

from genprobe.models.transformer import Seq2SeqTransformer
from genprobe.studies.integration_train.config import SIZES
from genprobe.tasks.integration.generation_config import TreeSettings
from genprobe.tasks.integration.prefix import to_prefix
from genprobe.tasks.integration.random_trees import random_expression
from genprobe.under_test.adapters.seq2seq import DecodingConfig, Seq2SeqModel
from genprobe.under_test.registry import load_model

# with this bias the random model's hypotheses average about 30 tokens, as BWD answers do
EOS_BIAS = 2.1


def random_model(seed: int, eos_bias: float, size: str) -> Seq2SeqTransformer:
    torch.manual_seed(seed)
    network = Seq2SeqTransformer(SIZES[size])
    with torch.no_grad():
        network.decoder.proj.bias[network.eos_index] += eos_bias
    return network.eval()


def problems(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [random_expression(rng, int(rng.integers(3, 16)), TreeSettings()) for _ in range(n)]


def lc_per_example(repo: str, network: Seq2SeqTransformer, beam: int, max_len: int):
    """A function decoding problems one at a time with L&C's code and `network`'s weights."""
    import importlib.util
    from pathlib import Path

    from genprobe.tasks.integration import VOCAB, encode_tokens, problem_prefix

    spec = importlib.util.spec_from_file_location(
        "lc_model", Path(repo) / "src/model/transformer.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    c = network.config
    params = argparse.Namespace(
        n_words=c.n_words, eos_index=c.eos_index, pad_index=c.pad_index, emb_dim=c.dim,
        n_enc_layers=c.n_enc_layers, n_dec_layers=c.n_dec_layers, n_heads=c.n_heads,
        dropout=0.0, attention_dropout=0.0, sinusoidal_embeddings=False, share_inout_emb=True,
    )  # fmt: skip
    id2word = dict(enumerate(VOCAB))
    encoder = module.TransformerModel(params, id2word, is_encoder=True, with_output=False)
    decoder = module.TransformerModel(params, id2word, is_encoder=False, with_output=True)
    for theirs, ours in ((encoder, network.encoder), (decoder, network.decoder)):
        state = ours.state_dict()
        positions = theirs.position_embeddings.weight.detach().clone()  # their table: 4096 rows
        positions[: c.max_positions] = state["position_embeddings.weight"]
        theirs.load_state_dict({**state, "position_embeddings.weight": positions})
    encoder.eval(), decoder.eval()

    @torch.no_grad()
    def run(work: list) -> None:
        for problem in work:
            ids = encode_tokens(["<s>", *problem_prefix(problem), "<s>"])
            x = torch.tensor(ids)[:, None]
            length = torch.tensor([len(ids)])
            enc = encoder("fwd", x=x, lengths=length, causal=False).transpose(0, 1)
            # their max_len counts the BOS
            decoder.generate_beam(enc, length, beam, 1.0, True, max_len=max_len + 1)

    return run


PROFILED_ALONE = 16  # problems whose per-example decoding --profile splits

# kinds of op for --profile: aten op name -> kind (anything else is "other")
OP_KINDS = {
    "aten::addmm": "layer matmuls",
    "aten::mm": "layer matmuls",
    "aten::bmm": "attention",
    "aten::_softmax": "attention",
    "aten::_log_softmax": "output softmax",
    "aten::native_layer_norm": "layer norm",
    "aten::index_select": "cache in beam order",
    "aten::copy_": "copies",
    "aten::cat": "copies",
}


def print_profile(batched: dict[str, float], single: dict[str, float]) -> None:
    print(f"{'share of time':22s} {'batched':>8s} {'per example':>12s}")
    for kind in dict.fromkeys([*batched, *single]):
        print(f"{kind:22s} {100 * batched.get(kind, 0):7.1f}% {100 * single.get(kind, 0):11.1f}%")


def timed(function) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="ckpt:PATH or lc:PATH [default: random weights]")
    parser.add_argument("--problems", type=int, default=64)
    parser.add_argument("--beam", type=int, default=10)
    parser.add_argument("--max-len", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", choices=sorted(SIZES), default="small", help="random model")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--lc-repo", help="also time L&C's generate_beam from this checkout")
    parser.add_argument("--profile", action="store_true", help="split the time by kind of op")
    parser.add_argument(
        "--eos-bias", type=float, default=EOS_BIAS, help="random model: raises EOS's logit"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    decoding = DecodingConfig(beam_size=args.beam, max_len=args.max_len)
    batched_config = DecodingConfig(**{**decoding.__dict__, "batch_size": args.batch_size})
    single_config = DecodingConfig(**{**decoding.__dict__, "batch_size": 1})
    if args.model:
        batched = load_model(args.model, decoding=batched_config, device=args.device)
        single = load_model(args.model, decoding=single_config, device=args.device)
    else:
        network = random_model(args.seed, args.eos_bias, args.size)
        batched = Seq2SeqModel(network, batched_config, args.device, name=f"random {args.size}")
        single = Seq2SeqModel(network, single_config, args.device, name=f"random {args.size}")
    work = problems(args.problems, args.seed)
    print(
        f"{args.problems} problems, beam {args.beam}, max_len {args.max_len}, "
        f"{args.threads} threads, model {batched.name} on {args.device}"
    )

    lc_run = None
    if args.lc_repo:
        lc_run = lc_per_example(args.lc_repo, batched.network, args.beam, args.max_len)
    batched_times, single_times, lc_times = [], [], []
    for repeat in range(args.repeats):
        if lc_run is not None:
            lc_times.append(timed(lambda: lc_run(work))[0])
        seconds, batched_found = timed(lambda: batched.candidates(work, args.beam))
        batched_times.append(seconds)
        seconds, single_found = timed(lambda: single.candidates(work, args.beam))
        single_times.append(seconds)
        if repeat == 0:
            same = sum(
                [c.answer for c in a] == [c.answer for c in b]
                for a, b in zip(batched_found, single_found, strict=True)
            )
            lengths = [
                len(c.answer) if isinstance(c.answer, tuple) else len(to_prefix(c.answer))
                for found in batched_found
                for c in found
            ]
            print(f"identical candidate lists: {same}/{len(work)}; mean length "
                  f"{np.mean(lengths):.1f} tokens")  # fmt: skip
    batched_s, single_s = statistics.median(batched_times), statistics.median(single_times)
    print(f"batched:     {args.problems / batched_s:8.2f} problems/s (median {batched_s:.2f} s)")
    print(f"per example: {args.problems / single_s:8.2f} problems/s (median {single_s:.2f} s)")
    if lc_times:
        lc_s = statistics.median(lc_times)
        print(f"L&C generate_beam, per example: {args.problems / lc_s:8.2f} problems/s")
        print(f"speedup vs L&C generate_beam = {lc_s / batched_s:.1f}")
    if args.profile:
        batched_shares = op_shares(lambda: batched.candidates(work, args.beam), OP_KINDS)
        # shares only: a few problems suffice, and the profiler's events of all of them
        # one at a time take gigabytes
        single_shares = op_shares(
            lambda: single.candidates(work[:PROFILED_ALONE], args.beam), OP_KINDS
        )
        print_profile(batched_shares, single_shares)
        matmul_s = batched_s * batched_shares.get("layer matmuls", 0.0)
        print(f"bound if batched did only its layer matmuls: {single_s / matmul_s:.1f}x")
    print(f"speedup = {single_s / batched_s:.1f}")


if __name__ == "__main__":
    main()
