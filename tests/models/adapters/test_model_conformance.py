"""Every registered kind of model meets the same contract (as scikit-learn's common checks):
one ranked list per problem, at most k candidates, scores sorted, the same answers whether
problems come together or one at a time."""

import pytest
from test_model_adapters import PROBLEMS

from genprobe.errors import ModelCapabilityError
from genprobe.tasks.integration import Expr
from genprobe.under_test.adapters.integration_model import Candidate
from genprobe.under_test.adapters.seq2seq import DecodingConfig
from genprobe.under_test.registry import MODELS, load_model


@pytest.fixture
def spec_and_settings(request, checkpoint, endpoint):
    decoding = DecodingConfig(beam_size=3, max_len=10)
    return {
        "ckpt": (f"ckpt:{checkpoint}", {"decoding": decoding}),
        "lc": (f"lc:{checkpoint}", {"decoding": decoding}),
        "bundled": ("bundled:integration-cpu", {"decoding": decoding}),
        "sympy": ("sympy", {"deadline": 20.0, "workers": 1}),
        "openai": (f"openai:m@{endpoint().url}", {"retries": 0}),
        "py": ("py:test_model_adapters:answer", {}),
    }[request.param]


INTEGRATION = sorted(name for name, kind in MODELS.items() if not kind.tokens)
# (the token models' contract: tests/studies/seed_sensitivity/test_as_model.py)


@pytest.mark.parametrize("spec_and_settings", INTEGRATION, indirect=True)
def test_model_contract(spec_and_settings):
    spec, settings = spec_and_settings
    model = load_model(spec, **settings)
    try:
        together = model.candidates(PROBLEMS, k=2)
        alone = [model.candidates([problem], k=2)[0] for problem in PROBLEMS]
        # the registry says which kinds score; the model agrees, and scoring works or refuses
        assert model.can_score == MODELS[spec.partition(":")[0]].seq2seq
        if model.can_score:
            assert all(lp < 0 for lp in model.score([(p, p) for p in PROBLEMS]))
        else:
            with pytest.raises(ModelCapabilityError):
                model.score([(PROBLEMS[0], PROBLEMS[0])])
    finally:
        model.close()
    assert len(together) == len(PROBLEMS)
    for candidates, single in zip(together, alone, strict=True):
        assert len(candidates) <= 2
        assert all(isinstance(c, Candidate) for c in candidates)
        assert all(isinstance(c.answer, (Expr, str, tuple)) for c in candidates)
        scores = [c.score for c in candidates]
        assert scores == sorted(scores, reverse=True)
        assert [c.answer for c in candidates] == [c.answer for c in single]
    assert isinstance(model.describe()["name"], str)
