"""The symbolic-integration task (Lample & Charton 2019, probed by Welleck et al. 2022).

Public API: the expression tree and its conversions, the 91-token vocabulary, the parsers for
untrusted text, the verifier, and the data generators. Everything but the model.

The names are imported on first use: the command line reads the generation settings
(`generation_config`) and the verifier's (`verifier_config`) as it starts, and reading them
must not load SymPy.
"""

from __future__ import annotations

from genprobe.lazy import lazy_names

# a public name -> the module of this package that defines it
_DEFINED_IN = {
    "Expr": "expression",
    "X": "expression",
    "from_sympy": "expression",
    "to_sympy": "expression",
    "GenerationReport": "generation",
    "Row": "generation",
    "generate": "generation",
    "GeneratorConfig": "generation_config",
    "TreeSettings": "generation_config",
    "extract_math": "infix",
    "parse_infix": "infix",
    "ParseLimits": "limits",
    "from_prefix": "prefix",
    "problem_prefix": "prefix",
    "strip_problem_prefix": "prefix",
    "to_prefix": "prefix",
    "random_expression": "random_trees",
    "read_expression": "reading",
    "Verifier": "verifier",
    "VerifierConfig": "verifier_config",
    "verify": "verifier",
    "verify_many": "verifier",
    "EOS_INDEX": "vocab",
    "PAD_INDEX": "vocab",
    "VOCAB": "vocab",
    "decode_ids": "vocab",
    "encode_tokens": "vocab",
}


__getattr__ = lazy_names(__name__, _DEFINED_IN)


__all__ = sorted(_DEFINED_IN)
