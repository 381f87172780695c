"""The symbolic-integration task (Lample & Charton 2019, probed by Welleck et al. 2022).

Public API: the expression tree and its conversions, the 91-token vocabulary, the parsers for
untrusted text, the verifier, and the data generators. Everything but the model.
"""

from genprobe.tasks.integration.expression import Expr, X, from_sympy, to_sympy
from genprobe.tasks.integration.generation import GenerationReport, Row, generate
from genprobe.tasks.integration.generators import GeneratorConfig
from genprobe.tasks.integration.infix import extract_math, parse_infix
from genprobe.tasks.integration.limits import ParseLimits
from genprobe.tasks.integration.prefix import (
    from_prefix,
    problem_prefix,
    strip_problem_prefix,
    to_prefix,
)
from genprobe.tasks.integration.random_trees import TreeSettings, random_expression
from genprobe.tasks.integration.reading import read_expression
from genprobe.tasks.integration.verifier import Verifier, VerifierConfig, verify, verify_many
from genprobe.tasks.integration.vocab import EOS_INDEX, PAD_INDEX, VOCAB, decode_ids, encode_tokens

__all__ = [
    "EOS_INDEX",
    "PAD_INDEX",
    "VOCAB",
    "Expr",
    "GenerationReport",
    "GeneratorConfig",
    "ParseLimits",
    "Row",
    "TreeSettings",
    "Verifier",
    "VerifierConfig",
    "X",
    "decode_ids",
    "encode_tokens",
    "extract_math",
    "from_prefix",
    "from_sympy",
    "generate",
    "parse_infix",
    "problem_prefix",
    "random_expression",
    "read_expression",
    "strip_problem_prefix",
    "to_prefix",
    "to_sympy",
    "verify",
    "verify_many",
]
