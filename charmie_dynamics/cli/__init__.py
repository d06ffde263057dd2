"""Command-line interface: ``charmie-dynamics``."""
