"""Sub-commands of the ``itemsampling`` command line; each module provides ``register(subparsers)``.

A command module adds a sub-parser and sets ``func`` (``args -> int`` exit status) with
``parser.set_defaults(func=...)``. Errors the user can fix are raised as ``ValueError`` or
``FileNotFoundError``; :func:`itemsampling.cli.main` prints them and exits with status 2.
"""
