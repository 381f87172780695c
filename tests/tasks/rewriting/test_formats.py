import numpy as np
import pytest

from genprobe.errors import DataFormatError
from genprobe.tasks.rewriting.formats import (
    read_inputs,
    read_pairs,
    read_tsv,
    write_srctgt,
    write_tsv,
)
from genprobe.tasks.rewriting.grammar import Grammar
from genprobe.tasks.rewriting.suites import generate
from genprobe.tasks.tokens import encode_outputs

G = Grammar()


def test_srctgt_round_trip(tmp_path):
    ex = generate("short", 50, seed=1)
    src_path, tgt_path = write_srctgt(tmp_path / "short", G, ex)
    src, outputs = read_pairs(src_path, tgt_path, G)
    assert np.array_equal(src, ex.src[:, : src.shape[1]])
    out, _ = encode_outputs(G.output_tokens, outputs)
    assert np.array_equal(out, ex.tgt[:, : out.shape[1]])
    assert np.array_equal(read_inputs(src_path, G), src)


def test_tsv_matches_the_machine_tasks_layout(tmp_path):
    ex = generate("long", 20, seed=1)
    path = write_tsv(tmp_path / "long.tsv", G, ex)
    first = path.read_text().splitlines()[0].split("\t")
    n = len(first[0].split()) - 1
    assert first[0].endswith(" .") and len(first[1].split()) == 3 * n
    assert first[2].split() == [str(i // 3) for i in range(3 * n)] + [str(n)]
    src, _ = read_tsv(path, G)
    assert np.array_equal(src, ex.src)
    assert np.array_equal(read_inputs(path, G), ex.src)


def test_the_authors_tsv_line_parses(tmp_path):
    path = tmp_path / "a.tsv"
    path.write_text(
        "D FS E .\tA4_1 B4_1 C4_1 B31_2 C31_1 A31_1 A5_2 C5_2 B5_1\t0 0 0 1 1 1 2 2 2 3\n"
    )
    src, outputs = read_tsv(path, G)
    assert src.tolist() == [[4, 31, 5]] and len(outputs[0]) == 9


def test_malformed_files_name_file_and_line(tmp_path):
    src = tmp_path / "x.src"
    tgt = tmp_path / "x.tgt"
    src.write_text("A B\nC Q\n")
    tgt.write_text("A1_1 B1_1 C1_1 A2_1 B2_1 C2_1\n")
    with pytest.raises(DataFormatError, match=r"x.tgt.*1 lines.*2"):
        read_pairs(src, tgt, G)
    src.write_text("A B\nC S\n")
    tgt.write_text("a\nb\n")
    with pytest.raises(DataFormatError, match=r"x.src:2: unknown input token 'S'"):
        read_pairs(src, tgt, G)
    src.write_text("A\n\nB\n")
    with pytest.raises(DataFormatError, match=r"x.src:2: empty input"):
        read_inputs(src, G)
    (tmp_path / "bad.tsv").write_text("A .\n")
    with pytest.raises(DataFormatError, match=r"bad.tsv:1: expected 2 or 3"):
        read_tsv(tmp_path / "bad.tsv", G)
    with pytest.raises(DataFormatError, match="no such file"):
        read_inputs(tmp_path / "missing.src", G)


def test_written_files_get_the_usual_permissions(tmp_path):
    import os
    import stat

    path = write_tsv(tmp_path / "p.tsv", G, generate("short", 3, seed=1))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_parallel_files_pair_by_line_and_refuse_a_line_too_long(tmp_path):
    from genprobe.tasks.lines import MAX_LINE_BYTES

    src, tgt = tmp_path / "a.src", tmp_path / "a.tgt"
    src.write_text("A\nB C\n")
    tgt.write_text("\nx y\n")
    inputs, outputs = read_pairs(src, tgt, G)
    assert inputs.shape == (2, 2) and outputs == [[], ["x", "y"]]
    src.write_text("A\n" + "A " * MAX_LINE_BYTES + "\n")
    with pytest.raises(DataFormatError, match=f"{src}:2: longer than 1,048,576 bytes"):
        read_pairs(src, tgt, G)
