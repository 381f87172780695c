"""Options written by a config: a command takes one option per field of a config dataclass,
named after the field (`--max-epochs` for `max_epochs`), of its type, defaulting to its
default, with the field's comment as its help (the comment lines just above the field and the
one on its line, read from the source once; a field in backticks is shown as its option). So
`--help` cannot drift from the config: there is nothing to copy.

A field whose default follows from other settings (a learning rate from its optimizer) is
named in `derived` with that default in words: its option defaults to None (not given), and
`--help` shows the words. A field holding a tuple (`families: tuple[str, ...]`) is given as
one comma-separated option (`--families operand_swap,carry_chain`), or repeated (`--k 1 --k
10`, what the command line makes of `--k 1 10`: `genprobe.cli._spread_values`). `flags` names
an option otherwise than its field (`--decoder-only/--encoder-decoder`); a field of `omit` has
none. Each of the three, where a command gives none, is what the config declares:
`DERIVED_DEFAULTS`, `FLAGS`, `NOT_OPTIONS`. A field taking one of a few words (an `enum.Enum`,
a `Literal`) is given as the word; one outside them is refused naming the option (`--policy
must be strict or generous`), as a value the config refuses is. With `given_only`, the
command receives only the options given on its command line, to lay over a preset's settings.

    @with_config_options(TrainConfig, "train")
    def sweep(out: Path = typer.Option(...), train: TrainConfig = FROM_CONFIG, ...) -> None:
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import re
import textwrap
import types
import typing
from collections.abc import Callable, Collection, Mapping
from dataclasses import MISSING, fields
from typing import Any

import typer

from genprobe.options import choices, convert, field_types

# The default of a command's parameter that `with_config_options` replaces by the options.
FROM_CONFIG: Any = object()
CONTEXT = "config_options_context"  # the wrapper's parameter typer gives the click context


@functools.cache
def field_comments(config: type) -> dict[str, str]:
    """Each field of the dataclass `config` that has a comment → that comment: the comment
    lines just above the field, then the one on its line, as one line of text."""
    source = textwrap.dedent(_class_source(config))
    lines = source.splitlines()
    (declaration,) = ast.parse(source).body
    names = {field.name for field in fields(config)}
    found = {}
    for node in declaration.body:
        if not (isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) in names):
            continue
        comment, above = [], node.lineno - 2  # the line above, counted from 0
        while above >= 0 and lines[above].lstrip().startswith("#"):
            comment.insert(0, lines[above])
            above -= 1
        # after the field's last token, only a comment can follow on its line
        after = lines[node.end_lineno - 1].encode()[node.end_col_offset :].decode().strip()
        comment += [after] if after else []
        if comment:
            found[node.target.id] = " ".join(line.strip().lstrip("#").strip() for line in comment)
    return found


def _class_source(config: type) -> str:
    """The lines declaring the class `config`, the first of its name in its module
    (`inspect.getsource` without its parse of the whole module, which would take a few
    milliseconds of every command's start)."""
    lines = linecache.getlines(inspect.getsourcefile(config) or "")
    heading = re.compile(rf"(\s*)class {config.__name__}\b")
    start = next(i for i, line in enumerate(lines) if heading.match(line))
    indent = len(heading.match(lines[start]).group(1))
    end = start + 1
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
    ):
        end += 1
    return "".join(lines[start:end])


def config_options(
    config: type,
    derived: Mapping[str, str] | None = None,
    flags: Mapping[str, str] | None = None,
    omit: Collection[str] | None = None,
) -> list[inspect.Parameter]:
    """The options of the dataclass `config`'s fields, as a command's keyword parameters
    (typer builds the click options from them).

    Raises:
        TypeError: a field without a default or without a comment (its help).
    """
    derived, flags, omit = _declared(config, derived, flags, omit)
    hints, comments = field_types(config), field_comments(config)
    names = {name: flags.get(name, "--" + name.replace("_", "-")) for name in hints}
    parameters = []
    for field in fields(config):
        if not field.init or field.name in omit:
            continue
        if field.default is MISSING or field.name not in comments:
            raise TypeError(f"{config.__name__}.{field.name} needs a default and a comment")
        shown = derived.get(field.name)
        annotation, default = hints[field.name], field.default
        help = _spelled(comments[field.name], names)
        metavar = None
        if (item := _item(annotation)) is not None:  # a tuple: comma-separated, or repeated
            annotation, shown = list[str], shown or ",".join(map(str, default or ())) or "none"
            help += " Comma-separated."
            metavar = f"<{item.__name__}>…"
        elif choices(annotation) is not None:  # a word, checked by `with_config_options`
            annotation = str | None
            default = getattr(default, "value", default)
        option = typer.Option(
            None if shown else default,
            *([flags[field.name]] if field.name in flags else []),
            help=help,
            show_default=shown or True,
            metavar=metavar,
        )
        keyword = inspect.Parameter.KEYWORD_ONLY
        parameters.append(
            inspect.Parameter(field.name, keyword, default=option, annotation=annotation)
        )
    return parameters


def _declared(
    config: type,
    derived: Mapping[str, str] | None = None,
    flags: Mapping[str, str] | None = None,
    omit: Collection[str] | None = None,
) -> tuple[Mapping[str, str], Mapping[str, str], Collection[str]]:
    """`derived`, `flags` and `omit`, each where not given as `config` declares it:
    `DERIVED_DEFAULTS`, `FLAGS` and `NOT_OPTIONS` (none where it declares none)."""
    return (
        getattr(config, "DERIVED_DEFAULTS", {}) if derived is None else derived,
        getattr(config, "FLAGS", {}) if flags is None else flags,
        getattr(config, "NOT_OPTIONS", ()) if omit is None else omit,
    )


def _item(hint: Any) -> Any:
    """X of a field of type `tuple[X, ...]` (or `tuple[X, ...] | None`); None for any other."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(hint) is tuple:
        item, *rest = typing.get_args(hint)
        return item if rest == [Ellipsis] else None
    return None


def _listed(text: str, option: str, item: Any) -> tuple[Any, ...]:
    """Comma-separated `text` as a tuple of `item`s (blanks dropped)."""
    return tuple(convert(option, part.strip(), item) for part in text.split(",") if part.strip())


def _spelled(help: str, names: Mapping[str, str]) -> str:
    """`help` with each field in backticks as its option: `eval_every` → --eval-every."""

    def option(match: re.Match) -> str:
        name = match.group(1)
        return names[name].split("/")[0] if name in names else match.group(0)

    return re.sub(r"`(\w+)`", option, help)


def with_config_options(
    config: type,
    name: str,
    build: Callable[..., Any] | None = None,
    derived: Mapping[str, str] | None = None,
    flags: Mapping[str, str] | None = None,
    omit: Collection[str] | None = None,
    given_only: bool = False,
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the options of `config`'s fields (`config_options`) where its parameter
    `name` (its default `FROM_CONFIG`) stands; it receives them as that one argument, built
    by `build(**values)` (default: `config` itself), so a value the config refuses is refused
    before the command runs; with `given_only`, `values` are those given on the command line
    (not those left at their defaults)."""
    derived, flags, omit = _declared(config, derived, flags, omit)
    options = config_options(config, derived, flags, omit)
    build = build or config
    hints = field_types(config)
    # each option as errors name it, and each tuple field's: its items' type and that name
    spelled = {
        o.name: flags.get(o.name, "--" + o.name.replace("_", "-")).split("/")[0] for o in options
    }
    listed = {
        option.name: (item, spelled[option.name])
        for option in options
        if (item := _item(hints[option.name])) is not None
    }
    # each field taking one of a few words: its type
    worded = {o.name: hints[o.name] for o in options if choices(hints[o.name]) is not None}

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())
        at = [parameter.name for parameter in own].index(name)
        if own[at].default is not FROM_CONFIG:
            raise TypeError(f"{command.__name__}'s {name} must default to FROM_CONFIG")
        clash = {p.name for p in own} & {p.name for p in options}
        if clash:
            raise TypeError(f"{command.__name__} and {config.__name__} both have {clash}")

        @functools.wraps(command)
        def wrapper(**given: Any) -> None:
            values = {option.name: given.pop(option.name) for option in options}
            for field, (item, option) in listed.items():
                if values.get(field) is None:  # not given: the field's default
                    values.pop(field, None)
                else:  # each time it is given, comma-separated
                    values[field] = _listed(",".join(values[field]), option, item)
            for field, kind in worded.items():
                if values.get(field) is not None:
                    values[field] = convert(spelled[field], values[field], kind)
            if given_only:  # typer's own click's ParameterSource, by name
                source = given.pop(CONTEXT).get_parameter_source
                values = {k: v for k, v in values.items() if source(k).name != "DEFAULT"}
            command(**{name: build(**values)}, **given)

        keyword = inspect.Parameter.KEYWORD_ONLY
        parameters = [p.replace(kind=keyword) for p in [*own[:at], *options, *own[at + 1 :]]]
        if given_only:
            parameters.append(inspect.Parameter(CONTEXT, keyword, annotation=typer.Context))
        wrapper.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        return wrapper

    return decorate
