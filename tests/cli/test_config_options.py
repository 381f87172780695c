"""Options written by a config (`cli.config_options`): one per field, named, typed and
defaulted by the field, its help the field's comment; a command's `--help` shows what the
config declares, so it cannot drift from it."""

import re
from dataclasses import dataclass, fields
from typing import ClassVar

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from genprobe.cli import app
from genprobe.cli.config_options import (
    FROM_CONFIG,
    config_options,
    field_comments,
    with_config_options,
)
from genprobe.cli.spelling import option_spelling
from genprobe.training.config import LEARNING_RATES, TrainConfig


@dataclass(frozen=True)
class Shape:
    """Not any field's help."""

    LIMIT: ClassVar[int] = 3  # not a field
    # Two lines above
    # the field,
    width: int = 8  # then its own.
    depth: int | None = None  # With `width`: deeper; `other` stays.
    name: str = "a#b"  # Its own only.
    # The default of rate follows from width.
    rate: float = 0.5
    tied: bool = False  # Tie the weights.

    @classmethod
    def sized(cls, rate: float | None = None, **settings) -> "Shape":
        return cls(rate=settings.get("width", 8) / 16 if rate is None else rate, **settings)


def test_a_fields_help_is_the_comment_above_it_and_on_its_line():
    assert field_comments(Shape) == {
        "width": "Two lines above the field, then its own.",
        "depth": "With `width`: deeper; `other` stays.",
        "name": "Its own only.",
        "rate": "The default of rate follows from width.",
        "tied": "Tie the weights.",
    }


def test_an_option_is_named_typed_defaulted_and_helped_by_its_field():
    options = {p.name: p for p in config_options(Shape, derived={"rate": "width / 16"})}
    assert list(options) == ["width", "depth", "name", "rate", "tied"]
    width, depth, rate = options["width"], options["depth"], options["rate"]
    assert (width.annotation, width.default.default, width.default.show_default) == (int, 8, True)
    assert depth.default.help == "With --width: deeper; `other` stays."  # a field as its option
    assert depth.annotation == int | None
    assert (rate.default.default, rate.default.show_default) == (None, "width / 16")


def test_a_field_without_a_comment_makes_no_option():
    @dataclass(frozen=True)
    class Silent:
        size: int = 1

    with pytest.raises(TypeError, match=r"Silent\.size needs a default and a comment"):
        config_options(Silent)


def _shape_command(**decorator) -> typer.Typer:
    got = {}

    @with_config_options(Shape, "shape", **decorator)
    def build(label: str = typer.Option("x"), shape: Shape = FROM_CONFIG) -> None:
        got.update(label=label, shape=shape)

    command = typer.Typer(rich_markup_mode=None)
    command.command()(build)
    command.got = got  # type: ignore[attr-defined]
    return command


def test_a_command_receives_its_configs_options_as_the_config():
    command = _shape_command(flags={"tied": "--tied/--untied"})
    result = CliRunner().invoke(command, ["--width", "4", "--untied", "--label", "y"])
    assert result.exit_code == 0, result.output
    assert command.got == {"label": "y", "shape": Shape(width=4, tied=False)}
    help_text = CliRunner().invoke(command, ["--help"]).output
    assert "--tied / --untied" in help_text and "Two lines above the field" in help_text


def test_a_derived_default_is_left_to_the_config_where_it_is_not_given():
    command = _shape_command(build=Shape.sized, derived={"rate": "width / 16"})
    assert CliRunner().invoke(command, ["--width", "4"]).exit_code == 0
    assert command.got["shape"].rate == 0.25
    assert CliRunner().invoke(command, ["--width", "4", "--rate", "0.1"]).exit_code == 0
    assert command.got["shape"].rate == 0.1


def test_given_only_passes_the_options_given_even_at_their_defaults_and_omit_drops_fields():
    command = _shape_command(build=dict, given_only=True, omit=("name",))
    assert CliRunner().invoke(command, ["--width", "8", "--tied"]).exit_code == 0
    assert command.got["shape"] == {"width": 8, "tied": True}  # 8 is width's default
    assert CliRunner().invoke(command, []).exit_code == 0
    assert command.got["shape"] == {}
    help_text = CliRunner().invoke(command, ["--help"]).output
    assert "--name" not in help_text and "[default: 8]" in help_text


@dataclass(frozen=True)
class Listing:
    names: tuple[str, ...] = ("a", "b")  # Names.
    sizes: tuple[int, ...] | None = None  # Sizes.


def test_a_tuple_field_is_one_comma_separated_or_repeated_option_its_default_where_not_given():
    got = {}

    @with_config_options(Listing, "listing")
    def build(listing: Listing = FROM_CONFIG) -> None:
        got["listing"] = listing

    command = typer.Typer(rich_markup_mode=None)
    command.command()(build)
    assert CliRunner().invoke(command, ["--sizes", "3, 4,"]).exit_code == 0
    assert got["listing"] == Listing(sizes=(3, 4))
    assert CliRunner().invoke(command, ["--names", ""]).exit_code == 0
    assert got["listing"] == Listing(names=())
    assert CliRunner().invoke(command, ["--sizes", "3", "--sizes", "4,5"]).exit_code == 0
    assert got["listing"] == Listing(sizes=(3, 4, 5))  # repeated: `--sizes 3 4` spread
    refused = CliRunner().invoke(command, ["--sizes", "3,x"])
    assert refused.exit_code != 0 and "--sizes must be an integer. Got 'x'" in str(
        refused.exception
    )
    help_text = CliRunner().invoke(command, ["--help"]).output
    assert "Names. Comma-separated." in help_text and "[default: (a,b)]" in help_text


GENERATION = "genprobe.tasks.integration.generation_config"
VERIFIER = "genprobe.tasks.integration.verifier_config:VerifierConfig"
LANGUAGE_MODEL = "genprobe.studies.seed_sensitivity.language_model:LanguageModelConfig"


def _params(command: str) -> dict:
    found = typer.main.get_command(app)
    for name in command.split():
        found = found.commands[name]
    return {p.name: p for p in found.params}


def _as_help(config: type, comment: str) -> str:
    """A field's comment as its option's help: each field in backticks as its option."""
    flags = getattr(config, "FLAGS", {})

    def option(match: re.Match) -> str:
        name = match[1]
        return flags.get(name, "--" + name.replace("_", "-")).split("/")[0]

    return re.sub(r"`(\w+)`", option, comment)


@pytest.mark.parametrize(
    ("command", "config", "own"),
    [
        ("probe", "genprobe.studies.probe.config:ProbeConfig",
         {"task_option", "inputs", "search_where"}),
        ("search", "genprobe.studies.search.config:SearchConfig", {"task_option", "against"}),
        ("integration sagga", "genprobe.studies.search.sagga.config:SaggaConfig", {"basis_file"}),
        # `integration generate`: a run's settings, its generator's and the generator's trees'
        ("integration generate", f"{GENERATION}:GenerationConfig", set()),
        ("integration generate", f"{GENERATION}:GeneratorConfig", set()),
        ("integration generate", f"{GENERATION}:TreeSettings", {"operators"}),
        # `integration generate` and `mix`: how the pairs are written
        ("integration generate", f"{GENERATION}:DatasetFiles", set()),
        ("integration mix", f"{GENERATION}:DatasetFiles", set()),
        ("integration verify", VERIFIER, set()),
        ("integration brittleness", "genprobe.studies.brittleness.config:BrittlenessConfig",
         set()),
        ("evaluate", LANGUAGE_MODEL, {"task"}),
        # the seeds as counts, the task by name: options of the command's own
        ("sweep", "genprobe.studies.seed_sensitivity.config:SweepConfig",
         {"seeds", "task", "init_seeds", "order_seeds"}),  # --task: a name, the config a task
    ],
)  # fmt: skip
def test_the_commands_options_are_their_configs_fields(command, config, own):
    from genprobe.studies.study import load_function

    cls = load_function(config)
    params = _params(command)
    derived = getattr(cls, "DERIVED_DEFAULTS", {})
    comments = field_comments(cls)
    for field in fields(cls):
        if field.name in getattr(cls, "NOT_OPTIONS", ()):
            assert field.name not in params or field.name in own
            continue
        option = params[field.name]
        assert option.help.startswith(_as_help(cls, comments[field.name]))  # its comment
        if field.name in derived:
            assert (option.default, option.show_default) == (None, derived[field.name])
        elif isinstance(field.default, tuple):
            assert option.default is None  # given comma-separated, else the field's default
        else:
            assert option.default == field.default


MODEL = "genprobe.cli.model_options:ModelOptions"


@pytest.mark.parametrize(
    ("command", "configs", "own"),
    [
        ("integration verify", [VERIFIER], {"input_path", "as_json", "confirm"}),
        ("integration mix", [f"{GENERATION}:DatasetFiles"], {"parts", "out"}),
        ("integration generate",
         [f"{GENERATION}:{name}" for name in
          ("TreeSettings", "GeneratorConfig", "GenerationConfig", "DatasetFiles")],
         {"out", "operators", "workers", "start_method", "backend", "ray_address"}),
        # the model-option group's --model, --batch-size and --device
        ("integration score", [MODEL], {"input_path", "as_json"}),
        # the seeds as counts, the task and architecture by name and their options, the grid,
        # where it runs and what it reports
        ("sweep",
         ["genprobe.training.config:TrainConfig", "genprobe.cli.sweep:ModelFlags",
          "genprobe.studies.seed_sensitivity.config:SweepConfig"],
         {"out", "task", "task_option", "seeds", "first_seed", "init_seeds", "order_seeds",
          "full_batch", "arch", "model_option", "settings", "vary", "device", "workers",
          "backend", "ray_address", "threshold", "report", "as_json"}),
        # a sweep's run directory, or a language model (its group, its task and its suites)
        ("evaluate", [MODEL, LANGUAGE_MODEL],
         {"run_dir", "input", "name", "task", "task_option", "out", "threshold", "report",
          "as_json"}),
    ],
)  # fmt: skip
def test_a_commands_own_options_are_those_no_config_owns(command, configs, own):
    from genprobe.studies.study import load_function

    owned = set()  # the options written by a config (its fields but those it gives no option)
    for config in map(load_function, configs):
        owned |= {f.name for f in fields(config)} - set(getattr(config, "NOT_OPTIONS", ()))
    assert set(_params(command)) - owned == own


def test_a_field_of_a_few_words_is_given_as_a_word_and_refused_naming_its_option():
    import enum
    from typing import Literal

    class Policy(str, enum.Enum):
        STRICT = "strict"
        GENEROUS = "generous"

    @dataclass(frozen=True)
    class Worded:
        policy: Policy = Policy.STRICT  # How a timeout counts.
        method: Literal["fork", "spawn"] | None = None  # How it starts.

    got = {}

    @with_config_options(Worded, "worded")
    def build(worded: Worded = FROM_CONFIG) -> None:
        got["worded"] = worded

    command = typer.Typer(rich_markup_mode=None)
    command.command()(build)
    assert CliRunner().invoke(command, []).exit_code == 0
    assert got["worded"] == Worded() and got["worded"].policy is Policy.STRICT
    assert CliRunner().invoke(command, ["--policy", "generous", "--method", "spawn"]).exit_code == 0
    assert got["worded"] == Worded(Policy.GENEROUS, "spawn")
    assert got["worded"].policy is Policy.GENEROUS
    for args, message in [
        (["--policy", "lenient"], "--policy must be strict or generous. Got 'lenient' instead."),
        (["--method", "fork2"], "--method must be fork or spawn. Got 'fork2' instead."),
    ]:
        refused = CliRunner().invoke(command, args)
        assert refused.exit_code != 0 and str(refused.exception) == message
    assert "[default: strict]" in CliRunner().invoke(command, ["--help"]).output


def test_a_command_and_its_config_cannot_share_a_name():
    with pytest.raises(TypeError, match="both have"):

        @with_config_options(Shape, "shape")
        def build(width: int = 1, shape: Shape = FROM_CONFIG) -> None: ...


def _sweep_options() -> dict:
    command = typer.main.get_command(app).commands["sweep"]
    return {param.name: param for param in command.params}


def test_the_sweeps_training_options_are_train_configs_fields():
    options, comments = _sweep_options(), field_comments(TrainConfig)
    for field in fields(TrainConfig):
        option, comment = options[field.name], comments[field.name]
        assert option.opts == ["--" + field.name.replace("_", "-")]
        as_options = re.sub(r"`(\w+)`", lambda m: "--" + m[1].replace("_", "-"), comment)
        assert option.help == as_options
        if field.name == "lr":  # the optimizer's, which --help names with each rate
            assert option.default is None
            assert option.show_default == "the optimizer's: sgd 0.125, adam 0.001, adamw 0.001"
        else:
            assert option.default == field.default


def test_a_sweeps_learning_rate_is_its_optimizers_unless_given():
    for optimizer, lr in LEARNING_RATES.items():
        assert TrainConfig.for_optimizer(optimizer).lr == lr
    assert TrainConfig.for_optimizer("adam", lr=0.5).lr == 0.5
    assert TrainConfig.for_optimizer(batch_size=8) == TrainConfig(batch_size=8)


def test_a_config_error_is_named_as_its_option():
    spell = option_spelling(typer.main.get_command(app).commands["sweep"])
    assert [spell(k) for k in ("train.eval_every", "max_grad_norm", "hidden")] == [
        "--eval-every", "--max-grad-norm", "--hidden",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "args, message",
    [
        (["--hidden", "8", "--model-option", "hidden=8"],
         "model option hidden is given twice: as --hidden 8 and as --model-option hidden=8"),
        (["--arch", "transformer", "--emb", "16", "--hidden", "32"],
         "model option width is given twice: as --emb 16 and as --hidden 32"),
        (["--arch", "transformer", "--hidden", "16", "--model-option", "width=16"],
         "model option width is given twice: as --hidden 16 and as --model-option width=16"),
        (["--arch", "transformer", "--encoder-decoder", "--model-option", "decoder_only=true"],
         "model option decoder_only is given twice: as --encoder-decoder and as --model-option"),
    ],
)  # fmt: skip
def test_a_model_option_set_by_its_old_flag_and_again_is_refused(cli, tmp_path, args, message):
    out = tmp_path / "run"
    code, _, err = cli("sweep", "--task", "reverse_string", *args, "--out", str(out))
    assert code == 2 and err.startswith(f"genprobe: error: {message}") and err.count("\n") == 1
    assert not out.exists()


def test_old_flags_that_agree_set_their_option_once(cli, monkeypatch, tmp_path):
    made = []
    monkeypatch.setattr(
        "genprobe.studies.seed_sensitivity.run_sweep",
        lambda config, out, *args: made.append(config) or out,
    )
    monkeypatch.setattr("genprobe.cli.sweep.finish", lambda *args: None)
    args = ["--arch", "transformer", "--emb", "16", "--hidden", "16", "--encoder-decoder"]
    code, _, err = cli("sweep", "--task", "reverse_string", *args, "--out", str(tmp_path / "r"))
    assert code == 0, err
    options = made[0].model.options()
    assert options["width"] == 16 and options["decoder_only"] is False
