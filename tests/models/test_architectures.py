"""Every architecture keeps the contract the seed study relies on (`model_check.check_model`,
run over each row of the table, a researcher's `py:` module and two `transformers` types), and
a builder that breaks it is refused in one line."""

import math
import re
import textwrap

import numpy as np
import pytest
import torch

from genprobe.errors import ConfigError, ModelContractError, UnknownArchitectureError
from genprobe.models.architectures import (
    ARCHITECTURES,
    ModelShape,
    architecture_name,
    load_architecture,
)
from genprobe.models.architectures.module import joint_sequence, probe_module
from genprobe.models.architectures.transformer import MAX_ATTENTION_SCORES
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.model_check import (
    check_contract,
    check_model,
    members_alone,
)
from genprobe.tasks import load_task
from genprobe.training.trainer import TrainConfig

SCAN = load_task("scan", {"split": "length"})  # short inputs, outputs up to 48 tokens
SMALL = {
    "recurrent": {"emb": 8, "hidden": 12, "attention": "mlp", "input_feeding": True},
    "transformer": {"width": 16, "heads": 2, "ffn": 32, "layers": 2, "decoder_only": True},
    "mlp": {"emb": 4, "hidden": 16, "layers": 2, "dropout": 0.2},
    "nanda_transformer": {"width": 16, "heads": 2, "mlp": 32, "layers": 2},
    "py:my_model:build": {"width": 16, "heads": 2, "layers": 1, "dropout": 0.1},
    "hf:gpt2": {"n_layer": 1, "n_embd": 16, "n_head": 2},  # GPT-2's dropout 0.1 on
    "hf:t5": {"num_layers": 1, "d_model": 16, "d_kv": 8, "num_heads": 2, "d_ff": 32},
}


@pytest.fixture(autouse=True)
def _examples_on_the_path(monkeypatch, request):
    monkeypatch.syspath_prepend(str(request.config.rootpath / "examples"))


def sweep(arch: str, **options) -> SweepConfig:
    model = load_architecture(arch, {**SMALL[arch], **options})
    return SweepConfig(seeds=(3, 4, 5), task=SCAN, model=model, train=TrainConfig(lr=0.01))


SCAN_SHAPE = sweep("recurrent").model_shape()


def test_every_row_of_the_table_is_checked_here():
    assert set(ARCHITECTURES) <= set(SMALL)


@pytest.mark.parametrize(
    "arch",
    [*ARCHITECTURES, "py:my_model:build"]
    + [pytest.param(name, marks=pytest.mark.slow) for name in ("hf:gpt2", "hf:t5")],
)
def test_every_architecture_keeps_the_contract(arch):
    if arch.startswith("hf:"):
        pytest.importorskip("transformers")
    config = sweep(arch)
    check_model(config)
    assert architecture_name(config.model) == arch
    assert SweepConfig.from_identity(config.identity()) == config


def test_the_mlp_with_one_hot_inputs_keeps_the_contract():
    check_model(sweep("mlp", input_encoding="one_hot"))


def test_a_module_vmapped_agrees_with_its_members_alone_to_rounding():
    config = sweep("py:my_model:build", dropout=0.0, stacking="vmap")
    measured = members_alone(config)
    assert measured["stacking"] == "vmap"
    assert measured["largest_difference"] < 1e-4


def test_auto_stacking_runs_members_one_after_another_on_a_cpu():
    model = sweep("py:my_model:build").model.initialized(SCAN_SHAPE, [1, 2])
    assert model.stacking() == "loop"
    assert probe_module(model.config, SCAN_SHAPE).random  # dropout 0.1: a seed per member


def test_a_member_of_a_module_draws_its_own_dropout_whatever_the_stack():
    config = sweep("py:my_model:build", dropout=0.5)
    measured = members_alone(config)
    assert measured["members_equal_alone"], measured


def test_the_joint_sequence_right_aligns_the_input():
    src = torch.tensor([[4, 5, 0], [6, 0, 0]])
    tgt_in = torch.tensor([[1, 7], [1, 0]])
    assert joint_sequence(src, tgt_in, 10).tolist() == [[0, 4, 5, 11, 17], [0, 0, 6, 11, 0]]


def test_the_mlp_ends_its_output_where_its_positions_end():
    shape = ModelShape(src_vocab=6, tgt_vocab=5, src_len=3, tgt_len=2, max_positions=9)
    model = load_architecture("mlp", {"hidden": 8}).initialized(shape, [1, 2])
    src = torch.tensor([[1, 2, 3, 4, 5]])  # longer than its 3 input positions: cut
    state, token = model.start(src)
    for _ in range(2):
        _, state = model.step(state, token)
    logits, _ = model.step(state, token)
    assert logits.argmax(-1).tolist() == [[2], [2]]  # EOS
    cut = model.start(src[:, :3])[0].logits
    assert torch.equal(state.logits, cut)


def test_options_are_typed_and_unknown_ones_are_listed():
    assert load_architecture("recurrent", {"hidden": "64", "input_feeding": "true"}).hidden == 64
    with pytest.raises(ConfigError, match=r"one of mlp's options: emb, hidden, .*Got 'heads'"):
        load_architecture("mlp", {"heads": "2"})
    with pytest.raises(UnknownArchitectureError, match="Did you mean: transformer"):
        load_architecture("transfomer")
    with pytest.raises(ConfigError, match="layers must be an integer >= 1"):
        load_architecture("mlp", {"layers": 0})


def test_a_hugging_face_option_must_be_a_field_of_its_config():
    pytest.importorskip("transformers")
    with pytest.raises(ConfigError, match=r"one of hf:gpt2's options: .*n_embd.*Got 'width'"):
        load_architecture("hf:gpt2", {"width": "16"})
    assert dict(load_architecture("hf:gpt2", {"n_inner": "64"}).settings) == {"n_inner": 64}
    with pytest.raises(ConfigError, match=r"a model type transformers knows .did you mean hf:gpt2"):
        load_architecture("hf:gtp2")
    # hf: as an architecture is a type built fresh; trained weights are a model under test
    with pytest.raises(ConfigError, match=r"a model under test: --model hf:PATH"):
        load_architecture("hf:openai-community/gpt2")


BAD_BUILDERS = {
    "raises": ("def build(shape, seed):\n    raise RuntimeError('no GPU here')", "raised Runt"),
    "no_module": ("def build(shape, seed):\n    return 'a model'", "returned str"),
    "no_params": ("def build(shape, seed):\n    return nn.ReLU()", "has no parameters"),
    "three_args": ("def build(shape, seed):\n    return Three()", "forward must take"),
    "shape": ("def build(shape, seed):\n    return Flat(shape)", "(B, L, seq_vocab) = "),
    "required": ("def build(shape, seed, *, width):\n    return nn.ReLU()", "needs a default"),
    "signature": ("def build(shape):\n    return nn.ReLU()", "takes (shape, seed"),
}
HELPERS = """
import torch
from torch import nn


class Three(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Linear(2, 2)

    def forward(self, a, b, c):
        return a


class Flat(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.emb = nn.Embedding(shape.seq_vocab, 4)

    def forward(self, seq):  # (B, L, 4): not logits over the vocabulary
        return self.emb(seq)
"""


@pytest.mark.parametrize("case", BAD_BUILDERS)
def test_a_builder_that_breaks_the_contract_is_refused_in_one_line(case, tmp_path, monkeypatch):
    source, message = BAD_BUILDERS[case]
    (tmp_path / f"bad_{case}.py").write_text(HELPERS + "\n\n" + textwrap.dedent(source) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModelContractError, match=re.escape(message)):
        model = load_architecture(f"py:bad_{case}:build")
        check_contract(SweepConfig(seeds=(1,), task=SCAN, model=model))


def test_the_same_weights_whatever_the_stack_for_every_builtin_row():
    for name in ARCHITECTURES:
        arch = load_architecture(name, SMALL[name])
        stacked, alone = arch.initialized(SCAN_SHAPE, [7, 8, 9]), arch.initialized(SCAN_SHAPE, [8])
        for param, single in zip(stacked.parameters(), alone.parameters(), strict=True):
            assert torch.equal(param[1], single[0]), name


def test_losses_of_a_module_stack_are_each_members_own():
    config = sweep("py:my_model:build", dropout=0.0)
    model = config.model.initialized(SCAN_SHAPE, [1, 2])
    examples = config.split("validation")
    src = torch.as_tensor(examples.src[:4]).expand(2, -1, -1)
    tgt = torch.ones(2, 4, 3, dtype=torch.long)
    logits = model.teacher_forced(src, tgt)
    assert logits.shape == (2, 4, 3, SCAN_SHAPE.tgt_vocab)
    one = config.model.from_members(SCAN_SHAPE, [model.member_state(1)])
    assert torch.equal(one.teacher_forced(src[1:], tgt[1:])[0], logits[1])
    assert not np.allclose(logits[0].detach().numpy(), logits[1].detach().numpy())


LIMITED = {  # architectures with a table of positions: (architecture, options)
    "learned, encoder-decoder": ("transformer", {"positions": "learned", "max_positions": 9}),
    "learned, decoder-only": (
        "transformer", {"positions": "learned", "max_positions": 9, "decoder_only": True},
    ),
    "random": ("transformer", {"random_positions": 9}),
    "gpt2, its own size": ("hf:gpt2", {"n_positions": 9}),
    "gpt2, the study's size": ("hf:gpt2", {}),
    "a module that says its positions": ("py:my_model:build", {}),
}  # fmt: skip


@pytest.mark.parametrize("case", LIMITED)
def test_an_architecture_takes_exactly_what_its_positions_can_hold(case):
    arch, options = LIMITED[case]
    if arch.startswith("hf:"):
        pytest.importorskip("transformers")
    config = load_architecture(arch, {**SMALL[arch], **options})
    shape = ModelShape(src_vocab=6, tgt_vocab=5, src_len=4, tgt_len=3, max_positions=12)
    model = config.initialized(shape, [1]).eval()
    lengths = np.array([(n, m) for n in range(1, 16) for m in range(1, 12)])
    takes = config.takes(shape, lengths[:, 0], lengths[:, 1])
    assert takes.dtype == bool and takes.any() and not takes.all()
    for (n, m), taken in zip(lengths, takes, strict=True):
        src = torch.ones(1, 1, n, dtype=torch.long)
        tgt_in = torch.ones(1, 1, m, dtype=torch.long)  # m output steps: BOS and m - 1 tokens
        try:
            with torch.no_grad():
                model.teacher_forced(src, tgt_in)
            ran = True
        except (ConfigError, ModelContractError):  # past a position table
            ran = False
        assert ran == taken, (case, n, m)


@pytest.mark.parametrize("positions", ["sinusoidal", "rope", "alibi", "none"])
def test_a_transformer_without_a_table_takes_inputs_whose_attention_scores_fit(positions):
    config = load_architecture("transformer", {**SMALL["transformer"], "positions": positions})
    shape = ModelShape(src_vocab=6, tgt_vocab=5, src_len=4, tgt_len=3, max_positions=12)
    longest = math.isqrt(MAX_ATTENTION_SCORES // config.heads)  # no input of it is built
    takes = config.takes(shape, np.array([longest, longest + 1]), np.array([1, 1]))
    assert takes.tolist() == [True, False]


def test_the_longest_input_a_sweep_takes_is_its_models_bound():
    reverse = load_task("reverse_string")  # an output as long as its input, and EOS
    learned = {"positions": "learned", "max_positions": 16, "decoder_only": False}
    cases = [
        (load_architecture("transformer", {**SMALL["transformer"], **learned}), 15),
        (load_architecture("transformer", SMALL["transformer"]), 8192),  # 2 heads: 2 x 8192²
        (load_architecture("recurrent", SMALL["recurrent"]), None),
    ]
    for model, longest in cases:
        config = SweepConfig(seeds=(1,), task=reverse, model=model)
        assert config.longest_taken(1 << 20) == longest, model


def test_a_fixed_length_input_takes_inputs_up_to_its_length_and_others_take_any():
    shape = ModelShape(src_vocab=6, tgt_vocab=5, src_len=4, tgt_len=3, max_positions=12)
    lengths, steps = np.arange(1, 30), np.full(29, 50)
    for arch in ("mlp", "nanda_transformer"):
        takes = load_architecture(arch, SMALL[arch]).takes(shape, lengths, steps)
        assert takes.tolist() == (lengths <= 4).tolist()
    for arch in ("recurrent", "transformer", "hf:t5"):
        if arch.startswith("hf:"):
            pytest.importorskip("transformers")  # T5's positions are relative: no table
        assert load_architecture(arch, SMALL[arch]).takes(shape, lengths, steps).all()
