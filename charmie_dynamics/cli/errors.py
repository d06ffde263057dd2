"""Errors of the command-line layer."""


class InputError(ValueError):
    """A bad command-line input or input file; printed as one line by ``main``."""
