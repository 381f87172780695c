import pytest
import torch

from genprobe.cli import main
from genprobe.models.checkpoints import save_transformer
from genprobe.models.transformer import Seq2SeqTransformer, TransformerConfig


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    """A tiny random-weight transformer over L&C's vocabulary, saved as `ckpt:` reads it."""
    torch.manual_seed(0)
    config = TransformerConfig(dim=16, n_enc_layers=1, n_dec_layers=1, n_heads=2, max_positions=256)
    path = tmp_path_factory.mktemp("ckpt") / "model.pt"
    save_transformer(path, Seq2SeqTransformer(config), {})
    return path


@pytest.fixture
def cli(capsys):
    """Run `genprobe ARGV…` through the real entry point: (exit code, stdout, stderr)."""

    def run(*argv):
        code = 0
        try:
            main(list(argv))
        except SystemExit as exit_:
            code = exit_.code
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
