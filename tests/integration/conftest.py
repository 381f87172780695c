"""Fixtures of the integration tests: a tiny validation file, a transformer trained on it, a
random network in Lample & Charton's checkpoint layout."""

import sys
from pathlib import Path

import pytest
import sympy as sp

from genprobe.tasks.integration import X, from_sympy, problem_prefix, to_prefix

# spawned pool workers import test helpers by module name
sys.path.insert(0, str(Path(__file__).parent))


def _line(big_f):
    f = sp.diff(big_f, X)
    return f"1|{' '.join(problem_prefix(from_sympy(f)))}\t{' '.join(to_prefix(from_sympy(big_f)))}"


@pytest.fixture(scope="module")
def validation(tmp_path_factory):
    """A tiny validation file in L&C's format: short problems SymPy integrates."""
    antiderivatives = [X**2, sp.sin(X), sp.exp(X), X**4 / 4, X + X**2 / 2, sp.cos(3 * X)]
    path = tmp_path_factory.mktemp("data") / "tiny.valid"
    path.write_text("".join(_line(big_f) + "\n" for big_f in antiderivatives))
    return path


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, validation):
    """A transformer trained for a few steps by `integration train`: it scores candidates."""
    from genprobe.cli import main

    out = tmp_path_factory.mktemp("model") / "run"
    args = [
        "integration", "train", "--data", str(validation), "--out", str(out), "--epochs", "2",
        "--epoch-size", "16", "--batch-size", "4", "--valid-size", "2", "--warmup", "2",
        "--max-len", "40", "--device", "cpu",
    ]  # fmt: skip
    try:
        main(args)
    except SystemExit as done:
        assert done.code == 0
    return out


@pytest.fixture
def lc_checkpoint(tmp_path):
    """A random tiny network saved in Lample & Charton's checkpoint layout (for `lc:`)."""
    import torch

    from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig

    torch.manual_seed(0)
    config = TransformerConfig(dim=16, n_enc_layers=1, n_dec_layers=1, n_heads=2, max_positions=64)
    network = Seq2SeqTransformer(config)
    path = tmp_path / "lc.pth"
    torch.save(
        {"encoder": network.encoder.state_dict(), "decoder": network.decoder.state_dict()}, path
    )
    return path
