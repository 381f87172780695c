"""The SAGGA study's declaration (`genprobe.studies.study`)."""

from genprobe.studies.study import Study

# a generation's three kinds of shard (`studies/search/sagga/generation.py`)
PROPOSE = "propose"
VERIFY = "verify"
GENERATION = "generation"  # the score shard's: its manifest marks the generation done
# the driver's own shards, kept again after every generation: the archive, search.json
# (`studies/search/loop.py`, both breeders')
PROGRESS = "progress"
# the archive's analysis (`analysis.py`)
CLUSTER = "cluster"
TAG = "tag"
NEARBY = "nearby"

SAGGA = Study(
    kind="integration-sagga",
    name="a SAGGA search",
    config="genprobe.studies.search.sagga.config:SaggaConfig",
    run="genprobe.studies.search.sagga.run:run_sagga",
    commands={"integration sagga": "genprobe.cli.sagga:sagga"},
    resumes="the finished generations are replayed from disk",
    report="genprobe.studies.search.sagga.report:write_sagga_report",
    tables="genprobe.studies.search.sagga.tables:run_tables",
    stages=(PROPOSE, VERIFY, GENERATION, PROGRESS, CLUSTER, TAG, NEARBY),
    report_inputs=("archive.jsonl",),  # a run made before SAGGA kept its archive
    report_outputs=("summary.json",),
    report_commands={"integration sagga-report": "genprobe.cli.sagga:sagga_report"},
    report_resumes="the finished tagging shards are kept",
)
