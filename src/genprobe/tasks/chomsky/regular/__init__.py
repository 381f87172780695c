"""Regular tasks: a finite automaton solves them."""
