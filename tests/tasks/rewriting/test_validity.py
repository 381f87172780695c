import numpy as np

from genprobe.tasks.rewriting.grammar import Grammar
from genprobe.tasks.rewriting.validity import valid_outputs
from genprobe.tasks.tokens import encode_outputs

G = Grammar()


def judge(inputs: list[str], outputs: list[str]) -> list[bool]:
    ids = {s: i for i, s in enumerate(G.symbols, start=1)}
    rows = [line.split() for line in inputs]
    src = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
    for r, tokens in enumerate(rows):
        src[r, : len(tokens)] = [ids[t] for t in tokens]
    out, length = encode_outputs(G.output_tokens, [line.split() for line in outputs])
    return valid_outputs(G, src, out, length).tolist()


def test_authors_examples_are_valid():
    assert judge(
        ["D FS E", "O O O", "GS OS Z AS W G NS"],
        [
            "A4_1 B4_1 C4_1 B31_2 C31_1 A31_1 A5_2 C5_2 B5_1",
            "A15_2 C15_1 B15_2 C15_1 A15_2 B15_1 C15_2 B15_1 A15_1",
            "C32_2 A32_1 B32_2 B40_2 C40_2 A40_2 A25_2 C25_1 B25_2 C26_1 A26_1 B26_1 "
            "A22_1 B22_2 C22_1 B7_1 A7_2 C7_1 C39_2 A39_1 B39_1",
        ],
    ) == [True, True, True]


def test_each_way_to_break_the_rule():
    cases = {
        "A1_1 A1_2 A1_1": False,  # letter A three times (the published checker misses this)
        "A1_1 B1_2": False,  # too short
        "A1_1 B1_2 C1_1 A1_1": False,  # too long
        "A1_1 B2_2 C1_1": False,  # wrong id
        "A1_1 B1_2 <eos>": False,  # special token inside
        "A1_1 B1_2 banana": False,  # junk
        "A1_1 B1_2 C1_1_": False,  # almost a token
        "": False,  # empty
        "C1_2 A1_2 B1_1": True,  # any order, any variants
    }
    assert judge(["A"] * len(cases), list(cases)) == list(cases.values())


def test_groups_must_follow_input_order():
    assert judge(
        ["A B"] * 2, ["A1_1 B1_1 C1_1 A2_1 B2_1 C2_1", "A2_1 B2_1 C2_1 A1_1 B1_1 C1_1"]
    ) == [True, False]


def test_output_indices_out_of_range_are_invalid_not_a_crash():
    src = np.array([[1, 2]])
    for bad in (-7, 240, 10**9):
        out = np.array([[0, 2, 4, 6, 8, bad]])
        assert valid_outputs(G, src, out, np.array([6])).tolist() == [False]


def test_wide_outputs_and_padding_widths_do_not_matter():
    src = np.array([[3, 0, 0]])
    out = np.array([[12, 14, 16, 5, 5, 5, 5, 5, 5, 5, 5]])  # A3_1 B3_1 C3_1 then junk past the end
    assert valid_outputs(G, src, out, np.array([3])).tolist() == [True]
    assert valid_outputs(G, src, out, np.array([4])).tolist() == [False]
