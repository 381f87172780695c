"""Context-sensitive tasks: they need more memory than a stack."""
