"""SCAN: the grammar, its interpreter, and splits equal to the published files."""

import hashlib

import pytest

from genprobe.errors import ConfigError
from genprobe.tasks.scan import Scan, commands, interpret
from genprobe.tasks.tokens import encode_inputs, encode_outputs, input_lines, output_lines

# sha256 of the sorted lines ("IN: … OUT: …", joined by newlines) of each file of
# github.com/brendenlake/SCAN (commit c4b756c), taken while building: our splits must be the
# same multisets of lines (the add-primitive training files repeat the primitive).
PUBLISHED = {
    "all": ("tasks.txt", "345bff3c25864652f326ba1960aa515d156b63f45067ea57268f71d7362a2440"),
    "length_train": (
        "length_split/tasks_train_length.txt",
        "114e6bdb1575f27d8d6d4449081970cef4846b2ec89b260dc2a0e5297c3e75d5",
    ),
    "length_test": (
        "length_split/tasks_test_length.txt",
        "45bb5e5f0e0678da016725d880ba4349267b93262762a2c66f9b51b04535a2ce",
    ),
    "addprim_jump_train": (
        "add_prim_split/tasks_train_addprim_jump.txt",
        "1e5ab3357dc958267480a6012d3970953f35bb098a115b1754a1ad36d371b7cb",
    ),
    "addprim_jump_test": (
        "add_prim_split/tasks_test_addprim_jump.txt",
        "48956239771e67ded4d090164919ab79d21756218a3e94f9abc2cbe346c0cd1c",
    ),
    "addprim_turn_left_train": (
        "add_prim_split/tasks_train_addprim_turn_left.txt",
        "4f1ccb48ec39aed79ac69c8da9d2c8061b1bb8ea8199ab8931b6939068a3b626",
    ),
    "addprim_turn_left_test": (
        "add_prim_split/tasks_test_addprim_turn_left.txt",
        "81acae1af5137165debf8630986733b2581aea19cb98e32f4026bccce8042b09",
    ),
}


def lines(task: Scan, split: str, seed: int = 0) -> list[str]:
    examples = task.generate(split, task.split_spec(split).size, seed)
    inputs = input_lines(task.source_vocab, examples.src)
    outputs = output_lines(task.target_vocab, examples.tgt)
    return [f"IN: {i} OUT: {o}" for i, o in zip(inputs, outputs, strict=True)]


@pytest.mark.parametrize("split", PUBLISHED)
def test_splits_equal_the_published_files_as_multisets(split):
    text = "\n".join(sorted(lines(Scan(), split)))
    assert hashlib.sha256(text.encode()).hexdigest() == PUBLISHED[split][1], PUBLISHED[split][0]


def test_the_add_primitive_training_sets_repeat_the_primitive_to_a_tenth():
    train = lines(Scan(), "addprim_jump_train")
    assert train.count("IN: jump OUT: I_JUMP") == 1_467 == len(train) // 10


def test_the_simple_split_is_drawn_from_the_seed_with_the_published_sizes():
    task = Scan()
    train, test = set(lines(task, "simple_train")), set(lines(task, "simple_test"))
    assert (len(train), len(test)) == (16_728, 4_182)
    assert not train & test and len(train | test) == len(commands()) == 20_910
    assert set(lines(task, "simple_train", seed=1)) != train


def test_the_interpreter_on_the_readme_examples():
    examples = {
        "jump": "I_JUMP",
        "jump left": "I_TURN_LEFT I_JUMP",
        "jump around right": "I_TURN_RIGHT I_JUMP I_TURN_RIGHT I_JUMP I_TURN_RIGHT I_JUMP "
        "I_TURN_RIGHT I_JUMP",
        "turn left twice": "I_TURN_LEFT I_TURN_LEFT",
        "jump thrice": "I_JUMP I_JUMP I_JUMP",
        "jump opposite left and walk thrice": "I_TURN_LEFT I_TURN_LEFT I_JUMP I_WALK I_WALK I_WALK",
        "jump opposite left after walk around left": "I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK "
        "I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK I_TURN_LEFT I_TURN_LEFT I_JUMP",
    }
    for command, actions in examples.items():
        assert " ".join(interpret(command.split())) == actions
    for nonsense in ("turn", "jump twice twice", "left jump", "walk and", "and walk"):
        assert interpret(nonsense.split()) is None


def test_verify_rejects_what_is_not_a_command_and_wrong_actions():
    task = Scan()
    inputs = ["jump left", "turn", "walk twice"]
    src = encode_inputs(task.source_vocab, [(None, c.split()) for c in inputs], "test")
    out, length = encode_outputs(task.target_vocab, [["I_TURN_LEFT", "I_JUMP"], [], ["I_WALK"]])
    assert task.verify(src, out, length).tolist() == [True, False, False]
    assert task.length(src).tolist() == [2, 0, 2]  # actions, as Lake & Baroni measure length


def test_lengths_bound_the_outputs_and_an_unknown_split_names_the_nearest():
    task = Scan("length")
    assert task.max_output_length(9) == 48 and task.max_output_length(1) == 1
    test = task.generate("length_test", 3_920, 0)
    assert task.length(test.src).min() == 24 and (test.tgt >= 0).sum(axis=1).max() == 48
    assert task.suites() == ("length_test",) and task.train_split == "length_train"
    with pytest.raises(ConfigError, match="did you mean length_test"):
        task.split_spec("lenght_test")
    with pytest.raises(ConfigError, match=r"n must be <= 3,920"):
        task.generate("length_test", 4_000, 0)
    with pytest.raises(ConfigError, match="did you mean length"):
        Scan("lenght")


@pytest.mark.parametrize(
    ("command", "structures"),
    [
        ("walk", ()),
        ("turn left", ("turn left",)),
        ("jump around left twice", ("jump around left", "jump twice")),
        ("look opposite right thrice after run", ("look after run", "look opposite right",
                                                  "look thrice")),
        ("walk and run left", ("walk and run", "run left")),
    ],
)  # fmt: skip
def test_local_structures_are_an_action_with_each_modifier_and_a_conjunctions_actions(
    command, structures
):
    assert Scan().local_structures(command.split()) == structures
