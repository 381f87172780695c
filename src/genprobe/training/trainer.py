"""Train S seeds of a seq2seq model at once, each as if it were trained alone.

Member k has its own initialization, data order, dropout masks (and any other random draw of a
training step, such as randomized positions), gradient clipping and early stopping; the members
share only the tensors they are stored in. A member's initialization comes from its init seed,
its data order and training-step draws from its order seed; by default both are its seed, and a
grid of init × order seeds separates the two sources of variance (`MemberSeeds`). With
`TrainConfig.subsets`, each member trains on its own random subset of the training examples,
drawn from its subset seed (`member_subset`), all of one size so that the epochs' orders stay
one (members, n) tensor; an epoch is then a permutation of the member's subset. The
per-member losses are summed before `backward`, which gives each member exactly its own
gradient, and the updates (plain SGD, or Adam/AdamW with its moments kept per member) are
elementwise, so no member can influence another.

Early stopping: after each epoch, a member whose validation accuracy has not improved by more
than `min_delta` for `patience` epochs stops; it keeps the weights of its best epoch and leaves
the stacked model, so the remaining members train faster. `patience=1` is the rule of Weber et
al. (2018, appendix A.1) taken literally: stop at the first epoch that does not improve. One
addition under every rule: a member at 0 % goes on (it has not left the initial plateau yet,
which takes one to two epochs here), up to `max_epochs`. A member whose training loss turns NaN
or inf (a learning rate too large) stops at the end of that epoch whatever its accuracy, marked
with the update it diverged at (`MemberResult.diverged`); its weights from then on are not
finite, so it keeps the best epoch before (the diverged one only where it has no other).

On a GPU (`device="cuda"`) the step is recorded once as a CUDA graph and replayed
(`training.captured`), the members' uniforms are drawn by a thread pool into pinned buffers
while the previous step runs (`training.step_inputs`), and the output layer's loss is one
batched matmul (`batched_output_loss`). Two CUDA behaviours would make a member's arithmetic
depend on the members beside it, and both are removed: cuBLAS splits a long inner dimension
across blocks when a batched matmul has few matrices (hence `CUBLAS_WORKSPACE_CONFIG=:0:0`,
set by `cuda_determinism` before cuBLAS starts), and a reduction over rows splits its work
differently below 16 rows (hence a stack of fewer members is padded to `CUDA_MIN_LANES` lanes
with copies of its first member, whose results are dropped); a bias's gradient is summed along
rows (`models.member_stack.biased_bmm`). A member of the recurrent model is then bit for bit the
same seed trained alone on the same GPU, in stacks of 1 to 1,000 (benchmarks/sweep_gpu.py
checks it). The transformer's members are not yet: on a GPU they agree with seeds trained alone
to rounding only (docs/gpu.md).
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.func import functional_call

from genprobe.data.seq2seq import PAD, Seq2SeqTensors
from genprobe.errors import ConfigError
from genprobe.models.architectures import Architecture, ModelShape
from genprobe.models.device import present_device
from genprobe.models.member_stack import MemberStack
from genprobe.runs.resume import load_state, save_state
from genprobe.training.captured import CapturedStep
from genprobe.training.config import MemberSeeds, TrainConfig
from genprobe.training.counter_noise import counter_uniforms, member_keys
from genprobe.training.loss import member_losses, shared_example_losses
from genprobe.training.step_inputs import StepInputs

ADAM_BETA1, ADAM_EPS = 0.9, 1e-8  # torch.optim.Adam's defaults (Lake & Baroni's)
# Stream ids: a member's data order and training-step draws (dropout, random positions) come
# from (its order seed, stream id); its weights from its init seed.
ORDER_STREAM, NOISE_STREAM = 1, 2
SUBSET_STREAM = 3  # a member's training examples, from (its subset seed, this id)
# On CUDA a stack has at least this many lanes (see the module's docstring).
CUDA_MIN_LANES = 16
# On a CPU, a step of many members over a large batch streams its activations through memory
# (a full batch of 4,704 equations × 100 members: about 1.3 GB); a stack that allows it
# (`MemberStack.chunkable`) steps its members in chunks of about this many examples × members
# instead, which each member computes exactly as in one pass (benchmarks/grokking_stacking.py:
# 0.70× → 1.15× the speed of one seed at a time there).
CPU_CHUNK_ROWS = 16_384
REDUCE_WIDTH = 256  # values per sum on CUDA (`member_sums`)
CUBLAS_NO_SPLIT_K = ":0:0"  # CUBLAS_WORKSPACE_CONFIG: no workspace, so no split-K kernels


class _TeacherForced(torch.nn.Module):
    """A stack's teacher-forced pass as a module's forward, for `torch.func.functional_call`."""

    def __init__(self, model: MemberStack) -> None:
        super().__init__()
        self.model = model

    def forward(self, src: Tensor, tgt_in: Tensor, noise: dict[str, Tensor]) -> Any:
        return self.model.teacher_forced(src, tgt_in, noise)


def min_lanes(device: torch.device, model: type[MemberStack]) -> int:
    """The fewest members a stack of `model` holds on `device` (padded with copies of its
    first): on CUDA, a stack whose kernels reduce across its members' rows."""
    return CUDA_MIN_LANES if device.type == "cuda" and model.pads_on_gpu else 1


def member_sums(x: Tensor, staged: bool | None = None) -> Tensor:
    """Each member's sum of x (S, ...) → (S,). On CUDA (`staged` by default) in stages of
    `REDUCE_WIDTH` values, the last padded with zeros: a longer sum splits its work by the
    number of sums taken at once, so a member's sum would depend on the members beside it."""
    x = x.flatten(1)
    while (x.is_cuda if staged is None else staged) and x.shape[1] > REDUCE_WIDTH:
        x = F.pad(x, (0, -x.shape[1] % REDUCE_WIDTH)).view(x.shape[0], -1, REDUCE_WIDTH).sum(2)
    return x.sum(1)


def cuda_determinism() -> None:
    """Ask cuBLAS for kernels that do not split the inner dimension, before it starts.

    A process whose cuBLAS has already started keeps its workspace; a different setting the
    user made is kept too, with a warning that members may then differ from seeds trained alone.
    """
    chosen = os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_NO_SPLIT_K)
    if chosen != CUBLAS_NO_SPLIT_K:
        warnings.warn(
            f"CUBLAS_WORKSPACE_CONFIG={chosen}: on a GPU, a member may then differ in the last "
            f"bits from the same seed trained alone ({CUBLAS_NO_SPLIT_K} keeps them identical)",
            stacklevel=2,
        )


@dataclass
class MemberResult:
    seed: int
    best_epoch: int = 0
    best_accuracy: float = -1.0
    epochs: int = 0
    last_improvement: int = 0  # the last epoch that improved on the best by more than min_delta
    diverged: int | None = None  # the update (1-based) whose training loss was first NaN or inf
    validation: list[float] = field(default_factory=list)  # accuracy after each epoch
    state: dict[str, Tensor] | None = None  # weights of the best epoch

    def summary(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "state"}


@dataclass(frozen=True)
class Evaluation:
    """A stack's validation after an epoch, per member validated (in the order of `seeds`)."""

    seeds: tuple[int, ...]
    accuracy: tuple[float, ...]
    loss: tuple[float, ...] | None  # on the validation examples (None: none were given)


@dataclass(frozen=True)
class Progress:
    epoch: int  # 1-based
    step: int  # steps done in this epoch
    steps: int  # steps per epoch
    active: int  # members still training
    evaluation: Evaluation | None = None  # once per epoch, after its validation
    over_time: bool = False  # step and steps count the whole budget (`training.over_time`)


Validator = Callable[[MemberStack], np.ndarray]  # model → (S,) validation accuracy


def member_stream(seed: int, stream: int) -> int:
    """A 63-bit seed for one purpose of one member, independent of the other purposes."""
    return int(
        np.random.SeedSequence([seed, stream]).generate_state(2, np.uint64)[0] >> np.uint64(1)
    )


def member_subset(seed: int, examples: int, size: int) -> np.ndarray:
    """The `size` indices (ascending) of the `examples` training examples that the member of
    subset seed `seed` trains on."""
    rng = np.random.default_rng(member_stream(seed, SUBSET_STREAM))
    return np.sort(rng.choice(examples, size, replace=False))


class SweepTrainer:
    """Trains `seeds` as members of one stacked model of `architecture`; resumable from
    `checkpoint`.

    `seeds` name the members; `streams` gives a member's init, order and subset seeds
    (default: each the member's seed). `validate` gives each epoch's accuracy for early
    stopping (None only for a subclass that never ends an epoch that way,
    `training.over_time`). `validation`, if
    given, are the examples whose loss each epoch's evaluation reports beside `validate`'s
    accuracy (what a user watches on a loss plateau).
    """

    def __init__(
        self,
        architecture: Architecture,
        shape: ModelShape,
        config: TrainConfig,
        seeds: Sequence[int],
        train: Seq2SeqTensors,
        validate: Validator | None,
        device: torch.device | str = "cpu",
        checkpoint: Path | None = None,
        checkpoint_seconds: float = 60.0,
        streams: dict[int, MemberSeeds] | None = None,
        validation: Seq2SeqTensors | None = None,
    ) -> None:
        if len(set(seeds)) != len(seeds) or not seeds:
            raise ConfigError("seeds", "a non-empty list of distinct integers", list(seeds))
        self.device = present_device(str(device))
        self.on_gpu = self.device.type == "cuda"
        if self.on_gpu:
            cuda_determinism()
        self.architecture, self.shape = architecture, shape
        self.config = config
        self.train = train.to(device)
        self.validate = validate
        self.validation = None if validation is None else validation.to(device)
        self.checkpoint = checkpoint
        self.checkpoint_seconds = checkpoint_seconds
        self.streams = streams or {seed: MemberSeeds(seed, seed, seed) for seed in seeds}
        size = config.subset_size(len(train))
        self.steps_per_epoch = -(-size // config.batch_size)
        # each member's training examples (None: all of them)
        self.subsets = (
            {seed: member_subset(self.streams[seed].subset, len(train), size) for seed in seeds}
            if config.subsets
            else None
        )
        self.results = {seed: MemberResult(seed) for seed in seeds}
        self.active = list(seeds)
        self.lanes = min_lanes(self.device, architecture.model_class())
        inits = [self.streams[seed].init for seed in seeds]
        self.model = architecture.initialized(shape, self._padded(inits)).to(self.device)
        self.noise_rngs = [self._noise_rng(seed) for seed in seeds]
        self.inputs = StepInputs(self.device)
        self.epoch, self.step = 1, 0  # the next step to run
        self.updates = 0  # optimizer steps taken (Adam's bias correction counts them)
        self.moments: dict[str, tuple[Tensor, Tensor]] = {}  # Adam's, per parameter
        # Per lane, the update whose training loss was first NaN or inf (0: none yet), dated by
        # the step itself on the device so that no step waits for the host to look.
        self.diverged = torch.zeros(self.model.members, dtype=torch.int64, device=self.device)
        if checkpoint is not None:
            restart = "training this stack of seeds starts again from the beginning"
            if (state := load_state(checkpoint, self.device, restart)) is not None:
                self._restore(state)
        # `updates` on the device, counted by `_step` itself: a recorded step reads no host value.
        self.step_updates = torch.tensor(self.updates, device=self.device)
        self._new_stack()

    def _padded(self, items: list) -> list:
        """`items` (one per active member) with the first repeated to fill the lanes."""
        return items + items[:1] * (self.lanes - len(items))

    def _new_stack(self) -> None:
        """Call whenever `self.model` is replaced: a recorded step holds the old parameters."""
        self.forward_pass = _TeacherForced(self.model)  # for steps in chunks of members
        if self.config.noise == "counter":
            orders = [self.streams[seed].order for seed in self.active]
            streams = [member_stream(order, NOISE_STREAM) for order in orders]
            self.noise_keys = member_keys(self._padded(streams), self.device)
        captured = self.on_gpu and self.model.capturable
        self.run_step = CapturedStep(self._step) if captured else self._step

    def _noise_rng(self, seed: int) -> np.random.Generator:
        # NumPy's PCG64 fills float32 buffers ~5x faster than torch's CPU generator, and
        # dropout masks are the largest random draw of a step.
        return np.random.default_rng(member_stream(self.streams[seed].order, NOISE_STREAM))

    def run(self, on_progress: Callable[[Progress], None] | None = None) -> dict[int, MemberResult]:
        """Train until every member has stopped; return each seed's result with its best weights."""
        last_save = time.monotonic()
        while self.active:
            order = self._epoch_order()
            while self.step < self.steps_per_epoch:
                self._train_step(
                    order[:, self.step * self.config.batch_size :][:, : self.config.batch_size]
                )
                self.step += 1
                if on_progress is not None:
                    on_progress(
                        Progress(self.epoch, self.step, self.steps_per_epoch, len(self.active))
                    )
                if (
                    self.checkpoint is not None
                    and time.monotonic() - last_save > self.checkpoint_seconds
                ):
                    self._save()
                    last_save = time.monotonic()
            epoch, evaluation = self.epoch, self._end_epoch()
            if on_progress is not None:
                steps = self.steps_per_epoch
                on_progress(Progress(epoch, steps, steps, len(self.active), evaluation))
            if self.checkpoint is not None:
                self._save()
                last_save = time.monotonic()
        return self.results

    def run_steps(self, steps: int) -> None:
        """Take the first `steps` training steps of the first epoch, as `run` does, and stop
        (no validation): what a member computes, for checks against its seed trained alone."""
        order = self._epoch_order()
        size = self.config.batch_size
        for step in range(steps):
            self._train_step(order[:, step * size :][:, :size])

    def _epoch_order(self) -> Tensor:
        """(lanes, n) example indices: member k's shuffle of its training examples (all N, or
        its subset) for this epoch, from its order seed."""
        orders = []
        for seed in self.active:
            rng = np.random.default_rng(
                [member_stream(self.streams[seed].order, ORDER_STREAM), self.epoch]
            )
            if self.subsets is None:
                orders.append(rng.permutation(len(self.train)))
            else:
                subset = self.subsets[seed]
                orders.append(subset[rng.permutation(len(subset))])
        return torch.as_tensor(np.stack(self._padded(orders)), device=self.device)

    def _train_step(self, batch: Tensor) -> None:
        """One update of every active member on its own batch of example indices (lanes, B)."""
        self.updates += 1
        if self.config.noise == "counter":
            _, scalars = self.inputs.draw([], {}, self.lanes, self._scalars())
            update = torch.tensor([self.updates])
            noise = {"noise_keys": self.noise_keys, "noise_update": update}
        else:
            shapes = self.model.noise_shapes(batch.shape[1], *self._lengths())
            noise, scalars = self.inputs.draw(self.noise_rngs, shapes, self.lanes, self._scalars())
        self.run_step({"batch": batch, "scalars": scalars, **noise})

    def _lengths(self) -> tuple[int, int]:
        return self.train.src.shape[1], self.train.tgt_in.shape[1]

    def _step(self, inputs: dict[str, Tensor]) -> None:
        """The step itself, from tensors alone (`training.captured` records it on a GPU)."""
        batch, scalars = inputs["batch"], inputs["scalars"]
        if "noise_keys" in inputs:
            shapes = self.model.noise_shapes(batch.shape[1], *self._lengths())
            noise = counter_uniforms(inputs["noise_keys"], inputs["noise_update"], shapes)
        else:
            noise = {k: v for k, v in inputs.items() if k not in ("batch", "scalars")}
        src = self.train.src[batch]
        tgt_in, tgt_out = self.train.tgt_in[batch], self.train.tgt_out[batch]
        self.model.zero_grad(set_to_none=True)
        self.step_updates += 1
        lanes, size = batch.shape
        chunk = self._member_chunk(size)
        for start in range(0, lanes, chunk):
            part = slice(start, start + chunk)
            out = self._teacher_forced(
                part, src[part], tgt_in[part], {k: v[part] for k, v in noise.items()}
            )
            summed = member_losses(out, tgt_out[part], PAD, batched=self.on_gpu)
            if self.config.loss_normalization == "sequences":
                per_member = summed / size
            else:
                per_member = summed / (tgt_out[part] != PAD).flatten(1).sum(1)
            per_member.sum().backward()
            dated = self.diverged[part]
            undated = torch.isfinite(per_member.detach()) | (dated > 0)
            dated.copy_(torch.where(undated, dated, self.step_updates))
        self._clip_and_update(scalars)

    def _member_chunk(self, batch: int) -> int:
        """How many members one pass of a step holds: all of them, except on a CPU for a stack
        that can run on slices of its members (`CPU_CHUNK_ROWS`)."""
        if self.on_gpu or not self.model.chunkable:
            return self.model.members
        return max(1, CPU_CHUNK_ROWS // max(batch, 1))

    def _teacher_forced(
        self, part: slice, src: Tensor, tgt_in: Tensor, noise: dict[str, Tensor]
    ) -> Any:
        """The stack's teacher-forced pass over the members `part`: the whole model, or its
        parameters' slices (gradients flow into the stacked parameters)."""
        if part.start == 0 and src.shape[0] == self.model.members:
            return self.model.teacher_forced(src, tgt_in, noise)
        params = {f"model.{n}": p[part] for n, p in self.model.named_parameters()}
        return functional_call(self.forward_pass, params, (src, tgt_in, noise))

    def _scalars(self) -> list[float]:
        """What the update of step `self.updates` reads besides the gradients: the learning
        rate, AdamW's decay factor, Adam's bias-corrected step size and second-moment root."""
        lr = self._learning_rate()
        return [
            lr,
            1 - lr * self.config.weight_decay,
            lr / (1 - ADAM_BETA1**self.updates),
            math.sqrt(1 - self.config.beta2**self.updates),
        ]

    @torch.no_grad()
    def _clip_and_update(self, scalars: Tensor) -> None:
        params = dict(self.model.named_parameters())
        # Summed parameter by parameter: a reduction over a stacked (P, S) tensor adds in
        # another order when S is 1 than when it is larger.
        if self.config.max_grad_norm:
            squares = sum(member_sums(p.grad.pow(2)) for p in params.values())
            # The same rule as torch.nn.utils.clip_grad_norm_, applied to each member's own norm.
            clip = (self.config.max_grad_norm / (squares.sqrt() + 1e-6)).clamp(max=1.0)  # (S,)
        else:
            clip = torch.ones(self.model.members, device=self.device)
        if self.config.optimizer in ("adam", "adamw"):
            self._adam(params, clip, scalars)
            return
        scale = clip * scalars[0]
        for p in params.values():
            p.sub_(p.grad * scale.view(-1, *[1] * (p.dim() - 1)))

    def _learning_rate(self) -> float:
        """The rate of update number `self.updates` (1-based) under the schedule."""
        c = self.config
        if self.updates <= c.warmup:
            return c.lr * self.updates / c.warmup
        if c.schedule == "constant":
            return c.lr
        total = c.steps or c.max_epochs * self.steps_per_epoch
        done = min(1.0, (self.updates - c.warmup) / max(1, total - c.warmup))
        if c.schedule == "linear":
            return c.lr * (1 - done)
        return c.lr * 0.5 * (1 + math.cos(math.pi * done))

    def _adam(self, params: dict[str, Tensor], clip: Tensor, scalars: Tensor) -> None:
        """torch.optim.Adam's update on clipped gradients, elementwise (AdamW's: with the
        decoupled weight decay first). The scalars are tensors, so that a recorded step reads
        each step's own; the arithmetic is torch.optim.Adam's, rounded the same way."""
        beta1, beta2 = ADAM_BETA1, self.config.beta2
        _, decay, step, root = scalars.unbind()
        for name, p in params.items():
            grad = p.grad * clip.view(-1, *[1] * (p.dim() - 1))
            if name not in self.moments:
                self.moments[name] = (torch.zeros_like(p), torch.zeros_like(p))
            mean, square = self.moments[name]
            if self.config.weight_decay:
                p.mul_(decay)
            mean.mul_(beta1).add_(grad, alpha=1 - beta1)
            square.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            p.addcdiv_(mean * -step, square.sqrt().div_(root).add_(ADAM_EPS))

    def _validation_loss(self) -> tuple[float, ...] | None:
        """Each active member's loss on the validation examples, normalized as in training."""
        if self.validation is None:
            return None
        data = self.validation
        summed = shared_example_losses(self.model, data, self.on_gpu, self.config.batch_size)
        if self.config.loss_normalization == "sequences":
            per_member = summed / len(data)
        else:
            per_member = summed / (data.tgt_out != PAD).sum()
        return tuple(per_member[: len(self.active)].tolist())

    def _end_epoch(self) -> Evaluation:
        """Validate, stop the members that are done; returns the epoch's evaluation."""
        assert self.validate is not None, "early stopping needs a validator"
        accuracy = self.validate(self.model)
        members = len(self.active)  # a GPU's stack has padding lanes after them
        evaluation = Evaluation(
            tuple(self.active), tuple(float(a) for a in accuracy[:members]), self._validation_loss()
        )
        diverged = self.diverged[:members].tolist()
        keep = []
        for k, seed in enumerate(self.active):
            result = self.results[seed]
            result.epochs = self.epoch
            result.validation.append(float(accuracy[k]))
            result.diverged = diverged[k] or None
            if accuracy[k] > result.best_accuracy + self.config.min_delta:
                result.last_improvement = self.epoch
            # A diverged member's weights are not finite: its best only where it has no other.
            if accuracy[k] > result.best_accuracy and (result.state is None or not result.diverged):
                result.best_accuracy, result.best_epoch = float(accuracy[k]), self.epoch
                result.state = self.model.member_state(k)
            patient = self.epoch - result.last_improvement < self.config.patience
            # A member still at 0 % has not started to learn: "unchanged" would stop it at init.
            going_on = (patient or accuracy[k] == 0) and self.epoch < self.config.max_epochs
            if going_on and not result.diverged:
                keep.append(k)
        if len(keep) < len(self.active):
            self.active = [self.active[k] for k in keep]
            self.noise_rngs = [self.noise_rngs[k] for k in keep]
            if keep:
                lanes = self._padded(keep)
                self.model = self.model.subset(lanes)
                self.moments = {n: (m[lanes], v[lanes]) for n, (m, v) in self.moments.items()}
                self.diverged = self.diverged[lanes]
                self._new_stack()
        self.epoch, self.step = self.epoch + 1, 0
        return evaluation

    # -- resume ---------------------------------------------------------------------------

    def _save(self) -> None:
        assert self.checkpoint is not None
        save_state(self.checkpoint, self._state())

    def _state(self) -> dict[str, Any]:
        """What resuming needs, the padding lanes left out."""
        members = len(self.active)
        return {
            "epoch": self.epoch,
            "step": self.step,
            "active": self.active,
            "params": {n: p[:members].clone() for n, p in self.model.state_dict().items()},
            "updates": self.updates,
            "moments": {n: [m[:members].clone() for m in pair] for n, pair in self.moments.items()},
            "diverged": self.diverged[:members].clone(),
            # The key's older name, so that resume points of earlier versions still load.
            "dropout_rngs": [g.bit_generator.state for g in self.noise_rngs],
            "results": {seed: asdict(result) for seed, result in self.results.items()},
        }

    def _restore(self, state: dict) -> None:
        if sorted(state["results"]) != sorted(self.results):
            raise ConfigError(
                "seeds",
                f"the seeds of the checkpoint {sorted(state['results'])}",
                sorted(self.results),
            )
        self.epoch, self.step, self.active = state["epoch"], state["step"], list(state["active"])
        self.results = {seed: MemberResult(**r) for seed, r in state["results"].items()}
        lanes = self._padded(list(range(len(self.active))))
        self.model = self.architecture.stacked(self.shape, len(self.active)).to(self.device)
        self.model.load_state_dict(state["params"])
        if len(lanes) > len(self.active):
            self.model = self.model.subset(lanes)
        self.updates = state.get("updates", 0)  # absent from resume points of older versions
        self.moments = {n: (m[lanes], v[lanes]) for n, (m, v) in state.get("moments", {}).items()}
        diverged = state.get("diverged", torch.zeros(len(self.active), dtype=torch.int64))
        self.diverged = diverged.to(self.device)[lanes]
        self.noise_rngs = []
        for seed, rng_state in zip(self.active, state["dropout_rngs"], strict=True):
            rng = self._noise_rng(seed)
            rng.bit_generator.state = rng_state
            self.noise_rngs.append(rng)
