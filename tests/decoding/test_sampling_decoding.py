"""Temperature sampling: reproducible with a seed whatever the batch, log-probabilities as
teacher-forced, and a temperature near zero is greedy."""

import torch
from test_beam_search import EOS, PAD, sources, tiny

from genprobe.decoding.greedy import greedy
from genprobe.decoding.sampling import sample
from genprobe.decoding.scoring import sequence_logprobs


def test_samples_repeat_with_the_seed_and_score_as_teacher_forced():
    model = tiny(12, seed=2)
    src = sources([4, 7, 5], 12, seed=3)
    first = sample(model, src, n=6, max_len=8, seeds=[10, 11, 12])
    again = sample(model, src, n=6, max_len=8, seeds=[10, 11, 12])
    assert torch.equal(first.tokens, again.tokens)
    other = sample(model, src, n=6, max_len=8, seeds=[20, 21, 22])
    assert not torch.equal(first.tokens, other.tokens)
    assert len({tuple(row.tolist()) for row in first.tokens.view(-1, first.tokens.shape[-1])}) > 1
    flat = first.tokens.view(18, -1)
    rescored = sequence_logprobs(
        model, src.repeat_interleave(6, 0), flat, first.lengths.view(-1), first.finished.view(-1)
    )
    torch.testing.assert_close(rescored, first.logprobs.view(-1), rtol=1e-4, atol=1e-4)


def test_a_cold_temperature_is_greedy():
    model = tiny(12, seed=4)
    src = sources([4, 7, 5], 12, seed=5)
    drawn = sample(model, src, n=2, temperature=1e-4, max_len=8)
    tokens = greedy(model, src, max_len=8, eos=EOS, pad=PAD)
    for row in range(3):
        n = int(drawn.lengths[row, 0])
        assert drawn.tokens[row, 0, :n].tolist() == tokens[row, :n].tolist()
        assert torch.equal(drawn.tokens[row, 0], drawn.tokens[row, 1])


def test_a_sources_samples_do_not_depend_on_its_batch():
    model = tiny(12, seed=2)
    src = sources([4, 7, 5], 12, seed=3)
    together = sample(model, src, n=5, max_len=40, seeds=[7, 8, 9])
    alone = sample(model, src[1:2, :7], n=5, max_len=40, seeds=[8])
    n = int(together.lengths[1].max())
    assert torch.equal(together.tokens[1, :, :n], alone.tokens[0, :, :n])
    torch.testing.assert_close(together.logprobs[1], alone.logprobs[0])


def test_sampled_frequencies_follow_the_model():
    """One step from a fixed distribution: Gumbel-max draws match softmax(logits / T)."""
    model = tiny(12, seed=6)
    src = sources([5], 12, seed=1)
    logits, _ = model.step(*model.start(src))
    for temperature in (1.0, 0.5):
        expected = torch.softmax(logits[0] / temperature, dim=-1)
        drawn = sample(model, src, n=4000, temperature=temperature, max_len=1, seeds=[3])
        # one generated token: EOS (length 0) or the token kept at the cut (length 1)
        first = torch.where(drawn.lengths[0] > 0, drawn.tokens[0, :, 0], EOS)
        counts = torch.bincount(first, minlength=len(expected))
        assert (counts / 4000 - expected).abs().max() < 0.03
