"""`python -m judgebench` runs the CLI."""

from judgebench.cli import main

main()
