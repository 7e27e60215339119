"""What the language server knows about a package: diagnostics and names in scope (see engine/cli/lsp.py)."""
