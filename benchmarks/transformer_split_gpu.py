"""Which op of the stacked transformer's training step splits by stack size on a GPU.

Seed 1 trained one step alone and as member 0 of a stack of `--members` seeds: every block's
output (forward) and the gradient reaching it (backward) are recorded for that member and
compared in order; the first that differs is the op to look at. Then the stack's first and
last members are followed step by step against their seeds alone (gradients, weights, clip
norms), and candidate replacements (the clip norm summed in one pass, attention through
PyTorch's math kernel, LayerNorm written out, rows summed by a matmul) are tried, each alone
and all together, on seed 1.

    python benchmarks/transformer_split_gpu.py [--members 200] [--steps 6] [--device cuda]
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from sweep_gpu import gradient_differences, same, take_steps, trainer, weights_after

from genprobe.data.seq2seq import encode
from genprobe.models import member_stack
from genprobe.models.architectures import transformer
from genprobe.models.architectures.transformer import StackedTransformer, TransformerSeedConfig
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.training import trainer as trainer_module

BLOCKS = ("_linear", "_norm", "_attention", "_embed")


@contextlib.contextmanager
def recorded(log: list, grads: list) -> Iterator[None]:
    """Every block's output of lane 0 into `log`, its gradient into `grads`."""
    originals = {name: getattr(StackedTransformer, name) for name in BLOCKS}

    def wrap(name, method):
        def inner(self, *args):
            out = method(self, *args)
            label = f"{name}({args[0]})" if isinstance(args[0], str) else name
            log.append((label, out[0].detach().clone()))
            if out.requires_grad:
                out.register_hook(lambda g: grads.append((label, g[0].clone())))
            return out

        return inner

    for name, method in originals.items():
        setattr(StackedTransformer, name, wrap(name, method))
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(StackedTransformer, name, method)


def first_difference(a: list, b: list) -> str:
    for (label, x), (_, y) in zip(a, b, strict=True):
        if not torch.equal(x, y):
            return f"{label} (max difference {(x - y).abs().max().item():.1e})"
    return "none"


def math_attention(q, k, v, mask):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def written_norm(self, name, x):
    mean = x.mean(-1, keepdim=True)
    centered = x - mean
    normed = centered * torch.rsqrt(centered.pow(2).mean(-1, keepdim=True) + 1e-5)
    weight, bias = getattr(self, f"{name}_w"), getattr(self, f"{name}_b")
    return member_stack.scale_shift(normed, weight, bias)


def matmul_row_sums(grad):
    return torch.bmm(grad.new_ones(grad.shape[0], 1, grad.shape[1]), grad)


def plain_member_sums(x, staged=None):
    return x.flatten(1).sum(1)


CANDIDATES = {
    "clip norms summed in one pass": (trainer_module, "member_sums", plain_member_sums),
    "math attention": (transformer, "matmul_attention", math_attention),
    "written LayerNorm": (StackedTransformer, "_norm", written_norm),
    "row sums by matmul": (member_stack, "_row_sums", matmul_row_sums),
}


@contextlib.contextmanager
def replaced(names: tuple[str, ...]) -> Iterator[None]:
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in map(CANDIDATES.get, names)]
    for owner, attr, new in map(CANDIDATES.get, names):
        setattr(owner, attr, new)
    try:
        yield
    finally:
        for owner, attr, old in saved:
            setattr(owner, attr, old)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--train-size", type=int, default=100_000)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    device = torch.device(args.device)
    train = SweepConfig(seeds=(1,), train_size=args.train_size).split("train")
    data = encode(train.src, train.tgt).to(device)
    model = TransformerSeedConfig()
    seeds = list(range(1, args.members + 1))

    runs = {}
    for name, members in (("stack", seeds), ("alone", [1])):
        log, grads = [], []
        with recorded(log, grads):
            take_steps(trainer(device, data, model, members, "numpy", False), 0, 1)
        runs[name] = log, grads
    (stack_log, stack_grads), (alone_log, alone_grads) = runs["stack"], runs["alone"]
    print(f"S={args.members} against seed 1 alone, one step:", flush=True)
    print(f"  first forward output that differs: {first_difference(stack_log, alone_log)}")
    print(
        "  first gradient (in backward order) that differs: "
        f"{first_difference(stack_grads, alone_grads)}",
        flush=True,
    )

    for k in (0, len(seeds) - 1):  # the first member and the last, step by step
        stacked = trainer(device, data, model, seeds, "numpy", False)
        solo = trainer(device, data, model, [seeds[k]], "numpy", False)
        for step in range(args.steps):
            take_steps(stacked, step, 1)
            take_steps(solo, step, 1)
            differ = gradient_differences(stacked, solo, k)
            weights = same(stacked.model.member_state(k), solo.model.member_state(0))
            squares = [
                sum(trainer_module.member_sums(p.grad.pow(2))[lane] for p in t.model.parameters())
                for t, lane in ((stacked, k), (solo, 0))
            ]
            print(f"  seed {seeds[k]}, step {step + 1}: {len(differ)} gradients differ "
                  f"({differ[:3]}), weights equal after: {weights}, clip norms² "
                  f"{squares[0].item():.9g} / {squares[1].item():.9g}", flush=True)  # fmt: skip
            if not weights:
                break

    for names in [(name,) for name in CANDIDATES] + [tuple(CANDIDATES)]:
        with replaced(names):
            one = trainer(device, data, model, seeds, "numpy", False)
            take_steps(one, 0, 1)
            solo = trainer(device, data, model, [1], "numpy", False)
            take_steps(solo, 0, 1)
            differ = gradient_differences(one, solo, 0)
            stack = weights_after(trainer(device, data, model, seeds, "numpy"), args.steps)
            alone = weights_after(trainer(device, data, model, [1], "numpy"), args.steps)
        print(f"{' + '.join(names)}: first-step gradients equal: {not differ} "
              f"({len(differ)} differ); weights after {args.steps} steps equal: "
              f"{same(stack[0], alone[0])}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
