"""Training over time: a fixed budget, evaluations on a schedule, resumable, members alone."""

import numpy as np
import pytest
import torch

from genprobe.data.seq2seq import EOS, PAD, decoded_outputs, encode
from genprobe.decoding.greedy import greedy
from genprobe.errors import ConfigError
from genprobe.models.architectures import ModelShape
from genprobe.models.architectures.mlp import MLPConfig
from genprobe.models.architectures.nanda_transformer import NandaTransformerConfig
from genprobe.tasks.registry import load_task
from genprobe.training.over_time import (
    CURVE_COLUMNS,
    OverTimeTrainer,
    evaluation_steps,
    score_roles,
    weight_norms,
)
from genprobe.training.trainer import TrainConfig

SHAPE = ModelShape(src_vocab=3, tgt_vocab=5, src_len=40, tgt_len=2, max_positions=44)
MODEL = MLPConfig(emb=8, hidden=32)
TASK = load_task("parity_check")
TRAIN = encode(*(lambda e: (e.src, e.tgt))(TASK.generate("train", 96, seed=0)))
HELD_OUT = encode(*(lambda e: (e.src, e.tgt))(TASK.generate("validation", 40, seed=0)))


def trainer(seeds, steps=12, checkpoint=None, model=MODEL, **settings):
    config = TrainConfig(
        batch_size=32, optimizer="adamw", lr=0.01, weight_decay=0.5, steps=steps, **settings
    )
    return OverTimeTrainer(
        model,
        SHAPE,
        config,
        seeds,
        TRAIN,
        checkpoint=checkpoint,
        checkpoint_seconds=0.0,
        roles={"train": TRAIN, "held_out": HELD_OUT},
        validation_role="held_out",
        eval_rows=16,
    )


def test_schedule_holds_zero_and_the_budget_log_spaced_or_evenly():
    log = evaluation_steps(10_000)
    assert log[0] == 0 and log[-1] == 10_000 and log == sorted(set(log))
    assert 150 < len(log) <= 201  # early steps round to the same integers
    late = np.array([step for step in log if step >= 100])
    assert np.all(np.diff(np.log(late)) < 0.06)  # from step 100 on, no gap wider than 6 %
    assert evaluation_steps(10, every=4) == [0, 4, 8, 10]


@pytest.mark.parametrize(
    ("settings", "field"),
    [({"steps": 10, "eval_every": 11}, "eval_every"), ({"eval_every": 5}, "eval_every"),
     ({"steps": 0}, "steps")],
)  # fmt: skip
def test_bad_budget_or_interval_is_refused(settings, field):
    with pytest.raises(ConfigError, match=field):
        TrainConfig(optimizer="adamw", **settings)


def test_every_member_trains_the_whole_budget_and_is_evaluated_at_every_scheduled_step():
    t = trainer([3, 4], steps=7, eval_every=3)  # 3 steps per epoch: the budget crosses epochs
    results = t.run()
    curve = t.curve()
    assert list(curve.columns) == list(CURVE_COLUMNS)
    assert sorted(curve["step"].unique()) == [0, 3, 6, 7]
    assert len(curve) == 4 * 2 * 2  # steps x members x roles
    assert t.updates == 7
    for seed in (3, 4):
        rows = curve[(curve.seed == seed) & (curve.role == "held_out")]
        assert results[seed].validation == rows["accuracy"].tolist()
    final = t.model.member_state(0)
    for name, tensor in results[3].state.items():
        torch.testing.assert_close(tensor, final[name], rtol=0, atol=0)


def test_teacher_forced_exact_match_is_greedy_decoding_checked_against_gold():
    t = trainer([5, 6], steps=30)
    t.run()
    scores = score_roles(t.model, {"held_out": HELD_OUT}, rows=16)["held_out"]
    tokens = greedy(t.model, HELD_OUT.src, max_len=SHAPE.tgt_len, eos=EOS, pad=PAD)
    out, length = decoded_outputs(tokens.numpy())
    gold, gold_length = decoded_outputs(HELD_OUT.tgt_out.numpy()[None])
    right = (length == gold_length) & np.all((out == gold) | (out < 0) & (gold < 0), axis=-1)
    np.testing.assert_allclose(scores.accuracy, right.mean(axis=1))
    assert 0 < scores.accuracy.min() < 1  # the check compares right and wrong outputs


def test_weight_norm_is_the_norm_of_all_a_members_parameters():
    t = trainer([5, 6])
    member = t.model.member_state(1)
    expected = torch.sqrt(sum(v.double().pow(2).sum() for v in member.values()))
    assert weight_norms(t.model)[1] == pytest.approx(float(expected), rel=1e-12)


def test_member_k_is_its_seed_trained_alone():
    together, alone = trainer([7, 8]), trainer([8])
    together.run(), alone.run()
    both, one = together.curve(), alone.curve()
    mine = both[both.seed == 8].reset_index(drop=True)
    assert mine.equals(one)


def killed_at_step_5(checkpoint):
    """A trainer of seeds 1 and 2 for 10 steps killed at step 5, then resumed from
    `checkpoint` (its last save, step 4): the resumed trainer, not yet run on."""

    class Killed(Exception):
        pass

    def kill(progress):
        if progress.step == 5:
            raise Killed

    with pytest.raises(Killed):
        trainer([1, 2], steps=10, eval_every=2, checkpoint=checkpoint).run(kill)
    resumed = trainer([1, 2], steps=10, eval_every=2, checkpoint=checkpoint)
    assert resumed.steps_done == 4  # the last save before the kill, in the second epoch
    return resumed


def test_a_killed_run_resumes_to_the_numbers_of_an_uninterrupted_one(tmp_path):
    whole = trainer([1, 2], steps=10, eval_every=2, checkpoint=tmp_path / "a.pt")
    expected = whole.run()
    resumed = killed_at_step_5(tmp_path / "b.pt")
    results = resumed.run()
    assert resumed.curve().equals(whole.curve())
    for seed in (1, 2):
        for name, tensor in expected[seed].state.items():
            torch.testing.assert_close(results[seed].state[name], tensor, rtol=0, atol=0)


@pytest.mark.parametrize("beta2", [0.999, 0.98])
def test_unclipped_adamw_is_torchs_with_the_same_betas_and_decay(beta2):
    config = TrainConfig(
        batch_size=len(TRAIN), optimizer="adamw", lr=0.01, weight_decay=1.0, beta2=beta2,
        max_grad_norm=0, steps=5,
    )  # fmt: skip
    ours = OverTimeTrainer(
        MODEL, SHAPE, config, [3], TRAIN, roles={"train": TRAIN}, validation_role="train"
    )
    reference = MODEL.initialized(SHAPE, [3])
    opt = torch.optim.AdamW(reference.parameters(), lr=0.01, betas=(0.9, beta2), weight_decay=1.0)
    for _ in range(5):
        logits = reference.teacher_forced(TRAIN.src[None], TRAIN.tgt_in[None])
        loss = torch.nn.functional.cross_entropy(
            logits.flatten(0, 2), TRAIN.tgt_out.flatten(), ignore_index=PAD, reduction="sum"
        )
        opt.zero_grad()
        (loss / len(TRAIN)).backward()
        opt.step()
    ours.run()
    for name, tensor in reference.state_dict().items():
        torch.testing.assert_close(ours.model.state_dict()[name], tensor, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "model",
    [
        MODEL,
        MLPConfig(emb=8, hidden=32, dropout=0.3),
        NandaTransformerConfig(width=16, heads=2, mlp=32),
    ],
    ids=["mlp", "mlp-dropout", "nanda"],
)
def test_a_cpu_step_in_chunks_of_members_computes_what_one_pass_does(monkeypatch, model):
    from genprobe.training import trainer as trainer_module

    whole = trainer([1, 2, 3], steps=6, model=model)
    whole.run()
    monkeypatch.setattr(trainer_module, "CPU_CHUNK_ROWS", 32)  # one member per pass
    chunked = trainer([1, 2, 3], steps=6, model=model)
    assert chunked._member_chunk(32) == 1
    chunked.run()
    assert chunked.curve().equals(whole.curve())
    for name, tensor in whole.model.state_dict().items():
        torch.testing.assert_close(chunked.model.state_dict()[name], tensor, rtol=0, atol=0)
