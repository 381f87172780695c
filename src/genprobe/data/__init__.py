"""Data stage: splits encoded once as tensors that every stage after it indexes."""
