"""Decoding page bytes: HTTP charset > BOM > <meta> > UTF-8, never raising on bad bytes."""

from __future__ import annotations

import codecs

import pytest

from doc_scraper.errors import ExtractError
from doc_scraper.extract.decode import decode_html, sniff_encoding
from doc_scraper.models import ExtractOptions
from doc_scraper.worker import parse_page

URL = "https://docs.example.org/p.html"


def _html(text: str, head: str = "") -> str:
    return f"<html><head>{head}<title>t</title></head><body><h1>{text}</h1></body></html>"


def test_latin1_meta_charset_decodes_as_windows_1252() -> None:
    body = _html("Café “quoted”", '<meta charset="iso-8859-1">').encode("cp1252")
    text, encoding = decode_html(body, URL)
    assert encoding == "cp1252"
    assert "Café “quoted”" in text


def test_cp1252_http_equiv_content_type_is_honoured() -> None:
    head = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
    body = _html("naïve – dash", head).encode("cp1252")
    assert "naïve – dash" in decode_html(body, URL)[0]


def test_shift_jis_page_decodes() -> None:
    body = _html("日本語のドキュメント", '<meta charset="Shift_JIS">').encode("shift_jis")
    text, encoding = decode_html(body, URL)
    assert "日本語のドキュメント" in text
    assert encoding == "cp932"


def test_http_charset_beats_meta_charset() -> None:
    body = _html("Grüße", '<meta charset="utf-8">').encode("latin-1")
    assert "Grüße" in decode_html(body, URL, charset="ISO-8859-1")[0]


def test_utf8_bom_beats_meta_and_is_stripped() -> None:
    body = codecs.BOM_UTF8 + _html("Grüße", '<meta charset="iso-8859-1">').encode("utf-8")
    text, encoding = decode_html(body, URL)
    assert encoding == "utf-8"
    assert text.startswith("<html>")
    assert "Grüße" in text


def test_utf16_with_bom_is_not_mistaken_for_binary() -> None:
    body = codecs.BOM_UTF16_LE + _html("wide text").encode("utf-16-le")
    assert "wide text" in decode_html(body, URL)[0]


def test_unknown_charset_label_falls_back_to_utf8() -> None:
    assert sniff_encoding(b"<html></html>", "x-no-such-charset") == "utf-8"


def test_invalid_utf8_bytes_are_replaced_not_raised() -> None:
    body = b"<html><body><p>ok \xff\xfe bad</p></body></html>"
    assert "ok \ufffd\ufffd bad" in decode_html(body, URL)[0]


@pytest.mark.parametrize(
    "body", [b"%PDF-1.7\n%\xe2\xe3", b"\x89PNG\r\n\x1a\n\x00\x00", b"abc\x00\x00\x01\x02"]
)
def test_binary_bodies_raise_extract_error_naming_the_url(body: bytes) -> None:
    with pytest.raises(ExtractError, match="not HTML") as info:
        parse_page(body, URL, ExtractOptions())
    assert info.value.url == URL


def test_parse_page_uses_the_charset_argument() -> None:
    body = _html("Ærøskøbing").encode("latin-1")
    page = parse_page(body, URL, ExtractOptions(), charset="latin-1")
    assert page.title == "Ærøskøbing"


def test_empty_body_raises_extract_error() -> None:
    with pytest.raises(ExtractError):
        parse_page(b"   ", URL, ExtractOptions())
