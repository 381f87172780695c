"""Verification: explicit outcomes for every checked output."""

from genprobe.verification.verdict import Outcome, TimeoutPolicy, Verdict

__all__ = ["Outcome", "TimeoutPolicy", "Verdict"]
