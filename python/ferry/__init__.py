"""ferry: import, optimize, run and validate neural networks.

Framework bridges for `ferry validate` live in ferry.reference
(`python -m ferry.reference --help`).
"""
