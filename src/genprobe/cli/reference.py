"""The command reference, docs/commands.md, written from the command line itself so it cannot
drift from it: every command's usage, help text and options (name, type, default, help), read
from the click commands that typer builds (never from `--help` output, so no terminal width or
colour enters it).

    python -m genprobe.cli.reference docs/commands.md   # rewrite the page
    python -m genprobe.cli.reference                    # print it

tests/test_docs.py regenerates the page and fails when the committed one differs.
"""

from __future__ import annotations

import enum
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
import typer.main

REGENERATE = "python -m genprobe.cli.reference docs/commands.md"
PROGRAM = "genprobe"


def reference() -> str:
    """docs/commands.md as Markdown."""
    from genprobe.cli import app

    root = typer.main.get_command(app)
    commands = list(_walk(root, typer.Context(root, info_name=PROGRAM)))
    lines = [
        f"<!-- Generated from the command line by `{REGENERATE}`; do not edit by hand. -->",
        "",
        "# Command reference",
        "",
        "Every `genprobe` command with its usage, help and options, as `--help` gives them "
        "(every command takes `--help`). "
        f"{_multi_value()} take several values after one flag (`--k 1 10 50`) as well as "
        "one per flag. A user error (a bad argument, a malformed file, a run directory made "
        "by another config) prints one line naming the problem and exits with code 2.",
        "",
    ]
    for _, ctx in commands:
        depth = ctx.command_path.count(" ")
        indent = "  " * max(depth - 1, 0)
        lines.append(f"{indent}- [`{ctx.command_path}`](#{_slug(ctx.command_path)})")
    for command, ctx in commands:
        lines += ["", *_section(command, ctx)]
    return "\n".join(lines) + "\n"


def _multi_value() -> str:
    from genprobe.cli import MULTI_VALUE

    names = [f"`{name}`" for name in MULTI_VALUE]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _walk(command: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    """Each command with its context, a group before its commands, in the order `--help`
    lists them."""
    if getattr(command, "hidden", False):
        return
    yield command, ctx
    for name in getattr(command, "list_commands", lambda _: [])(ctx):
        sub = command.get_command(ctx, name)
        if sub is not None:
            yield from _walk(sub, typer.Context(sub, info_name=name, parent=ctx))


def _section(command: Any, ctx: Any) -> list[str]:
    usage = " ".join([ctx.command_path, *_usage(command)])
    lines = [f"## `{ctx.command_path}`", "", f"    {usage}", ""]
    help_text = _help(command)
    if help_text:
        lines += [_escape(paragraph) + "\n" for paragraph in help_text]
    subcommands = [
        (name, sub)
        for name in getattr(command, "list_commands", lambda _: [])(ctx)
        if (sub := command.get_command(ctx, name)) is not None and not sub.hidden
    ]
    if subcommands:
        lines += ["| command | what it does |", "|---|---|"]
        for name, sub in subcommands:
            path = f"{ctx.command_path} {name}"
            summary = _cell(sub.get_short_help_str(limit=sys.maxsize))
            lines.append(f"| [`{name}`](#{_slug(path)}) | {summary} |")
        lines.append("")
    rows = [_row(param, ctx) for param in command.params if not getattr(param, "hidden", False)]
    if rows:
        lines += ["| option | type | default | help |", "|---|---|---|---|", *rows, ""]
    return lines[:-1] if lines[-1] == "" else lines


def _usage(command: Any) -> list[str]:
    """`[OPTIONS] RUN_DIR`, `[OPTIONS] COMMAND [ARGS]...` (every command takes `--help`): the
    same on every typer version."""
    pieces = ["[OPTIONS]"]
    for param in command.params:
        if param.param_type_name == "argument" and not getattr(param, "hidden", False):
            piece = _argument_name(param) + ("..." if param.nargs == -1 else "")
            pieces.append(piece if param.required else f"[{piece}]")
    if hasattr(command, "list_commands"):
        pieces.append("COMMAND [ARGS]...")
    return pieces


def _argument_name(param: Any) -> str:
    return (param.metavar or param.name).upper()


def _help(command: Any) -> list[str]:
    """The command's help as paragraphs (click's `\\f` ends what help shows)."""
    text = inspect.cleandoc(command.help or "").split("\f")[0]
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def _row(param: Any, ctx: Any) -> str:
    if param.param_type_name == "argument":
        name = f"`{_argument_name(param)}`"
    else:
        name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
    kind = _type(param, ctx)
    if param.multiple:
        kind += ", repeatable"
    elif param.nargs == -1:
        kind += ", one or more"
    default = "required" if param.required else _default(param, ctx)
    help_text = " ".join((getattr(param, "help", None) or "").split())
    cells = [name, kind, default, _escape(help_text)]
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


CLICK_TYPE_NAMES = {"integer": "int", "text": "str", "boolean": "bool"}


def _type(param: Any, ctx: Any) -> str:
    """The value an option takes: `int`, `path`, `local|ray`, `float (0<=x<=1)`; empty for a
    flag."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return "flag"
    if hasattr(param, "display_type"):  # typer >= 0.29: its own parameters
        label = param.display_type(ctx).strip("<>")
        label = re.sub(r"^list\[(.*)\]$", r"\1", label)
        if "|" not in label:  # a type's name (`Path` of a list), not a choice
            label = label.lower()
    else:  # click's parameter types
        kind = param.type
        choices = getattr(kind, "choices", None)
        label = "|".join(map(str, choices)) if choices else kind.name
        label = CLICK_TYPE_NAMES.get(label, label)
    label = label.removesuffix(" range")
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is None and high is None and hasattr(param, "type"):
        low, high = getattr(param.type, "min", None), getattr(param.type, "max", None)
    if low is not None or high is not None:
        bounds = "".join(
            [f"{low}<=" if low is not None else "", "x", f"<={high}" if high is not None else ""]
        )
        label = f"{label} ({bounds})"
    return f"`{label}`"


def _default(param: Any, ctx: Any) -> str:
    """The default as `--help` shows it; empty where it shows none."""
    show = param.show_default if param.show_default is not None else ctx.show_default
    if isinstance(show, str):
        return _escape(show)
    if not show:
        return ""
    value = param.get_default(ctx, call=False)
    if value is None:
        return ""
    if getattr(param, "is_flag", False):
        if param.secondary_opts:
            return f"`{(param.opts if value else param.secondary_opts)[0]}`"
        return "" if not value else "on"
    if callable(value):
        return "(computed)"
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values:
        return ""
    shown = [str(v.value) if isinstance(v, enum.Enum) else str(v) for v in values]
    if not any(shown):  # an empty string: `--help` shows no default
        return ""
    return " ".join(f"`{v}`" for v in shown)


def _escape(text: str) -> str:
    """Markdown that shows `text` as written: its `code` spans kept, and outside them the
    characters Markdown would read as emphasis or HTML escaped."""
    parts = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(parts), 2):
        part = parts[i].replace("\\", "\\\\").replace("*", "\\*")
        part = re.sub(r"(?<!\w)_|_(?!\w)", r"\\_", part)
        parts[i] = part.replace("<", "&lt;").replace(">", "&gt;")
    return "".join(parts)


def _cell(text: str) -> str:
    """Text in a table cell: one line, its pipes escaped (inside code spans too, as GitHub
    reads tables)."""
    return " ".join(text.split()).replace("|", "\\|")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading (`genprobe integration generate` → the same with hyphens)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    text = reference()
    if not argv:
        sys.stdout.write(text)
        return
    Path(argv[0]).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
