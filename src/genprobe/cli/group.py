"""How every command group is set up: plain help, so bracketed text (`genprobe[ray]`,
`[default: …]`) survives and option names are not cut at 80 columns, and a bare group
(`genprobe`, `genprobe rewriting`) prints its help and exits 0."""

from __future__ import annotations

from collections.abc import Callable

import typer


def help_when_bare(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit()


def command_group(help: str, callback: Callable[..., None] = help_when_bare) -> typer.Typer:
    """A command group; `callback` takes the group's own options and must end by calling
    `help_when_bare`."""
    group = typer.Typer(
        help=help, rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False
    )
    group.callback(invoke_without_command=True)(callback)
    return group
