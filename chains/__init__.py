"""Expression trees, rewrite rules, the state space and chain datasets. Knows nothing of Lean or torch."""
