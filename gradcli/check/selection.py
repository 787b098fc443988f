"""`-k EXPRESSION`: pytest's keyword-expression grammar, matched against a case's names.

The grammar is pytest's (`_pytest/mark/expression.py`), so a habit carries over::

    expression: expr? EOF
    expr:       and_expr ('or' and_expr)*
    and_expr:   not_expr ('and' not_expr)*
    not_expr:   'not' not_expr | '(' expr ')' | ident
    ident:      (\\w|:|+|-|.|[|]|\\\\|/|*|?)+

An identifier matches a case when it is a case-insensitive substring of one of the case's
names (its own name and its file's name), as in pytest. gradcli adds one thing pytest's -k
lacks: an identifier with `*` or `?` (or `[`) also matches as a glob of the case's name
(`-k "ok_s*"`), as gradcli's -k always did.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

#: A compiled expression: given a case's names, whether it is selected.
Matcher = Callable[[Iterable[str]], bool]

_TOKEN = re.compile(r"\s*(?:(?P<paren>[()])|(?P<ident>(?:\w|[:+\-.\[\]\\/*?])+))")
_KEYWORDS = ("and", "or", "not")


#: Parentheses nested deeper than this are refused: each level is three calls of the parser.
MAX_NESTING = 100


class ExpressionError(ValueError):
    """A -k expression that does not parse; the message says where, as pytest's does."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "(", ")", "and", "or", "not", "ident", "end"
    text: str
    column: int  # 1-based, as pytest reports it


def _tokens(text: str) -> list[_Token]:
    tokens, position = [], 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            tokens.append(_Token("end", "", position + 1))
            return tokens
        found = _TOKEN.match(text, position)
        if found is None:
            raise ExpressionError(f"at column {position + 1}: unexpected character {text[position]!r}")
        word = found.group("paren") or found.group("ident")
        start = found.start("paren") if found.group("paren") else found.start("ident")
        kind = word if word in ("(", ")", *_KEYWORDS) else "ident"
        tokens.append(_Token(kind, word, start + 1))
        position = found.end()


class _Parser:
    """Recursive descent over the tokens; each rule returns a matcher. Nesting is bounded
    (MAX_NESTING) and `not` chains are counted, so no expression reaches Python's recursion limit."""

    def __init__(self, text: str):
        self.tokens = _tokens(text)
        self.index = 0
        self.depth = 0  # parentheses open

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def accept(self, kind: str) -> bool:
        if self.peek().kind == kind:
            self.index += 1
            return True
        return False

    def fail(self, expected: str) -> ExpressionError:
        token = self.peek()
        got = "end of input" if token.kind == "end" else repr(token.text)
        return ExpressionError(f"at column {token.column}: expected {expected}; got {got}")

    def expression(self) -> Matcher:
        if self.peek().kind == "end":
            return lambda names: True
        matcher = self.or_expr()
        if not self.accept("end"):
            raise self.fail("and OR or OR end of input")
        return matcher

    def or_expr(self) -> Matcher:
        parts = [self.and_expr()]
        while self.accept("or"):
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else (lambda names: any(p(names) for p in parts))

    def and_expr(self) -> Matcher:
        parts = [self.not_expr()]
        while self.accept("and"):
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else (lambda names: all(p(names) for p in parts))

    def not_expr(self) -> Matcher:
        negations = 0  # `not not ... x` read in a loop: thousands of them recurse nowhere
        while self.accept("not"):
            negations += 1
        inner = self.operand()
        return (lambda names: not inner(names)) if negations % 2 else inner

    def operand(self) -> Matcher:
        if self.accept("("):
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise ExpressionError(
                    f"at column {self.tokens[self.index - 1].column}: parentheses nested deeper than "
                    f"{MAX_NESTING} levels"
                )
            inner = self.or_expr()
            if not self.accept(")"):
                raise self.fail("right parenthesis")
            self.depth -= 1
            return inner
        token = self.peek()
        if token.kind != "ident":
            raise self.fail("not OR left parenthesis OR identifier")
        self.index += 1
        return _identifier(token.text)


def _identifier(word: str) -> Matcher:
    wanted = word.lower()
    is_glob = any(ch in wanted for ch in "*?[")

    def matches(names: Iterable[str]) -> bool:
        return any(
            wanted in name.lower() or (is_glob and fnmatch.fnmatchcase(name.lower(), wanted))
            for name in names
        )

    return matches


def compile_expression(text: str | None) -> Matcher:
    """The matcher of a -k expression (None or blank: everything); ExpressionError if malformed."""
    return _Parser(text or "").expression()
