"""A finished sweep as a model under test (`run:RUN_DIR`): greedy candidates are the predict
stage's outputs, beam search decodes every member as that member alone would, and scores are
the log-probabilities beam search reports."""

import numpy as np
import pandas as pd
import pytest

from genprobe.errors import ConfigError, RunDirError
from genprobe.models.architectures.transformer import TransformerSeedConfig
from genprobe.studies.seed_sensitivity import run_sweep
from genprobe.tasks.tokens import output_lines
from genprobe.under_test.registry import load_model


@pytest.fixture(scope="module", params=["recurrent", "transformer"])
def sweep(request, tiny_sweep, tmp_path_factory):
    model = (
        {} if request.param == "recurrent" else {"model": TransformerSeedConfig(decoder_only=True)}
    )
    config = tiny_sweep(seeds=(1, 2, 3), **model)
    return run_sweep(config, tmp_path_factory.mktemp("run") / request.param)


@pytest.mark.slow
def test_greedy_candidates_are_the_predict_stages_outputs(sweep):
    model = load_model(f"run:{sweep}")
    assert model.members == ("seed=1", "seed=2", "seed=3")
    predicted = pd.concat(pd.read_parquet(p) for p in (sweep / "predictions").glob("*.parquet"))
    suite = predicted["suite"].iloc[0]
    rows = predicted[predicted["suite"] == suite].sort_values(["seed", "index"])
    src = model.config.split(suite).src
    ranked = model.candidates(src, 1)
    members, n = ranked.out.shape[:2]
    lines = output_lines(model.task.target_vocab, ranked.out[:, :, 0].reshape(members * n, -1))
    assert lines == list(rows["output"])
    outcomes = model.task.outcomes(
        np.tile(src, (members, 1)),
        ranked.out[:, :, 0].reshape(members * n, -1),
        ranked.length[:, :, 0].reshape(-1),
        ranked.finished[:, :, 0].reshape(-1),
    )
    assert list(outcomes == "correct") == list(rows["outcome"] == "correct")


@pytest.mark.slow
def test_beam_search_decodes_each_member_as_it_alone_would(sweep):
    model = load_model(f"run:{sweep}")
    src = model.task.generate(model.task.validation_split, 9, 5).src
    together = model.candidates(src, 3)
    assert together.out.shape[:3] == (3, 9, 3)
    for k in range(3):
        alone = model.subset([k]).candidates(src, 3)
        assert np.array_equal(alone.out[0], together.out[k])
        np.testing.assert_allclose(alone.logprob[0], together.logprob[k], rtol=1e-5)
    # ranked by score, best first; width 1 is greedy
    assert (np.diff(together.score, axis=2) <= 1e-6).all()
    # width 1 keeps greedy's path and goes on past an early end only to something better
    greedy, narrow = model.candidates(src, 1), model._beam_candidates(src, 1)
    ended = greedy.finished[0, :, 0]
    greedy_total = model.score(src, greedy.out[:, :, 0], greedy.length[:, :, 0])[0]
    greedy_score = greedy_total / (greedy.length[0, :, 0] + 1)
    assert (narrow.score[0, :, 0][ended] >= greedy_score[ended] - 1e-5).all()


@pytest.mark.slow
def test_scores_are_the_log_probabilities_beam_search_found(sweep):
    model = load_model(f"run:{sweep}")
    src = model.task.generate(model.task.validation_split, 9, 5).src
    ranked = model.candidates(src, 2)
    for rank in range(2):
        kept = ranked.finished[0, :, rank]
        scored = model.score(src, ranked.out[0, :, rank], ranked.length[0, :, rank])
        np.testing.assert_allclose(scored[0][kept], ranked.logprob[0, :, rank][kept], atol=1e-4)


def test_a_run_that_is_not_a_finished_sweep_is_refused(tmp_path):
    with pytest.raises(RunDirError):
        load_model(f"run:{tmp_path}")


@pytest.mark.slow
def test_a_spec_can_name_some_of_the_seeds(sweep):
    chosen = load_model(f"run:{sweep}@3,1")
    assert chosen.members == ("seed=3", "seed=1")
    src = chosen.task.generate(chosen.task.validation_split, 6, 2).src
    whole = load_model(f"run:{sweep}").candidates(src, 1)
    assert np.array_equal(chosen.candidates(src, 1).out, whole.out[[2, 0]])
    assert load_model(f"run:{sweep}@1-2").members == ("seed=1", "seed=2")
    for bad in ("@4", "@one"):
        with pytest.raises(ConfigError):
            load_model(f"run:{sweep}{bad}")


@pytest.mark.slow
def test_sampling_draws_each_member_as_it_alone_would_whatever_its_batch(sweep):
    model = load_model(f"run:{sweep}")
    src = model.task.generate(model.task.validation_split, 9, 5).src
    drawn = model.sampled(src, 6, 1.5, seed=3)
    assert drawn.out.shape[:3] == (3, 9, 6)
    for k in range(3):
        alone = model.subset([k]).sampled(src, 6, 1.5, seed=3)
        assert np.array_equal(alone.out[0], drawn.out[k])
    assert np.array_equal(model.sampled(src[4:7], 6, 1.5, seed=3).out, drawn.out[:, 4:7])
    assert not np.array_equal(model.sampled(src, 6, 1.5, seed=4).out, drawn.out)
    # near temperature 0 every sample is greedy's output
    cold, greedy = model.sampled(src, 3, 1e-4, seed=3), model.candidates(src, 1)
    width = greedy.out.shape[-1]
    assert np.array_equal(cold.out[:, :, 0, :width], greedy.out[:, :, 0])
    assert np.isinf(cold.score[:, :, 1:]).all()  # one distinct output


@pytest.mark.slow
def test_samples_are_distinct_most_probable_first_with_the_models_log_probabilities(sweep):
    model = load_model(f"run:{sweep}")
    src = model.task.generate(model.task.validation_split, 9, 5).src
    drawn = model.sampled(src, 6, 2.0, seed=0)
    present = np.isfinite(drawn.score)
    assert (present[:, :, 0]).all() and (np.diff(present.astype(int), axis=2) <= 0).all()
    assert present[:, :, 1:].any()  # at temperature 2 the seeds do not always agree
    for s, i in np.ndindex(present.shape[:2]):
        ranks = np.flatnonzero(present[s, i])
        outputs = {tuple(drawn.out[s, i, r]) for r in ranks}
        assert len(outputs) == len(ranks)
        assert (np.diff(drawn.score[s, i, ranks]) <= 0).all()
    for rank in range(6):
        scored = model.score(src, drawn.out[:, :, rank], drawn.length[:, :, rank])
        # an unfinished one's total has no EOS in it; a special token drawn (PAD, BOS) is -1
        inside = np.arange(drawn.out.shape[-1]) < drawn.length[:, :, rank, None]
        written = ((drawn.out[:, :, rank] >= 0) | ~inside).all(axis=-1)
        kept = drawn.finished[:, :, rank] & written
        assert kept.any() or rank > 0
        np.testing.assert_allclose(scored[kept], drawn.logprob[:, :, rank][kept], atol=1e-4)
    np.testing.assert_array_equal(drawn.score[present], drawn.logprob[present])
