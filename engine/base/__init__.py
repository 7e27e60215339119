"""The foundation every other layer may use, and which imports none of them.

It owns located errors with stable codes (`diagnostics`), safe file writes (`files`) and the
conventions that the front door and the tools share: option pairs, exit codes and output
formats (`console`). It imports only the standard library.
"""
