"""The validation a training run reports every epoch: greedy Fail@1, verified."""

from __future__ import annotations

from collections.abc import Sequence

from genprobe.tasks.integration.reading import read_expression
from genprobe.tasks.integration.verifier import Verifier
from genprobe.training.seq2seq_transformer import Validate
from genprobe.under_test.adapters.seq2seq import DecodingConfig, Seq2SeqModel
from genprobe.verification.ranked import verify_ranked


def greedy_fail_at_1(verifier: Verifier, max_len: int) -> Validate:
    """The trainer's validation: `valid_fail@1`, the share of validation problems whose greedy
    output (at most `max_len` tokens) the verifier does not pass."""

    def validate(network, problems_text: Sequence[str]) -> dict[str, float]:
        device = str(next(network.parameters()).device)
        model = Seq2SeqModel(
            network, DecodingConfig(method="greedy", max_len=max_len, batch_size=64), device
        )
        problems = [read_expression(p, canonical=True) for p in problems_text]
        found = model.candidates(problems, 1)
        answers = [[c.answer for c in candidates] for candidates in found]
        ranked = verify_ranked(problems, answers, verifier.verify_many, k_max=1)
        failed = sum(r.first_pass(verifier.config.policy) != 1 for r in ranked)
        return {"valid_fail@1": failed / len(problems)}

    return validate
