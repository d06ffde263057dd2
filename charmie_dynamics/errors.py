"""Errors of the package's front ends (command line, bring-up, viewer), at the bottom of the
import layers so that each front end raises them without importing another."""
from .documents import DocumentError


class InputError(DocumentError):
    """A bad command-line input or input file; printed as one line by ``charmie-dynamics``."""
