"""`analysis` computes and renders what a study read from its files, and imports no study: the
studies import it (a run's tables are read by its own study's declaration,
`genprobe.studies.tables.read_tables`)."""

from test_layers import SRC, imported_modules


def test_analysis_imports_no_study():
    found = [
        f"{path.relative_to(SRC)}:{line} imports {module}"
        for path in sorted((SRC / "genprobe" / "analysis").rglob("*.py"))
        for line, module in imported_modules(path)
        if module.split(".")[0] == "studies"
    ]
    assert found == []
