"""Image helpers: domain filters and local file names."""

from __future__ import annotations

import pytest

from doc_scraper.write.images import image_allowed, image_filename


@pytest.mark.parametrize(
    ("url", "allowed", "disallowed", "ok"),
    [
        ("https://docs.example.com/a.png", (), (), True),
        ("https://cdn.example.com/a.png", ("*.example.com",), (), True),
        ("https://example.com/a.png", ("*.example.com",), (), True),
        ("https://evil.com/a.png", ("*.example.com",), (), False),
        ("https://ads.example.com/a.png", (), ("ads.example.com",), False),
        ("data:image/png;base64,AAAA", (), (), False),
    ],
)
def test_image_domain_filters(
    url: str, allowed: tuple[str, ...], disallowed: tuple[str, ...], ok: bool
) -> None:
    assert image_allowed(url, allowed, disallowed) is ok


def test_image_names_are_stable_safe_and_distinct() -> None:
    a = image_filename("https://x.org/img/My Logo!.PNG")
    assert a == image_filename("https://x.org/img/My Logo!.PNG")
    assert a.startswith("My_Logo_") and a.endswith(".png")
    assert image_filename("https://x.org/a/logo.png") != image_filename("https://x.org/b/logo.png")
    assert image_filename("https://x.org/render?id=3", "image/svg+xml").endswith(".svg")
    assert "/" not in image_filename("https://x.org/../../etc/passwd")
