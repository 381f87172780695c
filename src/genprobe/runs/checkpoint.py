"""The shard a training run keeps at every save (`CHECKPOINT/LAST`): its model and metrics,
recorded as a shard's files are, so a reader of either checks them (`runs.shards`)."""

CHECKPOINT, LAST = "checkpoint", "last"
MODEL, METRICS = "model.pt", "metrics.jsonl"
