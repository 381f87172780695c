"""genprobe: did a sequence model learn the rule, or only the training distribution?"""

__version__ = "0.1.0"
