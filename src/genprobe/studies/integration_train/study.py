"""The integration-train study's declaration (`genprobe.studies.study`): its run has no
shards to compute, only the one the trainer keeps at every save; it resumes from `state.pt`."""

from genprobe.runs.checkpoint import CHECKPOINT
from genprobe.studies.study import Study

INTEGRATION_TRAIN = Study(
    kind="integration-train",
    name="an integration training run",
    config="genprobe.studies.integration_train.config:IntegrationTrainConfig",
    run="genprobe.studies.integration_train.run:run_training",
    commands={"integration train": "genprobe.cli.integration:train"},
    resumes="training goes on from the last save, made after every epoch and every ten minutes",
    report="genprobe.studies.integration_train.report:write_train_report",
    tables="genprobe.studies.integration_train.tables:run_tables",
    stages=(CHECKPOINT,),
)
