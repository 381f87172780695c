"""Training over time: S seeds trained for a fixed number of steps, watched as they go.

The seed study's trainer stops each member early on its validation split, so it never sees a
model that fits its training data and learns the rule thousands of steps later (grokking,
Power et al. 2022). Here every member takes exactly `TrainConfig.steps` steps, and at each step
of a schedule (every `eval_every` steps, or log-spaced by default, always with step 0 and the
last) every member is evaluated on every role at once: its exact-match accuracy and loss per
role and its weight norm. The curve so far is part of the resume point, so a killed run goes
on with the numbers of an uninterrupted one.

Accuracy here is teacher-forced: an output counts as right when the model's most likely token
is the gold one at every position, end included. That is exactly whether greedy decoding
writes the gold output, in one batched pass instead of a decoding loop; for a task whose
verifier accepts outputs other than the gold one, the run's final evaluation (the predict
stage) is the verifier's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from genprobe.data.seq2seq import PAD, Seq2SeqTensors
from genprobe.errors import warn
from genprobe.models.member_stack import MemberStack, OutputLayer, biased_bmm
from genprobe.training.example_history import ExampleHistory
from genprobe.training.trainer import MemberResult, Progress, SweepTrainer

LOG_EVALUATIONS = 200  # points of the default schedule, log-spaced over the budget
CURVE_COLUMNS = ("seed", "step", "role", "accuracy", "loss", "weight_norm")


def evaluation_steps(steps: int, every: int = 0) -> list[int]:
    """The steps after which members are evaluated: 0, then every `every` steps, or (every = 0)
    about `LOG_EVALUATIONS` log-spaced steps; the last step always."""
    if every:
        points = np.arange(0, steps + 1, every)
    else:
        points = np.rint(np.geomspace(1, steps, LOG_EVALUATIONS)).astype(int)
    return sorted({0, *(int(p) for p in points), steps})


@dataclass(frozen=True)
class RoleScores:
    """One role's evaluation of every member: (S,) totals and (S, n) per example."""

    accuracy: np.ndarray  # the share of examples whose whole output is right
    loss: np.ndarray  # summed token NLL per example, averaged over examples
    right: np.ndarray  # (S, n) the whole output is right
    nll: np.ndarray  # (S, n) the summed token NLL of the output
    confidence: np.ndarray  # (S, n) the probability of the output, per token (geometric mean)


@torch.no_grad()
def score_roles(
    model: MemberStack, roles: Mapping[str, Seq2SeqTensors], rows: int
) -> dict[str, RoleScores]:
    """Every member on every role's examples, teacher-forced without noise, `rows` examples at
    a time."""
    return {name: _score(model, data, rows) for name, data in roles.items()}


def _score(model: MemberStack, data: Seq2SeqTensors, rows: int) -> RoleScores:
    # the totals are summed batch by batch in float32, as runs made before the per-example
    # arrays were kept summed them: their curves, and resumed ones, keep their digits
    right_total = torch.zeros(model.members, device=data.src.device)
    nll_total = torch.zeros(model.members, device=data.src.device)
    right, nll, tokens = [], [], []
    for start in range(0, len(data), rows):
        src, tgt_in, tgt_out = (
            t[start : start + rows].unsqueeze(0).expand(model.members, -1, -1)
            for t in (data.src, data.tgt_in, data.tgt_out)
        )
        logits = _logits(model.teacher_forced(src, tgt_in))
        real = tgt_out != PAD
        log_p = torch.log_softmax(logits.float(), dim=-1)
        token_nll = -log_p.gather(-1, tgt_out.clamp(min=0).unsqueeze(-1)).squeeze(-1) * real
        nll_total += token_nll.flatten(1).sum(1)
        whole = ((logits.argmax(-1) == tgt_out) | ~real).all(-1)  # (S, B)
        right_total += whole.sum(1)
        nll.append(token_nll.sum(-1))
        tokens.append(real.sum(-1))
        right.append(whole)
    n = len(data)
    nll_, tokens_ = torch.cat(nll, dim=1), torch.cat(tokens, dim=1).clamp(min=1)
    return RoleScores(
        (right_total / n).cpu().numpy(),
        (nll_total / n).cpu().numpy(),
        torch.cat(right, dim=1).cpu().numpy(),
        nll_.cpu().numpy(),
        torch.exp(-nll_ / tokens_).cpu().numpy(),
    )


def _logits(out: Tensor | OutputLayer) -> Tensor:
    if isinstance(out, OutputLayer):
        members, batch, length, width = out.hidden.shape
        flat = biased_bmm(out.bias, out.hidden.reshape(members, -1, width), out.weight)
        return flat.view(members, batch, length, -1)
    return out


@torch.no_grad()
def weight_norms(model: MemberStack) -> np.ndarray:
    """(S,) each member's L2 norm over all its parameters."""
    squares = sum(p.double().pow(2).flatten(1).sum(1) for p in model.parameters())
    return torch.as_tensor(squares).sqrt().cpu().numpy()


class OverTimeTrainer(SweepTrainer):
    """Trains `seeds` for `config.steps` steps each, evaluating every member on `roles` at the
    steps of `evaluation_steps`; `curve()` is the table of all evaluations so far.

    `validation_role` is the role whose accuracy a member's result records as its validation
    (what the seed study's training summary shows per epoch, here per evaluation).
    `train_role` is the role that holds the training examples: `history` follows each of them
    (`example_history`), and with subsets its accuracy and loss in the curve are each member's
    on its own subset, those on the rest of the training split the role `<train_role>_unseen`.
    """

    def __init__(
        self,
        *args: Any,
        roles: Mapping[str, Seq2SeqTensors],
        validation_role: str,
        train_role: str = "train",
        eval_rows: int = 500,
        **kwargs: Any,
    ) -> None:
        self.rows: list[dict[str, Any]] = []  # one per (evaluation, member, role)
        self.resumed_history: dict[str, Any] | None = None  # a resume point's, until restored
        super().__init__(*args, validate=None, **kwargs)
        assert self.config.steps is not None, "training over time needs a step budget"
        self.budget = self.config.steps
        self.schedule = set(evaluation_steps(self.budget, self.config.eval_every))
        self.roles = {name: data.to(self.device) for name, data in roles.items()}
        assert validation_role in roles, f"{validation_role} is not one of the roles"
        assert train_role in roles, f"{train_role} is not one of the roles"
        self.validation_role, self.train_role = validation_role, train_role
        self.eval_rows = eval_rows
        examples = len(roles[train_role])
        self.history = ExampleHistory(len(self.active), examples, sorted(self.schedule))
        if self.resumed_history is not None:
            self.history.restore(self.resumed_history)
        self.trained = np.ones((len(self.active), examples), dtype=bool)
        if self.subsets is not None:
            self.trained[:] = False
            for k, seed in enumerate(self.active):
                self.trained[k, self.subsets[seed]] = True

    @property
    def steps_done(self) -> int:
        return (self.epoch - 1) * self.steps_per_epoch + self.step

    def run(self, on_progress: Callable[[Progress], None] | None = None) -> dict[int, MemberResult]:
        """Train every member to the budget; return each seed's result with its final weights."""
        last_save = time.monotonic()
        if not self.rows:
            self._evaluate()
        while self.steps_done < self.budget:
            order = self._epoch_order()
            while self.step < self.steps_per_epoch and self.steps_done < self.budget:
                size = self.config.batch_size
                self._train_step(order[:, self.step * size :][:, :size])
                self.step += 1
                if self.steps_done in self.schedule:
                    self._evaluate()
                if on_progress is not None:
                    on_progress(
                        Progress(
                            self.epoch,
                            self.steps_done,
                            self.budget,
                            len(self.active),
                            over_time=True,
                        )
                    )
                if self.checkpoint is not None and (
                    time.monotonic() - last_save > self.checkpoint_seconds
                ):
                    self._save()
                    last_save = time.monotonic()
            if self.step == self.steps_per_epoch:
                self.epoch, self.step = self.epoch + 1, 0
        diverged = self.diverged[: len(self.active)].tolist()
        for k, seed in enumerate(self.active):
            result = self.results[seed]
            result.epochs = result.best_epoch = self.epoch
            result.diverged = diverged[k] or None  # marked; it trains to the budget all the same
            result.state = self.model.member_state(k)
        return self.results

    def _evaluate(self) -> None:
        step = self.steps_done
        scores = score_roles(self.model, self.roles, self.eval_rows)
        norms = weight_norms(self.model)
        train = scores[self.train_role]
        self.history.update(step, train.right, train.confidence)
        for k, seed in enumerate(self.active):
            for role, score in self._roles_of(k, scores):
                self.rows.append(
                    {
                        "seed": seed,
                        "step": step,
                        "role": role,
                        "accuracy": float(score[0]),
                        "loss": float(score[1]),
                        "weight_norm": float(norms[k]),
                    }
                )
            result = self.results[seed]
            result.validation.append(float(scores[self.validation_role].accuracy[k]))
            result.best_accuracy = result.validation[-1]  # the final weights are the ones kept

    def _roles_of(self, k: int, scores: dict[str, RoleScores]) -> list[tuple[str, tuple]]:
        """Member k's (role, (accuracy, loss)) at this evaluation; with subsets, the training
        role's on its own subset, and the rest of the training split's as `_unseen`."""
        rows = []
        for role, score in scores.items():
            if role == self.train_role and self.subsets is not None:
                for name, mask in ((role, self.trained[k]), (f"{role}_unseen", ~self.trained[k])):
                    rows.append((name, (score.right[k, mask].mean(), score.nll[k, mask].mean())))
            else:
                rows.append((role, (score.accuracy[k], score.loss[k])))
        return rows

    def curve(self) -> pd.DataFrame:
        """Every evaluation so far: the columns of `CURVE_COLUMNS`, one row per member, step and
        role."""
        frame = pd.DataFrame(self.rows, columns=list(CURVE_COLUMNS))
        return frame.astype({"seed": "int64", "step": "int64"})

    def _state(self) -> dict[str, Any]:
        return {**super()._state(), "curve": list(self.rows), "history": self.history.state()}

    def _restore(self, state: dict) -> None:
        if "history" not in state:  # an earlier version's resume point
            warn(f"{self.checkpoint} holds no history of the training examples: training this "
                 "stack of seeds starts again from the beginning")  # fmt: skip
            return
        super()._restore(state)
        self.rows = list(state["curve"])
        self.resumed_history = state["history"]
