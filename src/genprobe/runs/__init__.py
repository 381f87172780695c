"""Run directories: resolved config + hash + provenance, atomic writes, resume."""
