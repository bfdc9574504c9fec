"""Adversarial tests: damaged files, garbage input and faults, each with the behaviour hymem
promises instead of a crash (a repair, a flagged fallback, or a typed `HymemError`)."""
