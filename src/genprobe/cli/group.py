"""How every command group is set up: plain help, so bracketed text (`genprobe[ray]`,
`[default: …]`) survives and option names are not cut at 80 columns; its commands listed with
their whole first sentence; and a bare group (`genprobe`, `genprobe rewriting`) prints its help
and exits 0."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:  # typer 0.29 and later carry their own copy of click, not the package
    from click import HelpFormatter


class _Group(TyperGroup):
    def format_commands(self, ctx: typer.Context, formatter: HelpFormatter) -> None:
        """Click cuts each command's summary to fit one line ("Train N seeds of a model on
        a task at once, evaluate every..."); here it wraps instead."""
        commands = ((name, self.get_command(ctx, name)) for name in self.list_commands(ctx))
        rows = [
            (name, command.get_short_help_str(limit=sys.maxsize))
            for name, command in commands
            if command is not None and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def help_when_bare(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit()


def command_group(help: str, callback: Callable[..., None] = help_when_bare) -> typer.Typer:
    """A command group; `callback` takes the group's own options and must end by calling
    `help_when_bare`."""
    group = typer.Typer(
        cls=_Group,
        help=help,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    group.callback(invoke_without_command=True)(callback)
    return group
