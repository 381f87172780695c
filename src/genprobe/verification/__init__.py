"""Verification: ranked candidates verified in rank order (`ranked`). The verdicts they give
are the task contract's types (`genprobe.tasks.verdict`: Outcome, Verdict, TimeoutPolicy)."""
