"""The failure search's declaration (`genprobe.studies.study`)."""

from genprobe.studies.search.sagga.study import CLUSTER, NEARBY, PROGRESS, PROPOSE, TAG, VERIFY
from genprobe.studies.study import Study

GENERATION = "generation"  # one shard per generation: its members decoded and judged

SEARCH = Study(
    kind="search",
    name="a failure search",
    config="genprobe.studies.search.config:SearchConfig",
    run="genprobe.studies.search.search:run_search",
    commands={"search": "genprobe.cli.search:search"},
    resumes="the finished generations are replayed from disk",
    report="genprobe.studies.search.report:write_search_report",
    tables="genprobe.studies.search.tables:run_tables",
    # SAGGA's breeder's too; PROGRESS (`loop.py`) and TAG (`tags.py`) both breeders'; CLUSTER
    # the task breeder's analysis too (the driver's shard: clusters.json, slices.parquet)
    stages=(PROPOSE, VERIFY, GENERATION, PROGRESS, CLUSTER, TAG, NEARBY),
)
