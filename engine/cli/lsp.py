"""`daimyo lsp`: a language server (stdio) for ruleset YAML and the rules language inside it.

An editor starts `daimyo lsp` and speaks the Language Server Protocol with it over stdin and
stdout. For any file inside a ruleset package (a folder with a ruleset.yaml, or below one):
- diagnostics as you type: the checks of `daimyo validate` on the package with the rulesets it
  extends, run on the editor's unsaved text;
- completion of the names in scope: spaces, regions, fields, constants, procedures, steps,
  events, primitives, options and their values (`options.side == "` offers `sun`, `moon`);
- hover: a primitive's documentation, or where a name is declared (package, file:line), which
  patches changed it, and its value;
- go to definition, across every package of the combo.
Set-up for VS Code, Neovim and Emacs: docs/editor-setup.md. Needs pygls (`pip install pygls`).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from engine.base.console import EPILOG
from engine.cli import help_of
from engine.cli.lspkit.analysis import Analysis, analyse, completions, definitions, hover, package_root, word_at

DEBOUNCE_SECONDS = 0.25  # while typing, validate once the text has been still this long


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lsp", help=help_of("lsp"), epilog=EPILOG,
                       description="Run the daimyo language server on stdin/stdout; an editor starts it. "
                       "See docs/editor-setup.md. Needs pygls: pip install 'daimyo[lsp]' (or pip install pygls).")
    p.add_argument("--stdio", action="store_true",
                   help="accepted for editors that pass it; stdio is the only transport")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        server = build_server()
    except ImportError:
        print("daimyo lsp needs pygls: pip install 'daimyo[lsp]' (or pip install pygls)", file=sys.stderr)
        return 1
    server.start_io()
    return 0


def build_server() -> Any:
    from lsprotocol import types as t
    from pygls.lsp.server import LanguageServer

    from engine import __version__

    server = LanguageServer("daimyo", __version__)
    state = _State()

    def doc_path(uri: str) -> Path | None:
        if not uri.startswith("file:"):
            return None
        doc = server.workspace.get_text_document(uri)
        return Path(doc.path) if doc.path else None

    def refresh(uri: str) -> None:
        path = doc_path(uri)
        folder = package_root(path) if path else None
        if folder is None:
            return
        texts = {d.path: d.source for d in server.workspace.text_documents.values() if d.path}
        a = analyse(folder, texts)
        state.analyses[folder] = a
        published = state.published.setdefault(folder, set()) | {os.path.realpath(path)}
        for file in published - set(a.diagnostics):  # clear what was fixed (and say "clean" for this file)
            server.text_document_publish_diagnostics(t.PublishDiagnosticsParams(Path(file).as_uri(), []))
        for file, found in a.diagnostics.items():
            lines = _lines(server, file)
            server.text_document_publish_diagnostics(
                t.PublishDiagnosticsParams(Path(file).as_uri(), [_diagnostic(t, d, lines) for d in found]))
        state.published[folder] = set(a.diagnostics)

    def analysis_for(uri: str) -> Analysis | None:
        path = doc_path(uri)
        folder = package_root(path) if path else None
        if folder is None:
            return None
        if folder not in state.analyses:
            refresh(uri)
        return state.analyses.get(folder)

    def line_of(uri: str, line: int) -> str:
        lines = server.workspace.get_text_document(uri).lines
        return lines[line].rstrip("\r\n") if 0 <= line < len(lines) else ""

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: t.DidOpenTextDocumentParams) -> None:
        refresh(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Any, params: t.DidSaveTextDocumentParams) -> None:
        refresh(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: Any, params: t.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        state.versions[uri] = version
        await asyncio.sleep(DEBOUNCE_SECONDS)
        if state.versions.get(uri) == version:  # no newer edit came in while we waited
            refresh(uri)

    @server.feature(t.TEXT_DOCUMENT_COMPLETION, t.CompletionOptions(trigger_characters=[".", '"', "'"]))
    def completion(ls: Any, params: t.CompletionParams) -> t.CompletionList:
        a = analysis_for(params.text_document.uri)
        if a is None:
            return t.CompletionList(is_incomplete=False, items=[])
        line = line_of(params.text_document.uri, params.position.line)
        items = [t.CompletionItem(label=label, kind=_item_kind(t, what), detail=what,
                                  documentation=t.MarkupContent(t.MarkupKind.Markdown, doc) if doc else None)
                 for label, what, doc in completions(a, line, params.position.character)]
        return t.CompletionList(is_incomplete=False, items=items)

    @server.feature(t.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: Any, params: t.HoverParams) -> t.Hover | None:
        a = analysis_for(params.text_document.uri)
        if a is None:
            return None
        line = line_of(params.text_document.uri, params.position.line)
        text = hover(a, line, params.position.character)
        if text is None:
            return None
        _, start, end = word_at(line, params.position.character)
        rng = t.Range(t.Position(params.position.line, start), t.Position(params.position.line, end))
        return t.Hover(contents=t.MarkupContent(t.MarkupKind.Markdown, text), range=rng)

    @server.feature(t.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: Any, params: t.DefinitionParams) -> list[t.Location]:
        a = analysis_for(params.text_document.uri)
        if a is None:
            return []
        line = line_of(params.text_document.uri, params.position.line)
        out = []
        for loc in definitions(a, line, params.position.character):
            word, _, _ = word_at(line, params.position.character)
            start = t.Position(loc.line - 1, max(loc.col - 1, 0))
            end = t.Position(loc.line - 1, max(loc.col - 1, 0) + len(word))
            out.append(t.Location(Path(os.path.abspath(loc.file)).as_uri(), t.Range(start, end)))
        return out

    return server


class _State:
    def __init__(self) -> None:
        self.analyses: dict[Path, Analysis] = {}
        self.published: dict[Path, set[str]] = {}  # package -> files that have diagnostics shown
        self.versions: dict[str, int] = {}


def _lines(server: Any, file: str) -> list[str]:
    """The text of a file as the editor has it (open) or as it is on disk."""
    for d in server.workspace.text_documents.values():
        if d.path and os.path.realpath(d.path) == file:
            return d.lines
    try:
        return Path(file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _diagnostic(t: Any, d: Any, lines: list[str]) -> Any:
    """An LSP diagnostic over the name (or the rest of the word) where ours points."""
    line, col = max(d.loc.line - 1, 0), max(d.loc.col - 1, 0)
    text = lines[line] if line < len(lines) else ""
    _, _, end = word_at(text, col)
    end = max(end, col + 1)
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    severity = t.DiagnosticSeverity.Error if d.severity == "error" else t.DiagnosticSeverity.Warning
    return t.Diagnostic(range=t.Range(t.Position(line, col), t.Position(line, end)), message=message,
                        severity=severity, code=d.code, source="daimyo")


def _item_kind(t: Any, what: str) -> Any:
    k = t.CompletionItemKind
    if "primitive" in what or what in ("function", "procedure", "special form"):
        return k.Function
    if what.startswith(("field", "attribute")) or what == "built-in attribute":
        return k.Field
    if what in ("constant", "global", "built-in name"):
        return k.Constant
    if what in ("option",) or what.startswith("value of option"):
        return k.EnumMember
    if what in ("event", "trigger"):
        return k.Event
    if what in ("space", "region") or what.endswith("(item)"):
        return k.Value
    return k.Reference
