"""Hostile input files for every reader of lines: a line too long to hold, JSON nested too
deep, bytes that are not UTF-8. Each is one line naming the file and line, exit 2, before
anything large is allocated."""

import tracemalloc

import pytest

from genprobe.errors import DataFormatError
from genprobe.tasks.lines import MAX_LINE_BYTES, json_lines, text_lines

GOOD = '{"input": "a b", "output": "b a"}\n'


def test_a_line_longer_than_any_input_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_text(GOOD + '{"input": "' + "a " * (4 * MAX_LINE_BYTES) + '"}\n')
    tracemalloc.start()
    with pytest.raises(DataFormatError, match=f"{path}:2: longer than 1,048,576 bytes"):
        json_lines(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3 * MAX_LINE_BYTES  # the file is 8 MiB: never held whole


def test_json_nested_too_deep_is_named_by_its_line(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(GOOD + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(DataFormatError, match=f"{path}:2: JSON nested too deeply to read"):
        json_lines(path)


def test_bytes_that_are_not_utf8_are_named_by_line_and_byte(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"first\n\nsecond caf\xe9\n")
    with pytest.raises(DataFormatError, match=rf"{path}:3: not UTF-8 text \(.* at byte offset 17 "):
        text_lines(path)


def test_lines_keep_their_numbers_and_lose_their_line_ends(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"one\r\n\r\n  \nfour")
    assert text_lines(path) == [(1, "one"), (4, "four")]


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000, ":1: JSON nested too deeply to read"),
        ('{"input": "' + "a " * MAX_LINE_BYTES + '"}', ":1: longer than 1,048,576 bytes"),
    ],
)
def test_task_check_of_a_hostile_file_is_one_line_and_exit_2(cli, tmp_path, text, message):
    path = tmp_path / "hostile.jsonl"
    path.write_text(text + "\n")
    code, out, err = cli("task", "check", "reverse_string", "--input", str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"genprobe: error: {path}{message}") and len(err.splitlines()) == 1


def test_an_input_longer_than_the_model_takes_is_named_before_it_is_encoded(tmp_path, monkeypatch):
    from genprobe.tasks import files
    from genprobe.tasks.registry import load_task

    path = tmp_path / "long.jsonl"
    path.write_text('{"input": "0 1"}\n\n{"input": "' + " ".join("01" * 20) + '"}\n')
    task = load_task("reverse_string")
    assert files.read_examples(path, task, outputs=False, longest=40).src.shape == (2, 40)
    monkeypatch.setattr(files, "encode_inputs", None)  # never reached
    with pytest.raises(DataFormatError) as refused:
        files.read_examples(path, task, outputs=False, longest=16)
    assert str(refused.value) == (
        f"{path}:3: input of 40 tokens, longer than the 16 the model can take"
    )


def test_one_input_far_longer_than_the_rest_is_named_before_the_padded_array(tmp_path):
    from genprobe.tasks import files
    from genprobe.tasks.registry import load_task
    from genprobe.tasks.tokens import MAX_PADDED_IDS

    path = tmp_path / "padded.jsonl"
    width = MAX_PADDED_IDS // 1_000 + 1  # 268,436 tokens: a line of 537 KB
    path.write_text(GOOD * 999 + '{"input": "' + "a " * width + '", "output": "a"}\n')
    tracemalloc.start()
    with pytest.raises(DataFormatError) as refused:
        files.read_examples(path, load_task("reverse_string"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert str(refused.value).startswith(
        f"{path}:1000: input of {width:,} tokens: the file's 1,000 inputs padded to it would "
        f"hold {1_000 * width:,} ids, more than the {MAX_PADDED_IDS:,} genprobe holds at once"
    )
    assert peak < 100 * 2**20  # the padded array would be 2 GiB
