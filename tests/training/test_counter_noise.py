"""Counter-based training noise: each member's own uniforms, whatever the stack, on any device."""

import numpy as np
import pytest
import torch

from genprobe.data.seq2seq import encode
from genprobe.errors import ConfigError
from genprobe.models.architectures import ModelShape
from genprobe.models.architectures.recurrent import RecurrentConfig
from genprobe.models.architectures.transformer import TransformerSeedConfig
from genprobe.tasks.rewriting.suites import generate
from genprobe.training.counter_noise import MULTIPLIERS, counter_uniforms, member_keys, mix32
from genprobe.training.trainer import SweepTrainer, TrainConfig, member_stream

SHAPES = {"emb": (8, 5, 4), "pos": (8, 40)}
SHAPE = ModelShape(src_vocab=41, tgt_vocab=243, src_len=10, tgt_len=31, max_positions=60)
EXAMPLES = generate("train", 128, seed=0)
TRAIN = encode(EXAMPLES.src, EXAMPLES.tgt)


def test_mix32_is_32_bit_arithmetic():
    x = np.random.default_rng(0).integers(0, 2**32, 10_000, dtype=np.uint64).astype(np.uint32)
    expected = x ^ (x >> 16)
    expected = expected * np.uint32(MULTIPLIERS[0])  # wraps modulo 2^32
    expected ^= expected >> 15
    expected = expected * np.uint32(MULTIPLIERS[1])
    expected ^= expected >> 16
    ours = mix32(torch.from_numpy(x.astype(np.int64)))
    assert np.array_equal(ours.numpy(), expected.astype(np.int64))


def test_a_members_uniforms_do_not_depend_on_the_members_beside_it():
    streams = [member_stream(seed, 2) for seed in (4, 7, 9)]
    stacked = counter_uniforms(member_keys(streams, "cpu"), torch.tensor([3]), SHAPES)
    alone = counter_uniforms(member_keys(streams[1:2], "cpu"), torch.tensor([3]), SHAPES)
    for name in SHAPES:
        assert stacked[name].shape == (3, *SHAPES[name])
        assert torch.equal(stacked[name][1], alone[name][0])
        assert not torch.equal(stacked[name][0], stacked[name][1])
    later = counter_uniforms(member_keys(streams, "cpu"), torch.tensor([4]), SHAPES)
    assert not torch.equal(stacked["emb"], later["emb"])
    assert not torch.equal(stacked["emb"].flatten()[:40], stacked["pos"][:, 0].flatten()[:40])


def test_counter_uniforms_look_uniform_and_independent():
    keys = member_keys([member_stream(seed, 2) for seed in range(8)], "cpu")
    u = counter_uniforms(keys, torch.tensor([1]), {"x": (200_000,)})["x"].double()
    assert u.min() >= 0 and u.max() < 1
    assert u.mean().item() == pytest.approx(0.5, abs=2e-3)
    assert (u < 0.1).double().mean().item() == pytest.approx(0.1, abs=2e-3)
    between_members = np.corrcoef(u.numpy())[np.triu_indices(8, 1)]
    assert np.abs(between_members).max() < 0.01
    along_positions = np.corrcoef(u[0, :-1].numpy(), u[0, 1:].numpy())[0, 1]
    assert abs(along_positions) < 0.01


def run(seeds, model, noise="counter", steps=4):
    config = TrainConfig(batch_size=16, noise=noise)
    t = SweepTrainer(model, SHAPE, config, seeds, TRAIN, lambda m: np.zeros(m.members))
    t.run_steps(steps)
    return [t.model.member_state(k) for k in range(len(seeds))]


@pytest.mark.parametrize(
    "model", [RecurrentConfig(), TransformerSeedConfig(random_positions=40)], ids=str
)
def test_with_counter_noise_a_member_is_its_seed_trained_alone(model):
    stacked = run([3, 4, 5], model)
    alone = run([4], model)[0]
    assert all(torch.equal(stacked[1][name], alone[name]) for name in alone)
    numpy_noise = run([4], model, noise="numpy")[0]
    assert not all(torch.equal(numpy_noise[name], alone[name]) for name in alone)


def test_noise_must_be_a_known_source():
    with pytest.raises(ConfigError, match="noise"):
        TrainConfig(noise="philox")
