"""Every exception doc-scraper raises on purpose.

    DocScraperError
    ├── ConfigError            bad config file or key (names key path, line, fix)
    ├── UsageError             bad command-line use (exit 2)
    ├── FetchError(url)
    │   ├── HTTPStatusError(status)
    │   ├── FetchTimeout        (also a TimeoutError)
    │   ├── ConnectError        (also a ConnectionError)
    │   ├── TooLargeError       body over max_page_size_bytes
    │   └── BlockedError        robots.txt, SSRF guard, scope on redirect
    ├── ExtractError(url)
    │   └── EmptyShellError     client-rendered page: needs JavaScript
    ├── StateError(path)        state directory locked, damaged or unusable
    └── SearchError
        ├── QueryError          a query that cannot be run
        └── EmbeddingError      dense search asked for, but no runtime, model or vectors

Callers catch ``DocScraperError`` for "ours": the CLI prints its message, MCP
tools return it as a tool error. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import Any


def _rebuild(cls: type[DocScraperError], text: str, state: dict[str, Any]) -> DocScraperError:
    exc = cls.__new__(cls)
    Exception.__init__(exc, text)
    exc.__dict__.update(state)
    return exc


class DocScraperError(Exception):
    """Base of every error doc-scraper raises deliberately."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Our constructors take other arguments than the message; without this an
        # error raised in a parse-pool worker cannot be unpickled and breaks the pool.
        return (_rebuild, (type(self), str(self), dict(self.__dict__)))


class ConfigError(DocScraperError):
    """The config file or one of its keys is invalid."""

    def __init__(self, message: str, *, key: str | None = None, line: int | None = None) -> None:
        self.key = key
        self.line = line
        where = ""
        if key:
            where = key
            if line:
                where += f" (line {line})"
            where += ": "
        super().__init__(where + message)


class UsageError(DocScraperError):
    """The command line is wrong (unknown flag, missing argument)."""


class FetchError(DocScraperError):
    """Fetching a URL failed."""

    def __init__(self, url: str, message: str) -> None:
        self.url = url
        super().__init__(f"{url}: {message}")


class HTTPStatusError(FetchError):
    """The server answered with a status we do not process."""

    def __init__(self, url: str, status: int, retry_after: float | None = None) -> None:
        self.status = status
        self.retry_after = retry_after
        super().__init__(url, f"HTTP {status}")


class FetchTimeout(FetchError, TimeoutError):
    """Connecting or reading took longer than allowed."""


class ConnectError(FetchError, ConnectionError):
    """The connection could not be made or broke off."""


class TooLargeError(FetchError):
    """The response is larger than the configured limit."""


class BlockedError(FetchError):
    """Policy forbids the request: robots.txt, the SSRF guard or scope."""

    def __init__(self, url: str, message: str, *, reason: str = "blocked") -> None:
        self.reason = reason
        super().__init__(url, message)


class ExtractError(DocScraperError):
    """Content could not be extracted from a page."""

    def __init__(self, url: str, message: str) -> None:
        self.url = url
        super().__init__(f"{url}: {message}")


class EmptyShellError(ExtractError):
    """The page is a client-rendered shell: its content needs JavaScript."""


class StateError(DocScraperError):
    """The state directory cannot be used (locked by another process, damaged)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


class SearchError(DocScraperError):
    """Searching the index failed."""


class QueryError(SearchError):
    """The query cannot be run (for example it has no searchable terms)."""


class EmbeddingError(SearchError):
    """Dense retrieval was asked for but its runtime, model or the index's vectors are missing."""
