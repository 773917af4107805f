"""Our errors survive pickling (they cross the parse pool) and keep their context."""

from __future__ import annotations

import pickle

import pytest

from doc_scraper.errors import (
    BlockedError,
    ConfigError,
    DocScraperError,
    EmptyShellError,
    ExtractError,
    FetchTimeout,
    HTTPStatusError,
    StateError,
)


@pytest.mark.parametrize(
    "exc",
    [
        ConfigError("expected an integer", key="sites.a.max_depth", line=3),
        HTTPStatusError("https://x/a", 503, retry_after=2.0),
        FetchTimeout("https://x/a", "read timed out"),
        BlockedError("https://x/a", "robots.txt", reason="robots"),
        ExtractError("https://x/a", "not HTML"),
        EmptyShellError("https://x/a", "needs JavaScript"),
        StateError("/tmp/s", "in use"),
    ],
)
def test_errors_round_trip_through_pickle(exc: DocScraperError) -> None:
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc)
    assert str(back) == str(exc)
    assert back.__dict__ == exc.__dict__


def test_error_messages_name_where_it_failed() -> None:
    assert str(ConfigError("bad", key="sites.a.max_depth", line=3)) == "sites.a.max_depth (line 3): bad"
    assert HTTPStatusError("https://x/a", 404).status == 404
    assert isinstance(FetchTimeout("u", "m"), TimeoutError)
