"""``python -m canisters``: the ``canisters`` command."""

from .cli import main

main()
