"""Checks that an architecture keeps the contract the seed study relies on
(`tasks.conformance`, for models).

`check_contract` is cheap and structural; every sweep runs it before it makes its run
directory, so a builder that raises, returns no module, or whose module raises in `forward` or
returns logits of the wrong shape, fails in one line with nothing written. `members_alone`
measures whether member k of a stack computes what seed k trained alone computes; a new run
records it in its provenance.
`check_model` adds what a study relies on; the test suite runs it over every row of the table
and over a `py:` and an `hf:` model, and a user can run it on their own:

    from genprobe.studies.seed_sensitivity.model_check import check_model
    check_model(SweepConfig(seeds=(1, 2, 3), task=load_task("scan"), model=my_architecture))
"""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from genprobe.data.seq2seq import EOS, PAD, Seq2SeqTensors, decoded_outputs, encode
from genprobe.decoding.greedy import greedy
from genprobe.errors import ModelContractError
from genprobe.models.member_stack import MemberStack
from genprobe.studies.seed_sensitivity.config import SweepConfig
from genprobe.studies.seed_sensitivity.device import cpu_threads
from genprobe.studies.seed_sensitivity.members import member_bytes
from genprobe.training.config import DEFAULT_SUBSET_FRACTION
from genprobe.training.loss import shared_example_losses
from genprobe.training.trainer import MemberResult, SweepTrainer

SAMPLE = 8  # examples a check decodes, or trains on per step
STEPS = 2  # training steps of the members-alone measurement


def check_contract(config: SweepConfig) -> None:
    """On the CPU: two members built, their training loss on a few training examples and on
    the longest input and output any role can hold, and a greedy decoding of a few inputs.

    Raises:
        ModelContractError (or the builder's ConfigError): the first thing that breaks the
            contract, naming the builder, what was expected and what it gave.
    """
    with cpu_threads():
        model = config.model.initialized(config.model_shape(), [0, 1])
        losses = _losses(model, _training_sample(config))
        if losses.shape != (2,) or not bool(torch.isfinite(losses).all()):
            raise ModelContractError(
                f"{config.model.describe()}: training losses {losses.tolist()}, not two finite"
            )
        _losses(model, _longest(config))
        _decoded(model, config, _training_sample(config).src.numpy())


def members_alone(config: SweepConfig, device: str = "cpu") -> dict[str, Any]:
    """Member k of a stack against seed k trained alone: after `STEPS` training steps on the
    same examples, whether their weights are equal bit for bit, else the largest difference
    (not finite where their training loss diverged). Measured on up to three seeds of the first
    stacked model, on `device`."""
    seeds = config.seed_chunks()[0][:3]
    data = _training_sample(config, STEPS * SAMPLE)
    # subsets choose only which examples a member's batches hold, not how it computes them
    whole = {"subsets": False, "subset_fraction": DEFAULT_SUBSET_FRACTION}
    train = replace(config.train, batch_size=SAMPLE, **whole)

    def trained(members: tuple[int, ...]) -> MemberStack:
        trainer = SweepTrainer(
            config.model, config.model_shape(), train, members, data, _no_validation, device,
            streams=config.streams(),
        )  # fmt: skip
        with cpu_threads():
            trainer.run_steps(STEPS)
        return trainer.model

    stack, alone = trained(seeds), trained(seeds[-1:])
    differences = [
        float((param - alone.member_state(0)[name]).abs().max())
        for name, param in stack.member_state(len(seeds) - 1).items()
    ]
    largest = float(np.max(differences))  # NaN stays NaN (max() drops it after a number)
    return {
        "members_equal_alone": largest == 0.0,
        "largest_difference": largest,
        "measured": f"member {len(seeds)} of a stack of {len(seeds)} against its seed alone "
        f"after {STEPS} training steps of {SAMPLE} examples, on {device}",
        "stacking": stack.stacking(),
    }


def check_model(config: SweepConfig) -> None:
    """`check_contract`, then, on the CPU: the same seed gives the same weights; member k of
    a stack equals seed k alone, bit for bit; a member saved and loaded with
    `weights_only=True` decodes as before; the longest input decodes to at most the task's
    longest output and its end.

    Raises:
        ModelContractError: the first property that does not hold.
    """
    check_contract(config)
    shape, name = config.model_shape(), config.model.describe()
    first, again = (config.model.initialized(shape, [7, 8]) for _ in range(2))
    pairs = zip(first.parameters(), again.parameters(), strict=True)
    if not all(torch.equal(p, q) for p, q in pairs):
        raise ModelContractError(f"{name}: the same seeds gave different weights")
    alone = members_alone(config)
    if not alone["members_equal_alone"]:
        raise ModelContractError(
            f"{name}: a member differs from its seed alone by {alone['largest_difference']:g}"
        )
    src = _training_sample(config).src.numpy()
    before = _decoded(first, config, src)
    saved = member_bytes(config, MemberResult(8, state=first.member_state(1)))
    state = torch.load(io.BytesIO(saved), weights_only=True)["state"]
    loaded = config.model.from_members(shape, [first.member_state(0), state])
    if not np.array_equal(before, _decoded(loaded, config, src)):
        raise ModelContractError(f"{name}: a member saved and loaded decodes differently")
    longest = _longest(config).src.numpy()
    _, lengths = decoded_outputs(_decoded(first, config, longest))
    if lengths.max() > (limit := config.task.max_output_length(longest.shape[1]) + 1):
        raise ModelContractError(f"{name}: decoded {lengths.max()} tokens, more than {limit}")


def _training_sample(config: SweepConfig, n: int = SAMPLE) -> Seq2SeqTensors:
    examples = replace(config, train_size=n).split("train")
    return encode(examples.src, examples.tgt)


def _longest(config: SweepConfig) -> Seq2SeqTensors:
    """Two examples as long as any role's longest input and its longest output (their tokens
    do not matter: they test the model's position tables and decoding limits)."""
    length = max(config.longest_input(role) for role in config.roles())
    output = np.zeros((2, config.task.max_output_length(length)), dtype=np.int64)
    return encode(np.ones((2, length), dtype=np.int64), output)


def _losses(model: MemberStack, data: Seq2SeqTensors) -> torch.Tensor:
    """Every member's summed training loss on the same examples (S,)."""
    return shared_example_losses(model, data, batched=False, rows=len(data))


def _decoded(model: MemberStack, config: SweepConfig, src: np.ndarray) -> np.ndarray:
    max_len = config.task.max_output_length(src.shape[1]) + 1
    return greedy(model, torch.as_tensor(src), max_len=max_len, eos=EOS, pad=PAD).numpy()


def _no_validation(model: MemberStack) -> np.ndarray:
    return np.zeros(model.members)
