"""Layers point one way: no module of genprobe imports from a layer above its own, nor names
one by string to be imported when used ("genprobe.x.y:function"), but a study's declaration
naming its renderers and its commands; and no modules import each other in a circle, however long.

tasks → data → models → training → decoding → verification → prompts → models under test →
analysis (statistics over result tables: the judged schema, its rates) → studies → reports →
cli. `lazy` (a package's names imported on first use), `errors`, `user_code` (imports a `py:`
spec's module), `options` (settings given as text) and `runs` (atomic files, run directories,
executors, the deadline pool) sit beneath all.
"""

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
NAMED = re.compile(r"genprobe\.([\w.]+):\w+")

LAYERS = [
    "lazy", "errors", "user_code", "options", "runs", "tasks", "data", "models", "training",
    "decoding", "verification", "prompts", "under_test", "analysis", "studies", "reports", "cli",
]  # fmt: skip

# A study's summary (the statistics of its result files), report (and a `*_report` of one of
# its parts), plots and run comparisons read finished results and render them with `analysis`;
# nothing that runs a study imports them. `analysis` itself sits below the studies: a study
# writes its results in its schema and counts them with its rates.
REPORT_MODULES = ("summary", "report", "plots", "compare", "tables")

# (importer prefix, imported prefix): why it is allowed.
EXCEPTIONS = {
    ("under_test.registry", "studies.seed_sensitivity.as_model"): (
        "a finished sweep as a model under test (`run:`) is read by the study that wrote it "
        "(its config, members and training data), named by string so that the registry loads "
        "it only when asked"
    ),
}


def layer_of(module: str) -> str:
    """The layer of a module named relative to `genprobe` (`under_test.adapters.seq2seq`)."""
    parts = module.split(".")
    reporting = parts[-1] in REPORT_MODULES or parts[-1].endswith("_report")
    if parts[0] == "studies" and reporting:
        return "reports"
    if parts[0] in ("__init__", "__main__"):
        return "cli"
    return parts[0]


def module_name(path: Path, src: Path = SRC) -> str:
    parts = path.relative_to(src / "genprobe").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


def imported_modules(path: Path, src: Path = SRC) -> list[tuple[int, str]]:
    """(line, module relative to `genprobe`) for every genprobe import, lazy ones included."""
    package = module_name(path, src).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                names = [".".join([*base, node.module] if node.module else base)]
            else:
                module = node.module or ""
                names = [module.removeprefix("genprobe.")] if module.startswith("genprobe.") else []
        elif isinstance(node, ast.Import):
            names = [
                a.name.removeprefix("genprobe.")
                for a in node.names
                if a.name.startswith("genprobe.")
            ]
        else:
            continue
        found += [(node.lineno, name) for name in names]
    return sorted(found)


def named_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module relative to `genprobe`) for every module a string names as
    "genprobe.x.y:function", to be imported when used (a registry's or a declaration's)."""
    return sorted(
        (node.lineno, named[1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (named := NAMED.fullmatch(node.value))
    )


def upward_imports(src: Path = SRC) -> list[str]:
    violations = []
    for path in sorted((src / "genprobe").rglob("*.py")):
        importer = module_name(path, src)
        # a study's declaration names its renderers for the report commands to load, and its
        # commands for the command line to register
        declared = importer.endswith(".study") and importer.startswith("studies.")
        named = [(line, m) for line, m in named_modules(path) if not declared]
        for line, imported in sorted(imported_modules(path, src) + named):
            allowed = any(
                importer.startswith(low) and imported.startswith(high) for low, high in EXCEPTIONS
            )
            above = LAYERS.index(layer_of(imported)) > LAYERS.index(layer_of(importer))
            if above and not allowed:
                violations.append(
                    f"{path.relative_to(src)}:{line} ({layer_of(importer)}) imports "
                    f"{imported} ({layer_of(imported)})"
                )
    return violations


def test_no_module_imports_from_a_higher_layer():
    assert upward_imports() == []


def task_bound_imports(src: Path = SRC) -> list[str]:
    """Imports by which the networks in models/ or decoding would know a task: its expression
    type, or a task's token ids (decoding gets EOS and PAD from its caller)."""
    found = []
    for path in sorted((src / "genprobe").rglob("*.py")):
        layer = layer_of(module_name(path, src))
        banned = {"models": ("tasks",), "decoding": ("tasks", "data.seq2seq")}.get(layer, ())
        for line, imported in imported_modules(path, src):
            if imported.startswith(banned):
                found.append(f"{path.relative_to(src)}:{line} ({layer}) imports {imported}")
    return found


def test_the_networks_and_decoding_know_no_task():
    assert task_bound_imports() == []


def test_every_exception_is_still_needed():
    """Once the import an exception allows is gone, the exception goes too."""
    used = set()
    for path in (SRC / "genprobe").rglob("*.py"):
        importer = module_name(path)
        for _, imported in imported_modules(path) + named_modules(path):
            used |= {
                (low, high)
                for low, high in EXCEPTIONS
                if importer.startswith(low) and imported.startswith(high)
            }
    assert sorted(set(EXCEPTIONS) - used) == []


def test_every_module_has_a_known_layer():
    modules = [module_name(p) for p in (SRC / "genprobe").rglob("*.py")]
    assert sorted({layer_of(m) for m in modules} - set(LAYERS)) == []


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("tasks.integration.verifier", "tasks"),
        ("models.transformer", "models"),
        ("under_test.adapters.seq2seq", "under_test"),
        ("studies.brittleness.run", "studies"),
        ("studies.brittleness.report", "reports"),
        ("studies.seed_sensitivity.summary", "reports"),
        ("analysis.render", "analysis"),
        ("__main__", "cli"),
    ],
)
def test_modules_map_to_their_layers(module, layer):
    assert layer_of(module) == layer


def test_an_upward_import_is_found(tmp_path):
    """The walk sees relative and lazy imports, so a violation cannot hide in either."""
    package = tmp_path / "genprobe" / "training"
    package.mkdir(parents=True)
    (package / "loop.py").write_text(
        "def f():\n    from genprobe.studies.brittleness import run\n"
        "from ..verification import ranked\n"
    )
    assert upward_imports(tmp_path) == [
        "genprobe/training/loop.py:2 (training) imports studies.brittleness (studies)",
        "genprobe/training/loop.py:3 (training) imports verification (verification)",
    ]


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module → the genprobe modules it imports when it runs, lazy imports included (`from
    package import name` imports the submodule `name` where there is one). What an `if
    TYPE_CHECKING:` block imports never runs, so it is left out; so is a module named by string
    (`named_modules`: a registry's row, a study naming its renderers), looked up when asked
    for, by then with every module that names it loaded."""
    paths = {module_name(path, src): path for path in (src / "genprobe").rglob("*.py")}
    graph = {}
    for module, path in paths.items():
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        found = set()
        for node in _running(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join([*package[: len(package) - node.level + 1], node.module or ""])
                elif (node.module or "").split(".")[0] == "genprobe":
                    base = node.module.removeprefix("genprobe").removeprefix(".")
                else:
                    continue
                base = base.strip(".")
                for alias in node.names:
                    sub = f"{base}.{alias.name}".strip(".")
                    found.add(sub if sub in paths else base)
            elif isinstance(node, ast.Import):
                found |= {a.name.removeprefix("genprobe.") for a in node.names}
        graph[module] = (found & set(paths)) - {module}
    return graph


def _running(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree` but those under `if TYPE_CHECKING:`."""
    nodes, stack = [], [tree]
    while stack:
        node = stack.pop()
        nodes.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return nodes


def import_circles(src: Path = SRC) -> list[list[str]]:
    """Each set of modules that import one another in a circle (a strongly connected component
    of the import graph, Tarjan's algorithm), sorted."""
    graph = import_graph(src)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            members = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(members) > 1:
                circles.append(sorted(members))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(circles)


def test_no_modules_import_each_other_in_a_circle():
    assert import_circles() == []


def test_an_import_circle_is_found(tmp_path):
    """However long, through lazy and relative imports and `from package import module`; an
    import only type checkers read makes none."""
    package = tmp_path / "genprobe" / "tasks"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from genprobe.tasks import b\n")
    (package / "b.py").write_text("def f():\n    from . import c\n")
    (package / "c.py").write_text("import genprobe.tasks.a\n")
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from genprobe.tasks import e\n"
    )
    (package / "e.py").write_text("from genprobe.tasks.d import x\n")
    assert import_circles(tmp_path) == [["tasks.a", "tasks.b", "tasks.c"]]
