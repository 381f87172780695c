"""Temperature sampling: reproducible with a seed, log-probabilities as teacher-forced, and a
temperature near zero is greedy."""

import torch
from test_beam_search import EOS, PAD, sources, tiny

from genprobe.decoding.greedy import greedy
from genprobe.decoding.sampling import sample
from genprobe.decoding.scoring import sequence_logprobs


def test_samples_repeat_with_the_seed_and_score_as_teacher_forced():
    model = tiny(12, seed=2)
    src = sources([4, 7, 5], 12, seed=3)
    first = sample(model, src, n=6, max_len=8, generator=torch.Generator().manual_seed(0))
    again = sample(model, src, n=6, max_len=8, generator=torch.Generator().manual_seed(0))
    assert torch.equal(first.tokens, again.tokens)
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
