"""The user's own code named in a spec: `py:module:name`, with every option that takes one
(`--task py:module:Class`, `--arch py:module:function`, `--model py:module:function`), is an
object of the user's module that stands for what the option asks for.

A module is looked for on the Python path, in the current directory (as `python -m` finds it;
the `genprobe` script alone would not look there), and in the folders where a run recorded its
modules (`found_modules`, kept in each run's provenance; `remember`), so that a run made
beside its module can be reported or evaluated from anywhere.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from genprobe.errors import ConfigError, GenprobeError

USER_PREFIX = "py"  # the spec prefix of the user's own code

_found: dict[str, str] = {}  # module name → its file, for every user module imported
_remembered: dict[str, str] = {}  # module name → the file a run recorded


def import_user_module(name: str, spec: str) -> ModuleType:
    """Module `name`, from the Python path, the current directory or where a run found it.

    Raises:
        GenprobeError: it cannot be imported, or raised while it was; the message starts
            with `spec`.
    """
    here = str(Path.cwd())
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
        importlib.invalidate_caches()
    recorded = _remembered.get(name)
    if recorded is not None and Path(recorded).is_file():
        depth = len(name.split(".")) - (Path(recorded).name != "__init__.py")
        folder = str(Path(recorded).parents[depth])
        if folder not in sys.path:
            sys.path.append(folder)  # after everything else: the current code comes first
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        raise GenprobeError(f"{spec}: cannot import {name!r}: {error}") from None
    except (Exception, SystemExit) as error:  # the user's module failed as it was imported
        raise GenprobeError(f"{spec}: importing {name!r} raised {raised(error, name)}") from None
    if getattr(module, "__file__", None):
        _found[name] = str(Path(module.__file__).resolve())
    return module


def names_user_code(spec: str) -> bool:
    """Whether `spec` names the user's own code (`py:module:name`)."""
    return spec.startswith(f"{USER_PREFIX}:")


def user_object(spec: str, setting: str, form: str) -> Any:
    """What a `py:module:name` spec names in the user's module; None if it has no such name.

    Raises:
        ConfigError: a spec not of that form (named as `setting`, expected as `form`).
        GenprobeError: the module cannot be imported.
    """
    module_name, colon, name = spec.partition(":")[2].partition(":")
    if not colon or not module_name or not name:
        raise ConfigError(setting, form, spec)
    return getattr(import_user_module(module_name, f"{setting} {spec}"), name, None)


def raised(error: BaseException, module: str | None = None) -> str:
    """What the user's code raised, in one line: the error's type and message, then the last
    line of the user's code in its traceback (`(my_model.py, line 12)`), if one is there: a
    line of `module` or of a user module imported before."""
    names = {*_found, module}
    where = ""
    for frame, line in traceback.walk_tb(error.__traceback__):
        if frame.f_globals.get("__name__") in names:
            where = f" ({_shown(frame.f_code.co_filename)}, line {line})"
    return " ".join(f"{type(error).__name__}: {error}".split()).rstrip(":") + where


def _shown(file: str) -> str:
    """A file as the user would name it: relative to the current directory when inside it."""
    path, here = Path(file), Path.cwd()
    return str(path.relative_to(here)) if path.is_relative_to(here) else file


def found_modules() -> dict[str, str]:
    """Every user module imported so far: name → file (a run's provenance records them)."""
    return dict(_found)


def remember(modules: Mapping[str, str]) -> None:
    """Where a run found its user modules (name → file), to look there too."""
    _remembered.update(modules)
