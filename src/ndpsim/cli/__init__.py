"""The ``ndpsim`` command line."""
