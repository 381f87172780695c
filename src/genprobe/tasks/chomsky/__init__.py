"""The Chomsky-hierarchy tasks of Delétang et al. (2023), one file each, in folders by the
level of the hierarchy their paper puts them at: regular/, dcf/ (deterministic context-free),
cs/ (context-sensitive). Names follow their code (`reverse_string`, …)."""
