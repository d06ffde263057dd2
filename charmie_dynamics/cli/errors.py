"""Errors of the command-line layer."""
from ..documents import DocumentError


class InputError(DocumentError):
    """A bad command-line input or input file; printed as one line by ``main``."""
