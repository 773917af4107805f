"""Query understanding: terms, identifiers and the FTS5 MATCH expression.

Pure functions, no database. ``parse_query`` turns what a user typed into a
``ParsedQuery``:

- FTS5 syntax (``"phrases"``, ``OR``/``AND``/``NOT``, ``NEAR(...)``, ``prefix*``)
  is passed through when the query uses it;
- plain text becomes its non-stopword terms ORed together, each quoted, so
  punctuation can never cause an FTS5 syntax error;
- identifiers (``asyncio.TaskGroup``, ``PYTHONDONTWRITEBYTECODE``,
  ``maxRetries``, ``__init__``) are collected for exact lookup in the
  ``section_idents`` table.

``identifier_keys`` and ``section_identifiers`` are the indexing side of the
same rules, so a query identifier and a stored one always normalise alike.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

# English function words dropped from plain queries (never from phrases).
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    get gets got had has have having he her here hers him his how i if in into is it its itself
    just let me more most my myself no nor not now of off on once only or other our ours out
    over own same she should so some such than that the their theirs them then there these they
    this those through to too under until up very was way we were what when where which while
    who whom why will with would you your yours yourself vs versus using use used want need make
    makes my
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_CONSTRUCT_WORDS = frozenset(
    {
        "statement",
        "statements",
        "loop",
        "loops",
        "clause",
        "clauses",
        "keyword",
        "block",
        "blocks",
        "expression",
        "operator",
    }
)

_WORD_RE = re.compile(r"\w+", re.UNICODE)
# An identifier-like token: dotted names, names with underscores, camelCase, ALLCAPS.
_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_FTS_SYNTAX_RE = re.compile(
    r'"|\bNEAR\s*\(|\b(?:OR|AND|NOT)\b|\w\*(?=\s|$|\))|\b(?:title|heading_text|text|identifiers)\s*:|\^'
)
_ANCHOR_PREFIX_RE = re.compile(
    r"^(?:envvar|cmdoption|term|opcode|pdbcommand|index|std|py|c|cpp|js|module|function|class|"
    r"method|attribute|exception|data)[-.:](?=[A-Za-z_])"
)
_MAX_TERMS = 24


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A user query ready to run."""

    text: str  # the query as typed, whitespace-normalised
    match: str  # the FTS5 MATCH expression ("" = nothing searchable)
    terms: tuple[str, ...]  # distinct lower-cased content words, in order
    identifiers: tuple[str, ...]  # lower-cased identifier keys for exact lookup
    advanced: bool  # the user wrote FTS5 syntax; ``match`` is their text
    fallback: str  # a quoted-terms MATCH to use if ``match`` is an FTS5 syntax error


def is_identifier(token: str) -> bool:
    """True for tokens that name code, not words: ``a.b``, ``a_b``, ``camelCase``, ``ALLCAPS``."""
    if not token or not (token[0].isalpha() or token[0] == "_"):
        return False
    if "." in token.strip(".") or "_" in token:
        return True
    core = token
    if any(c.isupper() for c in core[1:]) and any(c.islower() for c in core):
        return True  # camelCase / PascalCase with an inner capital
    return core.isupper() and len(core) >= 4 and core.isalpha()


def identifier_keys(token: str, *, suffixes: bool = True) -> list[str]:
    """Lookup keys for an identifier: the lower-cased name and, if dotted, its dotted suffixes."""
    name = token.strip(".").lower()
    if not name:
        return []
    keys = [name]
    if suffixes and "." in name:
        parts = name.split(".")
        keys.extend(".".join(parts[i:]) for i in range(1, len(parts)))
    return keys


def split_identifier(token: str) -> list[str]:
    """Words inside an identifier: ``PyArg_ParseTuple`` -> ``Py Arg Parse Tuple``."""
    words: list[str] = []
    for part in re.split(r"[._]+", token):
        words.extend(_CAMEL_RE.findall(part))
    return words


def anchor_identifier(anchor: str) -> str:
    """The identifier an anchor names, without Sphinx prefixes (``envvar-PYTHONPATH`` -> ``PYTHONPATH``)."""
    return _ANCHOR_PREFIX_RE.sub("", anchor or "")


def section_identifiers(anchor: str, title: str, text: str) -> tuple[dict[str, int], str]:
    """Identifier keys of a section with their strength, and the words for the FTS column.

    Strength 2: the section is about it (its anchor or own heading names it);
    strength 1: the body mentions it.
    """
    keys: dict[str, int] = {}
    words: list[str] = []
    strong_tokens = _TOKEN_RE.findall(anchor_identifier(anchor)) + _TOKEN_RE.findall(title or "")
    for token in strong_tokens:
        if is_identifier(token) or token.lower() == anchor_identifier(anchor).lower():
            for key in identifier_keys(token):
                keys[key] = 2
            words.extend(split_identifier(token))
    for token in dict.fromkeys(_TOKEN_RE.findall(text or "")):
        if token.islower() and "_" not in token and "." not in token:
            continue  # a plain word: the common case, rejected without the full test
        if not is_identifier(token):
            continue
        for key in identifier_keys(token, suffixes=False):
            keys.setdefault(key, 1)
        last = token.rsplit(".", 1)[-1]
        if last != token and is_identifier(last):
            keys.setdefault(last.lower(), 1)
        words.extend(split_identifier(token))
        if len(keys) > 400:
            break
    return keys, " ".join(dict.fromkeys(words))


def parse_query(query: str) -> ParsedQuery:
    """Understand a user query; never raises."""
    query = (query or "").encode("utf-8", "replace").decode("utf-8")  # lone surrogates
    text = " ".join(query.split())
    identifiers: list[str] = []
    for raw in text.split(" "):
        token = raw.strip("()[]{}'\",;:!?*")
        token = token.removesuffix("()")
        for found in _TOKEN_RE.findall(token):
            if is_identifier(found):
                identifiers.extend(identifier_keys(found, suffixes=False))
    words = [w.lower() for w in _WORD_RE.findall(text)]
    # A stopword that names a language construct ("with statement", "for loop") is a keyword here.
    keep = {w for w, nxt in itertools.pairwise(words) if nxt in _CONSTRUCT_WORDS}
    terms = [w for w in dict.fromkeys(words) if (w not in STOPWORDS or w in keep) and w.strip("_")]
    if not terms:  # a query made only of stopwords still searches them
        terms = [w for w in dict.fromkeys(words) if w.strip("_")]
    terms = terms[:_MAX_TERMS]
    fallback = " OR ".join(_quote(t) for t in terms)
    advanced = bool(_FTS_SYNTAX_RE.search(text))
    match = text if advanced else fallback
    return ParsedQuery(
        text=text,
        match=match,
        terms=tuple(terms),
        identifiers=tuple(dict.fromkeys(identifiers)),
        advanced=advanced,
        fallback=fallback,
    )


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'
