"""The seed-stacked model and trainer: members are independent and match solo training."""

import numpy as np
import pytest
import torch

from genprobe.data.seq2seq import BOS, EOS, N_SPECIAL, PAD, decoded_outputs, encode
from genprobe.decoding.greedy import greedy
from genprobe.models.architectures import ModelShape
from genprobe.models.architectures.recurrent import RecurrentConfig, StackedSeq2Seq
from genprobe.models.architectures.transformer import TransformerSeedConfig
from genprobe.models.cells import gru_cell, lstm_cell
from genprobe.models.member_stack import _RowAffine, _RowBias
from genprobe.tasks.rewriting.suites import generate
from genprobe.training import trainer as trainer_module
from genprobe.training.loss import batched_output_loss, member_output_loss, token_cross_entropy
from genprobe.training.trainer import SweepTrainer, TrainConfig

SHAPE = ModelShape(src_vocab=41, tgt_vocab=243, src_len=10, tgt_len=31, max_positions=60)
CONFIG = RecurrentConfig()
TRAIN = generate("train", 256, seed=0)
VARIANTS = {
    "paper": {},
    "gru-dot-feeding": {"cell": "gru", "attention": "dot", "input_feeding": True},
    "mlp-no-layer": {"attention": "mlp", "attention_layer": False, "emb": 16, "hidden": 24},
    "no-attention": {"attention": "none", "attention_layer": False},
    "two-layers": {"layers": 2, "attention": "none", "attention_layer": False, "dropout": 0.5},
    "gru-three-layers-feeding": {"cell": "gru", "layers": 3, "input_feeding": True},
}
# Training settings of a variant other than the paper's SGD.
TRAIN_VARIANTS = {"two-layers": {"optimizer": "adam", "lr": 0.001}}


def trainer(seeds, steps_validation=None, model=CONFIG, device="cpu", **kwargs):
    validate = steps_validation or (lambda model: np.zeros(model.members))
    config = TrainConfig(batch_size=32, max_epochs=kwargs.pop("max_epochs", 2), **kwargs)
    return SweepTrainer(model, SHAPE, config, seeds, encode(TRAIN.src, TRAIN.tgt), validate, device)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_member_k_of_a_whole_run_is_seed_k_trained_alone_bit_for_bit(variant):
    # Epochs of 8 steps; the seeds stop after 4, 5 and all epochs, so the stack shrinks twice.
    # The paper's model runs 40 epochs (320 steps for seed 33), the other variants 8.
    epochs = 40 if variant == "paper" else 8
    model = RecurrentConfig(**VARIANTS[variant])
    curves = {11: [0.1, 0.2, 0.2, 0.2], 22: [0.1, 0.2, 0.3, 0.3, 0.2, 0.3], 33: [0.0] * epochs}

    def run(seeds):
        def validate(stacked):
            assert stacked.members == len(t.active)
            return np.array([curves[seed][t.epoch - 1] for seed in t.active])

        settings = TRAIN_VARIANTS.get(variant, {})
        t = trainer(seeds, validate, model=model, max_epochs=epochs, patience=2, **settings)
        return t.run()

    stacked = run([11, 22, 33])
    assert [stacked[seed].epochs for seed in (11, 22, 33)] == [4, 5, epochs]
    for seed in (11, 22, 33):
        alone = run([seed])[seed]
        assert alone.epochs == stacked[seed].epochs
        for name, tensor in alone.state.items():
            assert torch.equal(stacked[seed].state[name], tensor), (seed, name)


def test_a_member_on_its_subset_is_its_seed_trained_alone_on_it_bit_for_bit():
    # Subsets of 128 of the 256 examples (4 steps an epoch); seed 11 stops after 2 epochs, so
    # the stack shrinks, and the other two train 3.
    model = RecurrentConfig(**VARIANTS["mlp-no-layer"])
    curves = {11: [0.1, 0.1], 22: [0.1, 0.2, 0.3], 33: [0.0] * 3}

    def run(seeds):
        def validate(stacked):
            return np.array([curves[seed][t.epoch - 1] for seed in t.active])

        settings = {"subsets": True, "subset_fraction": 0.5, "patience": 1}
        t = trainer(seeds, validate, model=model, max_epochs=3, **settings)
        first_epoch = t._epoch_order().cpu().numpy()
        return t, first_epoch, t.run()

    stacked, order, results = run([11, 22, 33])
    subsets = stacked.subsets
    assert stacked.steps_per_epoch == 4 and [results[s].epochs for s in (11, 22, 33)] == [2, 3, 3]
    assert [len(subsets[s]) for s in (11, 22, 33)] == [128] * 3
    assert len({tuple(subsets[s]) for s in subsets}) == 3  # each member its own
    for k, seed in enumerate((11, 22, 33)):
        assert np.array_equal(np.sort(order[k]), subsets[seed])  # an epoch: its subset shuffled
        alone, _, result = run([seed])
        assert np.array_equal(alone.subsets[seed], subsets[seed])
        for name, tensor in result[seed].state.items():
            assert torch.equal(results[seed].state[name], tensor), (seed, name)


def test_input_feeding_needs_attention():
    with pytest.raises(ValueError, match="input_feeding"):
        RecurrentConfig(attention="none", input_feeding=True)
    with pytest.raises(ValueError, match="did you mean gru"):
        RecurrentConfig(cell="gur")


@pytest.mark.parametrize("variant", VARIANTS)
def test_member_k_decodes_as_seed_k_alone_bit_for_bit(variant):
    model = RecurrentConfig(**VARIANTS[variant])
    stacked = StackedSeq2Seq.initialized(model, SHAPE, [1, 2, 3])
    src = torch.as_tensor(TRAIN.src[:20])
    state, token = stacked.start(src)
    logits, _ = stacked.step(state, token)
    alone = StackedSeq2Seq.initialized(model, SHAPE, [2])
    state, token = alone.start(src)
    assert torch.equal(logits[1], alone.step(state, token)[0][0])


def test_gradient_clipping_is_per_member():
    # A learning rate large enough that a member's update depends on its own clip only.
    seeds = [1, 2]
    sweep = trainer(seeds, lr=10.0, max_grad_norm=0.01)
    before = {n: p.detach().clone() for n, p in sweep.model.named_parameters()}
    sweep.run_steps(1)
    for k in range(2):
        moved = torch.sqrt(
            sum(((p[k] - before[n][k]) ** 2).sum() for n, p in sweep.model.named_parameters())
        )
        assert moved.item() == pytest.approx(10.0 * 0.01, rel=1e-3)


@pytest.mark.slow
def test_early_stopping_keeps_each_members_best_epoch():
    scripted = {1: [0.5, 0.7, 0.7], 2: [0.5, 0.4, 0.9], 3: [0.0, 0.0, 0.3]}
    epochs_seen = []

    def validate(model):
        epoch = len(epochs_seen)
        epochs_seen.append(model.members)
        return np.array([scripted[s][epoch] for s in t.active])

    t = trainer([1, 2, 3], validate, max_epochs=3, patience=1)
    results = t.run()
    assert epochs_seen == [3, 3, 2]  # seed 2 stopped after epoch 2 and left the stacked model
    assert (results[1].best_epoch, results[1].epochs) == (2, 3)  # unchanged accuracy stops too
    assert (results[2].best_epoch, results[2].epochs) == (1, 2)
    assert (results[3].best_epoch, results[3].epochs) == (3, 3)  # 0 % is not "unchanged"
    assert results[2].validation == [0.5, 0.4]
    assert all(r.state is not None for r in results.values())


def test_a_member_whose_loss_diverges_stops_marked_and_changes_no_other(tmp_path):
    # Seed 2's weights are made NaN after epoch 1 (as too large a step makes them), so its loss
    # is NaN from update 4 (3 steps an epoch) on, though its scripted accuracy still rises. The
    # run is killed after that update and resumed from its last save.
    scripted = {1: [0.1, 0.2, 0.3], 2: [0.5, 0.9, 0.9], 3: [0.0, 0.0, 0.0]}
    model = RecurrentConfig(emb=8, hidden=8)
    config = TrainConfig(batch_size=16, max_epochs=3, patience=2)
    train = encode(TRAIN.src[:48], TRAIN.tgt[:48])

    def fresh(seeds):
        def validate(model):
            return np.array([scripted[s][t.epoch - 1] for s in t.active])

        checkpoint = tmp_path / f"{seeds}.pt"
        t = SweepTrainer(model, SHAPE, config, seeds, train, validate, checkpoint=checkpoint)
        t.checkpoint_seconds = 0.0  # save after every step
        return t

    class Killed(Exception):
        pass

    def poison_then_kill(progress):
        if progress.evaluation is not None and progress.epoch == 1:
            with torch.no_grad():
                for p in t.model.parameters():
                    p[t.active.index(2)] = float("nan")
        if (progress.epoch, progress.step) == (2, 2):
            raise Killed

    t = fresh([1, 2, 3])
    with pytest.raises(Killed):
        t.run(poison_then_kill)
    stacked = fresh([1, 2, 3]).run()
    assert [stacked[s].diverged for s in (1, 2, 3)] == [None, 4, None]
    assert [stacked[s].epochs for s in (1, 2, 3)] == [3, 2, 3]  # seed 2 stopped, though better
    assert (stacked[2].best_epoch, stacked[2].best_accuracy) == (1, 0.5)  # its finite weights
    assert all(bool(torch.isfinite(w).all()) for w in stacked[2].state.values())
    without = fresh([1, 3]).run()
    for seed in (1, 3):
        for name, tensor in without[seed].state.items():
            assert torch.equal(stacked[seed].state[name], tensor), (seed, name)


@pytest.mark.slow
def test_patience_and_min_delta_let_a_seed_pass_a_dip():
    scripted = {1: [0.5, 0.4, 0.6, 0.6, 0.6, 0.6], 2: [0.5, 0.51, 0.52, 0.9, 0.9, 0.9]}

    def validate(model):
        return np.array([scripted[s][t.epoch - 1] for s in t.active])

    t = trainer([1, 2], validate, max_epochs=6, patience=2, min_delta=0.05)
    results = t.run()
    # seed 1: the dip at epoch 2 is passed; no gain after epoch 3, stopped after epoch 5
    assert (results[1].best_epoch, results[1].epochs) == (3, 5)
    # seed 2: +0.01 twice is below min_delta, so it would have stopped after epoch 3 ...
    # ... but 0.52 > 0.51 > 0.5 still updates the best weights; epoch 4 (+0.38) came too late
    assert (results[2].best_epoch, results[2].epochs) == (3, 3)


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings", [{"optimizer": "sgd"}, {"optimizer": "adam"}, {"noise": "counter"}]
)
def test_resume_from_a_checkpoint_gives_the_same_weights(tmp_path, settings):
    def fresh(checkpoint):
        t = trainer([5, 6], max_epochs=2, **settings)
        t.checkpoint, t.checkpoint_seconds = checkpoint, 0.0  # save after every step
        return t

    whole = fresh(tmp_path / "a.pt").run()
    interrupted = fresh(tmp_path / "b.pt")

    class Killed(Exception):
        pass

    def kill_midway(progress):
        if progress.epoch == 2 and progress.step == 3:
            raise Killed

    with pytest.raises(Killed):
        interrupted.run(kill_midway)
    resumed = SweepTrainer(
        CONFIG,
        SHAPE,
        interrupted.config,
        [5, 6],
        encode(TRAIN.src, TRAIN.tgt),
        lambda model: np.zeros(model.members),
        checkpoint=tmp_path / "b.pt",
    )
    assert (resumed.epoch, resumed.step) == (2, 2)  # the last save before the kill
    again = resumed.run()
    for seed in (5, 6):
        for name, tensor in whole[seed].state.items():
            torch.testing.assert_close(again[seed].state[name], tensor, rtol=0, atol=0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_incremental_decoding_matches_teacher_forced_logits(variant):
    config = RecurrentConfig(**VARIANTS[variant])
    model = StackedSeq2Seq.initialized(config, SHAPE, [3, 4])
    src = torch.as_tensor(TRAIN.src[:5])
    tokens = greedy(model, src, max_len=8, eos=EOS, pad=PAD)  # (S, B, 8)
    assert tokens.shape == (2, 5, 8)
    tgt_in = torch.cat([torch.full((2, 5, 1), BOS), tokens[:, :, :-1]], dim=2)
    logits = model.logits(model(src.expand(2, -1, -1), tgt_in))
    decided = tokens != PAD
    assert torch.equal(logits.argmax(-1)[decided], tokens[decided])


def test_decoded_outputs_cut_at_eos_and_flag_specials():
    tokens = np.array([[5, 6, EOS, 7], [5, BOS, 6, 7]])
    out, length = decoded_outputs(tokens)
    assert length.tolist() == [2, 4]
    assert out.tolist() == [[2, 3, -1, -1], [2, -1, 3, 4]]


def test_trainer_refuses_duplicate_seeds():
    with pytest.raises(ValueError):
        trainer([1, 1])


def test_token_cross_entropy_matches_torch():
    logits = torch.randn(40, 9, dtype=torch.float64, requires_grad=True)
    target = torch.randint(0, 9, (40,))
    target[::5] = PAD
    weights = torch.rand(40, dtype=torch.float64)
    ours = token_cross_entropy(logits, target, PAD)
    (ours * weights).sum().backward()
    grad = logits.grad.clone()
    logits.grad = None
    reference = torch.nn.functional.cross_entropy(
        logits, target, ignore_index=PAD, reduction="none"
    )
    (reference * weights).sum().backward()
    torch.testing.assert_close(ours, reference)
    torch.testing.assert_close(grad, logits.grad)


@pytest.mark.slow
def test_padding_lanes_change_no_member_through_early_stopping_and_resume(monkeypatch, tmp_path):
    # A GPU pads a stack to CUDA_MIN_LANES lanes with copies of its first member. On the CPU,
    # where members do not depend on the stack's size, the same padding must change nothing:
    # seeds stopping after 2 and 3 epochs shrink the stack twice, and a padded run is killed
    # and resumed from its checkpoint.
    curves = {11: [0.1, 0.1], 22: [0.1, 0.2, 0.2, 0.2], 33: [0.0] * 4}

    def fresh(checkpoint=None):
        def validate(stacked):
            assert stacked.members == max(len(t.active), t.lanes)
            real = [curves[seed][t.epoch - 1] for seed in t.active]
            return np.array(real + [0.5] * (stacked.members - len(real)))

        t = trainer([11, 22, 33], validate, max_epochs=4, patience=1)
        t.checkpoint, t.checkpoint_seconds = checkpoint, 0.0
        return t

    plain = fresh().run()
    monkeypatch.setattr(trainer_module, "min_lanes", lambda device, model: 5)

    class Killed(Exception):
        pass

    def kill(progress):
        if progress.epoch == 3 and progress.step == 2:
            raise Killed

    with pytest.raises(Killed):
        fresh(tmp_path / "state.pt").run(kill)
    resumed = fresh(tmp_path / "state.pt")
    assert resumed.lanes == 5 and resumed.model.members == 5  # 2 members + 3 padding lanes
    padded = resumed.run()
    assert [padded[s].epochs for s in (11, 22, 33)] == [plain[s].epochs for s in (11, 22, 33)]
    for seed in (11, 22, 33):
        for name, tensor in plain[seed].state.items():
            assert torch.equal(padded[seed].state[name], tensor), (seed, name)


@pytest.mark.slow
def test_each_epoch_reports_its_members_validation_accuracy_and_loss(monkeypatch):
    # padded to 3 lanes, as a GPU pads a stack: the evaluation holds the two members only
    monkeypatch.setattr(trainer_module, "min_lanes", lambda device, model: 3)
    curves = {11: [0.25, 0.5], 22: [0.0, 0.75]}

    def validate(stacked):
        real = [curves[seed][t.epoch - 1] for seed in t.active]
        return np.array(real + [0.9] * (stacked.members - len(real)))

    held_out = generate("validation", 24, seed=1)
    data = encode(held_out.src, held_out.tgt)
    config = TrainConfig(batch_size=32, max_epochs=2)
    train = encode(TRAIN.src, TRAIN.tgt)
    t = SweepTrainer(CONFIG, SHAPE, config, [11, 22], train, validate, validation=data)
    reported = []
    results = t.run(reported.append)
    evaluations = [(p.epoch, p.active, p.evaluation) for p in reported if p.evaluation]
    assert [(epoch, active, e.seeds, e.accuracy) for epoch, active, e in evaluations] == [
        (1, 2, (11, 22), (0.25, 0.0)),
        (2, 0, (11, 22), (0.5, 0.75)),
    ]
    # The last epoch's loss: each member's summed NLL per validation sequence, teacher-forced
    # without dropout, under its final weights (its best epoch's).
    last = evaluations[-1][2].loss
    assert len(last) == 2 and evaluations[0][2].loss != last
    for k, seed in enumerate((11, 22)):
        alone = StackedSeq2Seq.from_members(CONFIG, SHAPE, [results[seed].state])
        with torch.no_grad():
            out = alone.teacher_forced(data.src[None], data.tgt_in[None])
            logits = out.hidden[0] @ out.weight[0] + out.bias[0]
            summed = torch.nn.functional.cross_entropy(
                logits.flatten(0, 1), data.tgt_out.flatten(), ignore_index=PAD, reduction="sum"
            )
        assert last[k] == pytest.approx(float(summed) / len(data), rel=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("noise", ["numpy", "counter"])
@pytest.mark.parametrize("model", [CONFIG, TransformerSeedConfig(random_positions=40)])
def test_on_a_gpu_a_replayed_member_is_its_seed_trained_alone(model, noise):
    # Steps 1-2 run op by op, step 3 records the graph, steps 4-6 replay it.
    def members(seeds):
        t = trainer(seeds, model=model, device="cuda", noise=noise)
        t.run_steps(6)
        return [t.model.member_state(k) for k in range(len(seeds))]

    stacked = members(list(range(1, 21)))
    for k, seed in ((0, 1), (19, 20)):
        alone = members([seed])[0]
        assert all(torch.equal(stacked[k][n], alone[n]) for n in alone), seed


def test_row_bias_gradient_is_baddbmms():
    s, r, k, n = 3, 9, 4, 6
    x = torch.randn(s, r, k, dtype=torch.float64)
    weight = torch.randn(s, k, n, dtype=torch.float64)
    bias = torch.randn(s, 1, n, dtype=torch.float64, requires_grad=True)
    grad = torch.randn(s, r, n, dtype=torch.float64)
    ours = _RowBias.apply(torch.bmm(x, weight), bias)
    (ours * grad).sum().backward()
    ours_grad, bias.grad = bias.grad, None
    reference = torch.baddbmm(bias, x, weight)
    (reference * grad).sum().backward()
    torch.testing.assert_close(ours, reference)
    torch.testing.assert_close(ours_grad, bias.grad)


@pytest.mark.parametrize("size", [7, 256, 257, 70_000])
def test_staged_member_sums_are_sums(size):
    x = torch.randn(3, size, dtype=torch.float64)
    torch.testing.assert_close(trainer_module.member_sums(x, staged=True), x.sum(1))


def test_row_affine_gradients_are_addcmuls():
    s, r, n = 3, 9, 6
    x = torch.randn(s, r, n, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(s, 1, n, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(s, 1, n, dtype=torch.float64, requires_grad=True)
    grad = torch.randn(s, r, n, dtype=torch.float64)

    def gradients(out):
        (out * grad).sum().backward()
        found = [t.grad for t in (x, weight, bias)]
        x.grad = weight.grad = bias.grad = None
        return out, found

    ours, ours_grads = gradients(_RowAffine.apply(x, weight, bias))
    reference, reference_grads = gradients(torch.addcmul(bias, x, weight))
    torch.testing.assert_close(ours, reference)
    for a, b in zip(ours_grads, reference_grads, strict=True):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("output_loss", [member_output_loss, batched_output_loss])
def test_output_losses_match_autograd_of_the_stacked_output_layer(output_loss):
    s, r, h, v = 3, 12, 5, 7
    hidden = torch.randn(s, r, h, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(s, h, v, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(s, 1, v, dtype=torch.float64, requires_grad=True)
    target = torch.randint(N_SPECIAL, v, (s, r))
    target[0, 4:] = PAD
    target[2, ::3] = PAD
    scale = torch.tensor([0.5, 2.0, -1.0], dtype=torch.float64)

    def gradients(loss):
        (loss * scale).sum().backward()
        grads = [t.grad.clone() for t in (hidden, weight, bias)]
        for t in (hidden, weight, bias):
            t.grad = None
        return loss.detach(), grads

    ours = gradients(output_loss(hidden, weight, bias, target, PAD))
    logits = torch.baddbmm(bias, hidden, weight)
    nll = torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), target.flatten(), ignore_index=PAD, reduction="none"
    )
    reference = gradients(nll.view(s, r).sum(1))
    torch.testing.assert_close(ours[0], reference[0])
    for a, b in zip(ours[1], reference[1], strict=True):
        torch.testing.assert_close(a, b)


def test_gru_cell_is_torch_gru_cell():
    torch.manual_seed(0)
    reference = torch.nn.GRUCell(4, 5).double()
    x, h = torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 5, dtype=torch.float64)
    ours = gru_cell(
        x @ reference.weight_ih.T + reference.bias_ih,
        h @ reference.weight_hh.T + reference.bias_hh,
        h,
    )
    torch.testing.assert_close(ours, reference(x, h))


def test_lstm_cell_gradients_match_autograd():
    gates = torch.randn(3, 4, 4 * 5, dtype=torch.float64, requires_grad=True)
    c = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lstm_cell, (gates, c))

    def reference(gates, c):
        i, f, o, g = gates.split(5, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c

    for out, ref in zip(lstm_cell(gates, c), reference(gates, c), strict=True):
        torch.testing.assert_close(out, ref)
