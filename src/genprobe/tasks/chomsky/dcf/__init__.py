"""Deterministic context-free tasks: a finite automaton with a stack solves them."""
