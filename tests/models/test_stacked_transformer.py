"""The seed-stacked transformer: members are independent and match solo training."""

import numpy as np
import pytest
import torch

from genprobe.data.seq2seq import BOS, EOS, PAD, encode
from genprobe.decoding.greedy import greedy
from genprobe.errors import ConfigError
from genprobe.models.architectures import ModelShape
from genprobe.models.architectures.transformer import (
    StackedTransformer,
    TransformerSeedConfig,
    example_uniforms,
    matmul_attention,
)
from genprobe.tasks.registry import load_task
from genprobe.training.config import MemberSeeds, TrainConfig
from genprobe.training.trainer import SweepTrainer

TASK = load_task("reverse_string")
DATA = TASK.generate("train", 96, seed=0)
SHAPE = ModelShape(len(TASK.source_vocab) + 1, len(TASK.target_vocab) + 3, 40, 41, 200)
SMALL = {"width": 16, "heads": 2, "ffn": 32, "layers": 2, "dropout": 0.0}
VARIANTS = {
    "encdec-sinusoidal-dropout": {"dropout": 0.1},
    "encdec-learned-random": {"positions": "learned", "random_positions": 64},
    "decoder-rope": {"decoder_only": True, "positions": "rope"},
    "decoder-alibi-random-dropout": {
        "decoder_only": True,
        "positions": "alibi",
        "random_positions": 128,
        "dropout": 0.2,
    },
    "decoder-none": {"decoder_only": True, "positions": "none"},
}


def decode(model, src, max_len):
    return greedy(model, src, max_len=max_len, eos=EOS, pad=PAD)


def config(variant: str) -> TransformerSeedConfig:
    return TransformerSeedConfig(**{**SMALL, **VARIANTS[variant]})


def trainer(model, seeds, validate, streams=None, **settings):
    train = TrainConfig(batch_size=16, max_epochs=settings.pop("max_epochs", 3), **settings)
    tensors = encode(DATA.src, DATA.tgt)
    return SweepTrainer(model, SHAPE, train, seeds, tensors, validate, streams=streams)


@pytest.mark.parametrize("variant", VARIANTS)
def test_member_k_is_seed_k_trained_alone_bit_for_bit(variant):
    # 6 steps an epoch; seed 11 stops after 2 epochs, so the stack shrinks on the way.
    curves = {11: [0.1, 0.1, 0.1], 22: [0.1, 0.2, 0.3]}
    settings = {"optimizer": "adamw", "lr": 1e-3, "weight_decay": 0.1, "patience": 1}
    if variant == "decoder-rope":
        settings.update(schedule="cosine", warmup=4)

    def run(seeds):
        def validate(stacked):
            return np.array([curves[seed][t.epoch - 1] for seed in t.active])

        t = trainer(config(variant), seeds, validate, **settings)
        return t.run()

    stacked = run([11, 22])
    assert [stacked[seed].epochs for seed in (11, 22)] == [2, 3]
    for seed in (11, 22):
        alone = run([seed])[seed]
        for name, tensor in alone.state.items():
            assert torch.equal(stacked[seed].state[name], tensor), (seed, name)


def test_a_grid_member_is_its_init_and_order_seeds_trained_alone():
    grid = {0: MemberSeeds(1, 1, 0), 1: MemberSeeds(1, 2, 1), 2: MemberSeeds(2, 1, 2)}
    model = config("decoder-alibi-random-dropout")

    def run(seeds, streams):
        t = trainer(model, seeds, lambda m: np.full(m.members, 0.5), streams, max_epochs=1)
        return t.run()

    together = run([0, 1, 2], grid)
    default = run([1], None)[1]  # seed 1 alone: init 1, order 1
    assert all(torch.equal(together[0].state[n], t) for n, t in default.state.items())
    alone = run([1], {1: MemberSeeds(1, 2, 1)})[1]
    assert all(torch.equal(together[1].state[n], t) for n, t in alone.state.items())
    # The same init with another order ends elsewhere; the same order with another init too.
    assert not torch.equal(together[0].state["gen_w"], together[1].state["gen_w"])
    assert not torch.equal(together[0].state["gen_w"], together[2].state["gen_w"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_member_k_decodes_as_seed_k_alone_bit_for_bit(variant):
    stacked = StackedTransformer.initialized(config(variant), SHAPE, [1, 2, 3])
    alone = StackedTransformer.initialized(config(variant), SHAPE, [2])
    src = torch.as_tensor(DATA.src[:20])
    assert torch.equal(decode(stacked, src, 12)[1], decode(alone, src, 12)[0])


@pytest.mark.parametrize("variant", VARIANTS)
def test_incremental_decoding_matches_teacher_forced_logits(variant):
    model = StackedTransformer.initialized(config(variant), SHAPE, [3, 4])
    with torch.no_grad():  # larger weights, so that argmax ties are unlikely
        for param in model.parameters():
            param.mul_(20)
    src = torch.as_tensor(DATA.src[:5])
    # eos -1 never comes: every position is decided
    tokens = greedy(model, src, max_len=8, eos=-1, pad=PAD)
    tgt_in = torch.cat([torch.full((2, 5, 1), BOS), tokens[:, :, :-1]], dim=2)
    state, _ = model.start(src, max_len=8)
    stepped = []
    for t in range(8):
        logits, state = model.step(state, tgt_in[:, :, t])
        stepped.append(logits)
    forced = model.logits(model(src.expand(2, -1, -1), tgt_in))
    torch.testing.assert_close(torch.stack(stepped, dim=2), forced, rtol=1e-3, atol=1e-3)


def test_padding_does_not_change_an_output():
    model = StackedTransformer.initialized(config("decoder-alibi-random-dropout"), SHAPE, [5])
    src = torch.as_tensor(DATA.src[:4])
    wider = torch.nn.functional.pad(src, (0, 7), value=PAD)
    assert torch.equal(decode(model, src, 10), decode(model, wider, 10))


def test_evaluation_positions_depend_on_the_example_only():
    src = np.array([[3, 1, 2, 0], [3, 1, 2, 0], [1, 2, 0, 0]])
    wide = np.pad(src, ((0, 0), (0, 3)))
    u = example_uniforms(src, 50, 0)
    assert np.array_equal(u, example_uniforms(wide, 50, 0))
    assert np.array_equal(u[0], u[1]) and not np.array_equal(u[0], u[2])
    assert not np.array_equal(u, example_uniforms(src, 50, 1))
    assert u.dtype == np.float32 and u.min() >= 0 and u.max() < 1


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        ({"heads": 3}, "heads"),
        ({"positions": "fire"}, "positions"),
        ({"positions": "none", "random_positions": 10}, "random_positions"),
        ({"positions": "learned", "max_positions": 10, "random_positions": 20}, "random_positions"),
        ({"width": 0}, "width"),
    ],
)
def test_bad_settings_name_the_field(setting, field):
    with pytest.raises(ConfigError, match=field):
        TransformerSeedConfig(**{**SMALL, **setting})


def test_too_few_random_positions_for_a_sequence_is_an_error():
    config = TransformerSeedConfig(**SMALL, random_positions=8)
    model = StackedTransformer.initialized(config, SHAPE, [1])
    with pytest.raises(ConfigError, match="random_positions"):
        decode(model, torch.as_tensor(DATA.src[:2]), 20)


@pytest.mark.parametrize("members", [3, 37])
@pytest.mark.parametrize("float_mask", [False, True])
def test_matmul_attention_is_the_fused_kernels(float_mask, members):
    # What a GPU runs instead of F.scaled_dot_product_attention (docs/gpu.md), in groups of 16
    # members, the last padded.
    g = torch.Generator().manual_seed(0)
    shape = (members, 2, 4, 5, 8)
    q, k, v = (torch.randn(shape, generator=g, dtype=torch.float64) for _ in range(3))
    allowed = torch.rand(members, 2, 1, 5, 5, generator=g) < 0.7
    allowed[..., 0] = True  # every query reads at least one key
    float_scores = torch.randn(members, 2, 4, 5, 5, generator=g, dtype=torch.float64)
    mask = float_scores.masked_fill(~allowed, float("-inf")) if float_mask else allowed
    upstream = torch.randn(shape, generator=g, dtype=torch.float64)

    def with_gradients(attention):
        inputs = [t.clone().requires_grad_() for t in (q, k, v)]
        out = attention(*inputs, mask)
        (out * upstream).sum().backward()
        return out, [t.grad for t in inputs]

    ours, our_grads = with_gradients(matmul_attention)
    expected, expected_grads = with_gradients(
        lambda q, k, v, mask: torch.nn.functional.scaled_dot_product_attention(q, k, v, mask)
    )
    torch.testing.assert_close(ours, expected)
    for a, b in zip(our_grads, expected_grads, strict=True):
        torch.testing.assert_close(a, b)
