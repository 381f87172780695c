"""A member of the stacked transformer computes what torch.nn's transformer layers compute.

`nn_reference.NNTransformer` (the baseline of benchmarks/transformer_throughput.py) with member
k's weights copied in gives member k's teacher-forced logits, for both layouts.
"""

import pytest
import torch
from nn_reference import NNTransformer

from genprobe.data.seq2seq import encode
from genprobe.models.architectures import ModelShape
from genprobe.models.architectures.transformer import StackedTransformer, TransformerSeedConfig
from genprobe.tasks.registry import load_task

TASK = load_task("reverse_string")
EXAMPLES = TASK.generate("train", 24, seed=0)
DATA = encode(EXAMPLES.src, EXAMPLES.tgt)
SHAPE = ModelShape(len(TASK.source_vocab) + 1, len(TASK.target_vocab) + 3, 40, 41, 200)


@pytest.mark.parametrize("decoder_only", [False, True], ids=["encoder-decoder", "decoder-only"])
def test_nn_model_with_a_members_weights_gives_its_logits(decoder_only):
    config = TransformerSeedConfig(
        width=32, heads=4, ffn=64, layers=2, dropout=0.0, decoder_only=decoder_only
    )
    stacked = StackedTransformer.initialized(config, SHAPE, [7, 8, 9])
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():  # random gains and biases, larger weights: every slot counts
        for param in stacked.parameters():
            param.mul_(2).add_(torch.randn(param.shape, generator=generator), alpha=0.1)
    src, tgt_in = DATA.src, DATA.tgt_in
    assert (src == 0).any(), "some inputs are padded"
    with torch.no_grad():
        stacked_logits = stacked.logits(stacked(src.expand(3, -1, -1), tgt_in.expand(3, -1, -1)))
        for k in range(3):
            reference = NNTransformer(config, SHAPE).load_member(stacked, k).eval()
            torch.testing.assert_close(reference(src, tgt_in), stacked_logits[k])
