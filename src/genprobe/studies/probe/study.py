"""The probe study's declaration (`genprobe.studies.study`)."""

from genprobe.studies.study import Study

KIND = "probe"
SUITES = "suites"  # the driver's own shard: the suites it built (`suites.write_suites`)
DECODE = "decode"  # one shard per suite (`decode.py`)
LARGE_SEARCH = (
    "large-search"  # with --search-budget: shards of a suite's inputs (`large_search.py`)
)

PROBE = Study(
    kind=KIND,
    name="a probe study",
    config="genprobe.studies.probe.config:ProbeConfig",
    run="genprobe.studies.probe.run:run_probe",
    commands={"probe": "genprobe.cli.probe:probe"},
    resumes="the finished shards are kept",
    report="genprobe.studies.probe.report:write_report",
    tables="genprobe.studies.probe.tables:run_tables",
    stages=(SUITES, DECODE, LARGE_SEARCH),
    report_settings=("threshold",),
)
