"""The models that score every output position at once (`architectures.readout`): the MLP with
one-hot inputs (Gromov 2023) and Nanda et al.'s transformer, each against the same model
written the plain way, stacked against alone, and trained through the seed study's trainer."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from genprobe.data.seq2seq import N_SPECIAL, encode
from genprobe.errors import ConfigError
from genprobe.models.architectures import ModelShape, load_architecture
from genprobe.runs.provenance import config_hash
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.tasks import load_task
from genprobe.training.trainer import SweepTrainer, TrainConfig

P = 7  # modular addition mod 7, Nanda et al.'s input [x, y, "="]: ids x+1, y+1, P+1
SHAPE = ModelShape(src_vocab=P + 2, tgt_vocab=N_SPECIAL + P, src_len=3, tgt_len=2, max_positions=6)
X, Y = (a.ravel() for a in np.meshgrid(np.arange(P), np.arange(P), indexing="ij"))
SRC = torch.as_tensor(np.stack([X + 1, Y + 1, np.full_like(X, P + 1)], axis=1))
SUM = ((X + Y) % P).reshape(-1, 1)
NANDA = {"width": 16, "heads": 4, "mlp": 24}


def nanda_reference(state: dict[str, torch.Tensor], src: torch.Tensor, heads: int, layers: int):
    """One member the plain way: every position through every block, causal attention with
    `F.scaled_dot_product_attention`, then the last position unembedded. (B, T, V)"""
    x = state["W_E"].T[src] + state["W_pos"]  # (B, L, D)
    batch, length, width = x.shape
    for layer in range(layers):
        block = f"b{layer}_"
        w = {n.removeprefix(block): t for n, t in state.items() if n.startswith(block)}
        q, k, v = (
            (x @ w[name].reshape(width, width).T).view(batch, length, heads, -1).transpose(1, 2)
            for name in ("W_Q", "W_K", "W_V")
        )  # their (N, H, D) weights; (B, N, L, H)
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + z.transpose(1, 2).reshape(batch, length, width) @ w["W_O"].T
        x = x + F.relu(x @ w["W_in"].T + w["b_in"]) @ w["W_out"].T + w["b_out"]
    return (x[:, -1] @ state["W_U"]).view(batch, SHAPE.tgt_len, SHAPE.tgt_vocab)


@pytest.mark.parametrize("layers", [1, 2])
def test_nandas_transformer_equals_the_plain_one_that_runs_every_position(layers):
    model = load_architecture("nanda_transformer", {**NANDA, "layers": layers})
    stacked = model.initialized(SHAPE, [3, 4])
    with torch.no_grad():
        logits = stacked.scores(SRC.expand(2, -1, -1))
        for k in range(2):
            want = nanda_reference(stacked.member_state(k), SRC, NANDA["heads"], layers)
            torch.testing.assert_close(logits[k], want, rtol=1e-5, atol=1e-6)


def test_nandas_init_is_theirs_normal_over_the_width_and_the_unembedding_over_v():
    model = load_architecture("nanda_transformer", {"width": 128}).initialized(SHAPE, [0])
    drawn = torch.Generator().manual_seed(0)
    first = torch.randn(128, SHAPE.src_vocab, generator=drawn) / math.sqrt(128)
    assert torch.equal(model.W_E[0], first)  # their first draw: W_E (d_model, d_vocab)
    assert model.W_U[0].std().item() == pytest.approx(1 / math.sqrt(SHAPE.tgt_vocab), rel=0.1)
    assert not model.b0_b_in.any() and not model.b0_b_out.any()


def test_the_one_hot_mlp_equals_a_one_hot_matmul():
    model = load_architecture("mlp", {"hidden": 8, "input_encoding": "one_hot", "layers": 2})
    stacked = model.initialized(SHAPE, [1, 2])
    assert not hasattr(stacked, "src_emb")  # emb unused
    with torch.no_grad():
        logits = stacked.scores(SRC.expand(2, -1, -1))
        one_hot = F.one_hot(SRC, SHAPE.src_vocab).flatten(1).float()  # (B, L·Vs)
        for k in range(2):
            w = stacked.member_state(k)
            x = F.relu(one_hot @ w["h0_w"] + w["h0_b"])
            x = F.relu(x @ w["h1_w"] + w["h1_b"])
            want = (x @ w["out_w"] + w["out_b"]).view(-1, SHAPE.tgt_len, SHAPE.tgt_vocab)
            torch.testing.assert_close(logits[k], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "arch, options",
    [("nanda_transformer", {**NANDA, "layers": 2}), ("mlp", {"input_encoding": "one_hot"})],
)
def test_member_k_scores_as_seed_k_alone_bit_for_bit(arch, options):
    model = load_architecture(arch, options)
    with torch.no_grad():
        stacked = model.initialized(SHAPE, [7, 8, 9]).scores(SRC.expand(3, -1, -1))
        alone = model.initialized(SHAPE, [8]).scores(SRC.unsqueeze(0))
    assert torch.equal(stacked[1], alone[0])


@pytest.mark.parametrize(
    "arch, options",
    [("nanda_transformer", NANDA), ("mlp", {"hidden": 64, "input_encoding": "one_hot"})],
)
def test_a_few_adamw_steps_through_the_trainer_move_every_weight_and_lower_the_loss(arch, options):
    model = load_architecture(arch, options)
    train = encode(SRC.numpy(), SUM)
    config = TrainConfig(optimizer="adamw", lr=3e-3, weight_decay=1.0, batch_size=len(SUM))
    trainer = SweepTrainer(model, SHAPE, config, [1, 2], train, lambda m: np.zeros(m.members))

    def losses():
        with torch.no_grad():
            logits = trainer.model.teacher_forced(
                train.src.expand(2, -1, -1), train.tgt_in.expand(2, -1, -1)
            )
            return [
                F.cross_entropy(member.flatten(0, 1), train.tgt_out.flatten()).item()
                for member in logits
            ]

    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    first = losses()
    trainer.run_steps(20)
    assert all(after < start for after, start in zip(losses(), first, strict=True))
    for name, param in trainer.model.named_parameters():
        assert not torch.equal(param, before[name]), name  # every weight had a gradient


@pytest.mark.parametrize(
    "arch, options, message",
    [
        ("nanda_transformer", {"heads": 3}, "heads must be a divisor of the width 128"),
        ("nanda_transformer", {"activation": "quadratic"}, "activation must be one of relu, gelu"),
        ("nanda_transformer", {"mlp": 0}, "mlp must be an integer >= 1"),
        ("nanda_transformer", {"dropout": "0.1"}, "one of nanda_transformer's options: width"),
        ("mlp", {"input_encoding": "onehot"}, "did you mean one_hot"),
    ],
)
def test_bad_options_are_refused(arch, options, message):
    with pytest.raises(ConfigError, match=message):
        load_architecture(arch, options)


def test_an_mlp_with_embedded_inputs_keeps_the_identity_of_runs_made_before_one_hot():
    def identity(**options):
        model = load_architecture("mlp", {"hidden": 64, **options})
        return SweepConfig(
            seeds=(1, 2), task=load_task("scan", {"split": "length"}), model=model
        ).identity()

    assert config_hash(identity()) == "1469d95847ad0e24"  # genprobe at 2a70330, before one_hot
    assert config_hash(identity(input_encoding="embedding")) == "1469d95847ad0e24"
    one_hot = identity(input_encoding="one_hot")
    assert one_hot["model"]["options"]["input_encoding"] == "one_hot"
    assert SweepConfig.from_identity(one_hot).model.input_encoding == "one_hot"
