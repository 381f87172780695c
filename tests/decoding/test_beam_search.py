"""Batched beam search: exact top-k against brute force, batch independence, greedy, scores."""

import itertools

import pytest
import torch

from genprobe.decoding.beam import beam_search
from genprobe.decoding.greedy import greedy
from genprobe.decoding.scoring import sequence_logprobs
from genprobe.errors import ConfigError
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig

EOS, PAD = 0, 1


def tiny(n_words: int, seed: int = 0) -> Seq2SeqTransformer:
    torch.manual_seed(seed)
    config = TransformerConfig(
        n_words=n_words, dim=16, n_enc_layers=1, n_dec_layers=2, n_heads=2, max_positions=64
    )
    return Seq2SeqTransformer(config).eval()


def sources(lengths, n_words, seed=1):
    generator = torch.Generator().manual_seed(seed)
    src = torch.full((len(lengths), max(lengths)), PAD)
    for row, length in enumerate(lengths):
        src[row, :length] = torch.randint(2, n_words, (length,), generator=generator)
        src[row, 0] = src[row, length - 1] = EOS
    return src


def brute_force(model, src, vocab, max_len, length_penalty):
    """Every hypothesis the search can return, with its exact normalized score."""
    others = [token for token in range(vocab) if token != EOS]
    hypotheses = []
    for m in range(max_len):
        hypotheses += [(list(body), True) for body in itertools.product(others, repeat=m)]
    hypotheses += [(list(body), False) for body in itertools.product(others, repeat=max_len)]
    scored = []
    with torch.no_grad():
        logp = None
        for body, ended in hypotheses:
            produced = [*body, EOS] if ended else body
            tgt_in = torch.tensor([[EOS, *produced[:-1]]])
            logp = torch.log_softmax(model(src, tgt_in), dim=-1)[0]
            total = float(logp[torch.arange(len(produced)), torch.tensor(produced)].sum())
            scored.append((total / len(produced) ** length_penalty, total, tuple(body)))
    return sorted(scored, reverse=True)


@pytest.mark.parametrize("length_penalty", [1.0, 0.0])
def test_beam_covering_the_space_returns_the_true_top_k(length_penalty):
    vocab, max_len, k = 4, 4, 25
    model = tiny(vocab)
    src = sources([5], vocab)
    expected = brute_force(model, src, vocab, max_len, length_penalty)
    assert len(expected) == 121  # 1 + 3 + 9 + 27 ended, 81 cut at max_len
    result = beam_search(
        model, src, beam_size=128, k=k, max_len=max_len, length_penalty=length_penalty
    )
    got = [tuple(result.tokens[0, i, : result.lengths[0, i]].tolist()) for i in range(k)]
    assert got == [body for _, _, body in expected[:k]]
    torch.testing.assert_close(
        result.scores[0],
        torch.tensor([score for score, _, _ in expected[:k]]),
        rtol=1e-5,
        atol=1e-5,
    )
    torch.testing.assert_close(
        result.logprobs[0],
        torch.tensor([total for _, total, _ in expected[:k]]),
        rtol=1e-5,
        atol=1e-5,
    )


def test_each_source_gets_the_same_hypotheses_alone_and_in_a_batch():
    vocab = 12
    model = tiny(vocab, seed=3)
    src = sources([3, 9, 6, 4, 7], vocab, seed=4)
    together = beam_search(model, src, beam_size=4, k=3, max_len=12)
    for row in range(len(src)):
        length = int((src[row] != PAD).sum())
        alone = beam_search(model, src[row : row + 1, :length], beam_size=4, k=3, max_len=12)
        assert torch.equal(alone.lengths[0], together.lengths[row])
        for i in range(3):
            n = int(alone.lengths[0, i])
            assert torch.equal(alone.tokens[0, i, :n], together.tokens[row, i, :n])
        torch.testing.assert_close(alone.scores[0], together.scores[row], rtol=1e-5, atol=1e-5)


def test_scores_are_sorted_and_logprobs_agree_with_teacher_forcing():
    vocab = 12
    model = tiny(vocab, seed=5)
    src = sources([4, 8, 5], vocab, seed=6)
    result = beam_search(model, src, beam_size=5, k=5, max_len=10, early_stopping=False)
    assert bool((result.scores[:, :-1] >= result.scores[:, 1:]).all())
    assert bool(result.finished.any()) and not bool(result.finished.all())
    for i in range(5):
        ended = result.finished[:, i]
        rescored = sequence_logprobs(model, src, result.tokens[:, i], result.lengths[:, i], ended)
        torch.testing.assert_close(rescored, result.logprobs[:, i], rtol=1e-4, atol=1e-4)
        lengths = result.lengths[:, i] + ended.long()
        torch.testing.assert_close(result.scores[:, i], result.logprobs[:, i] / lengths)


def test_beam_of_one_is_greedy():
    vocab = 12
    model = tiny(vocab, seed=7)
    src = sources([4, 8, 5, 6], vocab, seed=8)
    result = beam_search(model, src, beam_size=1, max_len=9)
    tokens = greedy(model, src, max_len=9, eos=EOS, pad=PAD)
    for row in range(len(src)):
        n = int(result.lengths[row, 0])
        assert tokens[row, :n].tolist() == result.tokens[row, 0, :n].tolist()
        assert tokens[row, n] == (EOS if result.finished[row, 0] else PAD) or n == 9


@pytest.mark.parametrize(("beam", "k", "max_len"), [(0, 1, 5), (3, 4, 5), (3, 0, 5), (3, 1, 0)])
def test_bad_settings_are_config_errors(beam, k, max_len):
    model = tiny(6)
    with pytest.raises(ConfigError):
        beam_search(model, sources([3], 6), beam_size=beam, k=k, max_len=max_len)
