import numpy as np
import pytest

from genprobe.errors import ConfigError
from genprobe.tasks.rewriting.grammar import AUTHORS_SYMBOLS, Grammar
from genprobe.tasks.rewriting.validity import valid_outputs


def test_authors_alphabet():
    g = Grammar()
    assert len(g.symbols) == 40 and "S" not in g.symbols
    assert g.symbols[:3] == ("A", "B", "C") and g.symbols[18] == "T" and g.symbols[25] == "AS"
    assert g.symbols[-1] == "OS" and g.symbols == AUTHORS_SYMBOLS
    assert len(g.output_tokens) == 240
    assert g.output_tokens[:6] == ("A1_1", "A1_2", "B1_1", "B1_2", "C1_1", "C1_2")
    assert g.output_tokens[-1] == "C40_2"


def test_token_index_and_parts_invert():
    g = Grammar(n_symbols=7, letters="ABCD", n_variants=3)
    index = np.arange(len(g.output_tokens))
    ids, letters = g.token_parts(index)
    variants = index % g.n_variants
    assert np.array_equal(g.token_index(ids, letters, variants), index)
    assert [
        g.output_tokens[i] for i in g.token_index(np.array([3]), np.array([2]), np.array([1]))
    ] == ["C3_2"]


def test_permutation_frequencies_follow_the_weights():
    g = Grammar()
    src = np.full((20_000, 1), 5)
    out = g.sample_outputs(src, np.random.default_rng(0))
    _, letters = g.token_parts(out)
    in_order = (letters == [0, 1, 2]).all(axis=1).mean()
    assert in_order == pytest.approx(0.15, abs=0.01)
    variants = out % 2
    assert variants.mean() == pytest.approx(0.5, abs=0.01)
    assert g.permutation_probs[1:] == pytest.approx([0.17] * 5)


def test_samples_satisfy_the_rule_for_any_configuration():
    for g in (Grammar(), Grammar(n_symbols=60, letters="ABCD", n_variants=3, identity_weight=None)):
        rng = np.random.default_rng(1)
        src = rng.integers(1, g.n_symbols + 1, size=(500, 8))
        src[:, 6:] = 0
        out = g.sample_outputs(src, rng)
        assert (out[:, 6 * g.group_size :] == -1).all()
        assert valid_outputs(g, src, out, (out >= 0).sum(1)).all()
    assert Grammar(n_symbols=42).symbols[-2:] == ("S41", "S42")


def test_b_quirk_rewrites_b_with_a_tokens_in_cba_order():
    g = Grammar(authors_b_quirk=True)
    src = np.full((5_000, 1), 2)
    out = g.sample_outputs(src, np.random.default_rng(0))
    ids, letters = g.token_parts(out)
    quirky = (ids == 1).all(axis=1)
    assert quirky.mean() == pytest.approx(0.17, abs=0.015)
    assert (letters[quirky] == [2, 1, 0]).all()  # C1 B1 A1
    assert not valid_outputs(g, src, out, np.full(len(src), 3))[quirky].any()
    clean = Grammar().sample_outputs(src, np.random.default_rng(0))
    assert (Grammar().token_parts(clean)[0] == 2).all()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_symbols": 0},
        {"letters": "AAB"},
        {"letters": ""},
        {"n_variants": 0},
        {"identity_weight": 1.5},
        {"letters": "ABCD", "authors_b_quirk": True},
    ],
)
def test_bad_grammar_settings_are_rejected(kwargs):
    with pytest.raises(ConfigError):
        Grammar(**kwargs)
