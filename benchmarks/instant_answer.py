"""A `py:` model under test that answers every problem at once with `x`: with it,
`sagga_throughput.py` times the search's own work (mutation, simplify, verification)."""


def antiderivative(problem: str, k: int) -> str:
    return "x"
