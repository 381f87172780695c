"""Welleck et al. (2022)'s numbers for Lample & Charton's FWD+BWD+IBP model, as printed in the
paper (../shared/papers/welleck2022-symbolic-brittleness.txt), to show beside ours.

Failure rates in percent; keys follow our suite tables (`set`, `template`, `k`, `n_ops`).
The paper used beam 10 (Fail@1, Fail@10) or beam 50 (Fail@50), SymPy verification with
timeouts counted as correct, 1-second checks.
"""

from __future__ import annotations

# the beam each of the paper's Fail@k came from (section 2.1: beam 10 by default; Fail@50 needs
# 50 candidates); Table 12's Unresolved@1 and @10 too
BEAMS: dict[int, int] = {1: 10, 10: 10, 50: 50}

# Table 2, top: simple primitives, coefficients from [1, 100]: (Fail@50, Fail@10, Fail@1)
TABLE2_SIMPLE: dict[str, tuple[float, float, float]] = {
    "k1*ln(k2*x)": (0.0, 0.0, 0.0),
    "k1*x": (0.0, 0.0, 0.0),
    "k1*x**42": (0.0, 6.1, 45.5),
    "k1*exp(k2*x)": (15.4, 20.8, 30.3),
    "k1*sin(k2*x)": (6.6, 19.6, 29.7),
    "k1*cos(k2*x)": (10.6, 20.7, 28.2),
    "k1*tan(k2*x)": (13.9, 17.4, 24.2),
}

# the problems behind each of their rows, where the paper says: 1,000 k1, k2 pairs per primitive
# (section 3.1)
TABLE2_SIMPLE_N = 1000

# Table 2, bottom: perturbed validation problems the model solves: (Fail@50, Fail@10, Fail@1)
TABLE2_VALIDATION: dict[str, tuple[float, float, float]] = {
    "coeff_f/k": (5.9, 12.0, 13.7),
    "coeff_k*f": (5.4, 5.8, 16.3),
    "add_exp": (0.9, 1.6, 3.3),
    "add_ln": (1.9, 3.2, 5.3),
}

# Table 8: sums of k solved primitives: family -> k -> (Fail@50, Fail@10, Fail@1)
TABLE8: dict[str, dict[int, tuple[float, float, float]]] = {
    "comp_exp": {
        1: (0.0, 0.0, 0.0),
        2: (70.8, 72.4, 84.9),
        3: (91.3, 97.5, 99.5),
        4: (86.2, 97.4, 99.8),
    },
    "comp_coeff": {
        1: (0.0, 0.0, 0.0),
        2: (8.6, 16.2, 29.2),
        3: (23.8, 37.5, 61.0),
        4: (23.1, 38.7, 60.0),
    },
    "comp_valid": {
        1: (0.0, 0.0, 0.0),
        2: (6.8, 14.5, 15.0),
        3: (21.5, 36.5, 43.6),
        4: (52.5, 69.0, 79.2),
    },
}

# 1,000 sums per family and k (section 4)
TABLE8_N = 1000

# Table 9: operator nodes -> (Fail@10, Fail@1); training used 1-15 nodes
TABLE9: dict[str, tuple[float, float]] = {
    "ops_1-15": (0.4, 1.6),
    "ops_20": (1.9, 10.7),
    "ops_25": (7.2, 17.2),
    "ops_30": (24.4, 37.1),
    "ops_35": (49.0, 59.2),
}

# Table 12: failures on the FWD validation set whose reference scores below the top (k = 1)
# or the bottom (k = 10) beam candidate
TABLE12: dict[int, float] = {1: 91.6, 10: 65.2}

# Section 6.1, beam 500 on k1*{exp,sin,cos,tan}(k2*x): mean probability of the top candidate
# and of the 500th; the top candidate's when no correct one is among the 500
FIGURE3 = {"top": 0.92, "bottom": 0.0000035, "top_when_none_correct": 0.94, "mass": 0.994}

# Lample & Charton's README (beam 10) for the FWD+BWD+IBP model: Fail@10 on their test sets
IN_DISTRIBUTION_FAIL10 = {"fwd": 4.4, "bwd": 0.5, "ibp": 0.4}

# Figure 2 is a plot; the paper gives no numbers for it beyond "near 100 % failure rates on
# large coefficients" for exp, sin, cos and tan, and robust x and ln primitives.

# Section 5, beside Figure 2: the share (%) of the positive integers of "a sample of 200,000
# sequences from the training distribution" in three ranges ("between 1 and 100", "between 100
# and 200", "between 1,000 and 2,000"; whether the bounds are in them is not said), keyed by the
# coefficient range of our suite
FIGURE2_INTEGERS: dict[str, float] = {"1-100": 99.4, "100-200": 0.2, "1000-2000": 0.096}
