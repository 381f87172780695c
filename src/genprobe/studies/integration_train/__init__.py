"""Training the integration transformer (`genprobe integration train`) as a study.

study.py       its declaration: run kind, report
config.py      IntegrationTrainConfig: what a run hashes; the model sizes and presets
validation.py  the validation reported every epoch (greedy Fail@1, verified)
run.py         run_training: config and data checked, run opened, the trainer run
results.py     the recorded config and metrics.jsonl
report.py      the report: training curve, validations, config
"""
