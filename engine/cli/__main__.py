"""`python -m hymem.cli` runs the same CLI as the `hymem` script."""

from hymem.cli import main

main()
