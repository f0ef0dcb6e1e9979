"""A module's code as words, for the tests that check what the core may name."""

from __future__ import annotations

import ast


def code_words(source: str) -> str:
    """The names and string values of a module's code; docstrings, which may give a
    platform as an example, comments and regular expressions' patterns left out."""
    tree = ast.parse(source)
    # A string standing alone as a statement is a docstring (of a module, class or
    # function, or the one under an assignment): words about the code, not in it.
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                  and isinstance(node.value.value, str)}
    # A regular expression describes text (a URL scheme a hostile title may carry, a
    # word it may use), not what the code does: its pattern is left out too.
    docstrings |= {id(arg) for node in ast.walk(tree)
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                   and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                   for arg in node.args[:1] if isinstance(arg, ast.Constant)}
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            words.append(node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            words.extend(alias.name for alias in node.names)
            words.append(getattr(node, "module", None) or "")
    return " ".join(words)
