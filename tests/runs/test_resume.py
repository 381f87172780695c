"""Resume points: a damaged state is named in one warning, set aside and not loaded; an intact
one loads; one holding objects other than tensors is refused in one line; the same state is
the same bytes."""

import pytest
import torch
from helpers import damage, save_refused

from genprobe.errors import CheckpointError, GenprobeWarning
from genprobe.runs.resume import load_state, save_state


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_a_damaged_state_is_named_and_not_loaded(tmp_path, how):
    path = tmp_path / "state.pt"
    save_state(path, {"step": 3, "weights": torch.arange(10_000, dtype=torch.float32)})
    assert load_state(path, "cpu", "starting over")["step"] == 3
    damage(path, how)  # flipped: a byte of the tensor, which torch.load alone would load
    damaged = path.read_bytes()
    expected = f"^{path} is damaged \\(.*\\): set aside as state.pt.damaged; starting over$"
    with pytest.warns(GenprobeWarning, match=expected):
        assert load_state(path, "cpu", "starting over") is None
    assert not path.exists() and (tmp_path / "state.pt.damaged").read_bytes() == damaged


def test_no_state_is_none(tmp_path):
    assert load_state(tmp_path / "state.pt", "cpu", "starting over") is None


def test_a_state_holding_other_objects_is_refused_in_one_line_and_kept(tmp_path):
    path = tmp_path / "state.pt"
    save_refused(path, step=3)
    with pytest.raises(CheckpointError) as raised:
        load_state(path, "cpu", "starting over")
    assert str(raised.value) == (
        f"{path}: not a checkpoint genprobe can load (a torch.save file of tensors and plain "
        "data); remove it and rerun: starting over"
    )  # not torch's traceback, which advises weights_only=False
    assert path.exists()  # intact: not damage, so not set aside


def test_the_same_state_is_the_same_bytes_wherever_it_is_written(tmp_path):
    """torch names the archive's root folder after the file it writes; a state is written
    through an open file, so the name of the temporary file it is renamed from is not in it."""
    state = {"step": 3, "weights": torch.arange(100, dtype=torch.float32), "history": [{"a": 1}]}
    first, second = tmp_path / "one" / "state.pt", tmp_path / "two" / "state.pt"
    save_state(first, state)
    save_state(second, state)
    assert first.read_bytes() == second.read_bytes()
    assert torch.equal(load_state(second, "cpu", "starting over")["weights"], state["weights"])
