"""``doc-scraper add`` end to end against a small Sphinx-like site on a loopback server."""

from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from doc_scraper.cli import main
from doc_scraper.config.load import load_config

if TYPE_CHECKING:
    from collections.abc import Iterator

FIXTURES = Path(__file__).parent / "fixtures" / "add"
COMMENTED_CONFIG = FIXTURES / "config_with_comments.yaml"

PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="generator" content="Sphinx 7.2.6"><title>{title} - Widgets 2.0 documentation</title></head>
<body><div class="document"><div class="body" role="main"><section id="s"><h1>{title}</h1>
<p>{title} explains one part of the widgets library in enough words to count as a real page of
documentation, with a paragraph of prose that a reader can follow from start to end.</p>
<pre>grid = Grid(columns={n})</pre><p>Back to the <a href="/docs/index.html">start page</a>.</p>
</section></div><div class="sphinxsidebar" role="navigation"><a href="/docs/guide/p0.html">Guide</a></div>
</div></body></html>"""


class FixtureSite:
    """Pages, robots.txt and a sitemap served from memory; tests change ``robots`` as needed."""

    def __init__(self) -> None:
        self.pages: dict[str, bytes] = {"/docs/index.html": (FIXTURES / "site/docs/index.html").read_bytes()}
        self.pages["/docs/"] = self.pages["/docs/index.html"]
        for section, count in (("guide", 6), ("fr", 6), ("api", 1)):
            for n in range(count):
                name = "reference" if section == "api" else f"p{n}"
                self.pages[f"/docs/{section}/{name}.html"] = PAGE.format(title=f"{section} {n}", n=n).encode()
        self.robots = "User-agent: *\nDisallow: /docs/private/\nSitemap: {base}/sitemap.xml.gz\n"
        self.base = ""
        self.requests: list[str] = []

    def sitemap(self) -> bytes:
        urls = "".join(
            f"<url><loc>{self.base}{path}</loc></url>" for path in self.pages if path.endswith(".html")
        )
        xml = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        return gzip.compress(xml.encode())


@pytest.fixture(scope="module")
def site() -> Iterator[FixtureSite]:
    fixture = FixtureSite()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fixture.requests.append(self.path)
            if self.path == "/robots.txt":
                self._send(200, "text/plain", fixture.robots.format(base=fixture.base).encode())
            elif self.path == "/sitemap.xml.gz":
                self._send(200, "application/gzip", fixture.sitemap())
            elif self.path == "/docs":
                self.send_response(301)
                self.send_header("Location", "/docs/")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path in fixture.pages:
                self._send(200, "text/html; charset=utf-8", fixture.pages[self.path])
            else:
                self._send(404, "text/html", b"<html><body>not found</body></html>")

        def _send(self, status: int, ctype: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fixture.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fixture
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _default_robots(site: FixtureSite) -> None:
    site.robots = "User-agent: *\nDisallow: /docs/private/\nSitemap: {base}/sitemap.xml.gz\n"


def _json_run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(["add", *argv])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith("{") else {}


def test_dry_run_json_proposes_framework_scope_and_preview_and_writes_nothing(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    code, draft = _json_run(
        capsys, site.base + "/docs", "-config", str(config), "-dry-run", "-json", "-allow-private-networks"
    )
    assert code == 2
    assert not config.exists()
    assert draft["written"] is False
    assert draft["framework"] == "sphinx"
    assert draft["confidence"] in ("high", "medium")
    entry = draft["config"]
    assert isinstance(entry, dict)
    assert entry["start_urls"] == [site.base + "/docs/"]  # the redirect's target
    assert entry["allowed_domain"] == "127.0.0.1"
    assert entry["allowed_path_prefix"] == "/docs/"
    assert entry["content_selector"] == "div.body"
    assert entry["disallowed_path_patterns"] == ["^/docs/fr/"]  # a translation under the prefix
    assert entry["max_depth"] == 3
    assert draft["sitemap_page_count"] == 14
    preview = draft["preview"]
    assert isinstance(preview, dict)
    assert preview["code_blocks_total"] == 2
    assert preview["code_blocks_kept"] == 2
    assert preview["headings"] == 4
    assert preview["nav_leak"] == 0
    assert "pip install widgets" in str(preview["markdown"])
    assert "Navigation" not in str(preview["markdown"])
    assert draft["site_key"] == "docs_docs"


def test_yes_writes_only_the_new_entry_into_a_commented_config(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(COMMENTED_CONFIG.read_bytes())
    code, result = _json_run(
        capsys, site.base + "/docs/", "-config", str(config), "-yes", "-json", "-site", "widgets"
    )
    assert code == 0
    assert result["written"] is True
    old_lines = COMMENTED_CONFIG.read_text().splitlines()
    new_lines = config.read_text().splitlines()
    lines = result["lines"]
    assert isinstance(lines, list)
    first, last = int(lines[0]), int(lines[1])
    assert new_lines[: first - 1] + new_lines[last:] == old_lines
    assert new_lines[first - 1].strip().startswith("# added by doc-scraper add")
    loaded = load_config(config)
    assert loaded.sites["widgets"].allowed_path_prefix == "/docs/"
    assert set(loaded.sites) == {"alpha_docs", "beta_docs", "widgets"}


def test_text_mode_without_a_terminal_shows_the_draft_and_asks_for_yes(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["add", site.base + "/docs/", "-config", str(tmp_path / "c.yaml"), "-allow-private-networks"])
    captured = capsys.readouterr()
    assert code == 1
    assert "allowed_path_prefix: /docs/" in captured.out
    assert "Preview of" in captured.out
    assert "pass -yes" in captured.err


def test_json_without_yes_prints_the_draft_and_exits_2(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = str(tmp_path / "c.yaml")
    code, draft = _json_run(
        capsys, site.base + "/docs/", "-config", config, "-json", "-allow-private-networks"
    )
    assert code == 2
    assert draft["written"] is False
    assert not (tmp_path / "c.yaml").exists()


def test_a_path_disallowed_by_robots_is_refused(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.robots = "User-agent: *\nDisallow: /docs/\n"
    code = main(
        ["add", site.base + "/docs/", "-config", str(tmp_path / "c.yaml"), "-yes", "-allow-private-networks"]
    )
    assert code == 1
    assert "robots.txt" in capsys.readouterr().err
    assert not (tmp_path / "c.yaml").exists()


def test_robots_rules_against_ai_crawlers_produce_a_warning(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.robots = (
        "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nAllow: /\nSitemap: {base}/sitemap.xml.gz\n"
    )
    config = str(tmp_path / "c.yaml")
    code, draft = _json_run(
        capsys, site.base + "/docs/", "-config", config, "-dry-run", "-json", "-allow-private-networks"
    )
    assert code == 2
    assert any("gptbot" in str(w) for w in draft["warnings"])  # type: ignore[attr-defined]


def test_an_error_in_json_mode_also_answers_on_stdout(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.robots = "User-agent: *\nDisallow: /\n"
    code, answer = _json_run(capsys, site.base + "/docs/", "-config", str(tmp_path / "c.yaml"), "-json",
                             "-allow-private-networks")  # fmt: skip
    assert code == 1
    assert answer["written"] is False
    assert "robots.txt" in str(answer["error"])


def test_loopback_is_refused_without_permission(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["add", site.base + "/docs/", "-config", str(tmp_path / "c.yaml"), "-dry-run"])
    assert code == 1
    assert "allow_private_networks" in capsys.readouterr().err


def test_permission_for_private_networks_is_taken_from_the_config(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(COMMENTED_CONFIG.read_bytes())  # sets allow_private_networks: true
    code, _ = _json_run(capsys, site.base + "/docs/", "-config", str(config), "-dry-run", "-json")
    assert code == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["-depth", "two", "http://127.0.0.1:9/"],
        ["-depth", "-3", "http://127.0.0.1:9/"],
        ["-bogus", "http://127.0.0.1:9/"],
        ["http://127.0.0.1:9/", "extra-word"],
        [],
        ["-yes", "-dry-run", "http://127.0.0.1:9/"],
        ["-site", "bad key!", "-dry-run", "http://127.0.0.1:9/"],
    ],
)
def test_flag_errors_exit_1_because_2_means_drafted(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["add", *argv])
    assert code == 1
    assert capsys.readouterr().err.startswith("error: ")


def test_an_existing_key_given_with_site_is_refused(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(COMMENTED_CONFIG.read_bytes())
    code = main(["add", site.base + "/docs/", "-config", str(config), "-yes", "-site", "alpha_docs"])
    assert code == 1
    assert "already exists" in capsys.readouterr().err
    assert config.read_bytes() == COMMENTED_CONFIG.read_bytes()


def test_a_new_config_file_is_created_valid_and_allows_the_loopback_host(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    code = main(["add", site.base + "/docs/", "-config", str(config), "-yes", "-allow-private-networks"])
    assert code == 0
    assert "Created" in capsys.readouterr().out
    data = yaml.safe_load(config.read_text())
    assert data["http_client_settings"] == {"allow_private_networks": True}
    assert load_config(config).sites["docs_docs"].content_selector == "div.body"


def test_the_added_site_crawls_successfully(
    site: FixtureSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    text = COMMENTED_CONFIG.read_text().replace("./crawled_docs", str(tmp_path / "out"))
    text = text.replace("default_delay_per_host: 10ms", "default_delay_per_host: 0s")
    config.write_text(text.replace("./crawler_state", str(tmp_path / "state")))
    assert main(["add", site.base + "/docs/", "-config", str(config), "-yes", "-site", "widgets"]) == 0
    capsys.readouterr()
    assert main(["crawl", "-config", str(config), "-site", "widgets", "-loglevel", "error"]) == 0
    written = sorted(
        p.relative_to(tmp_path / "out" / "widgets").as_posix() for p in (tmp_path / "out").rglob("*.md")
    )
    assert "index.md" in written
    assert any(name.startswith("guide/") for name in written)
    assert not any(name.startswith("fr/") for name in written)  # the proposed exclusion holds
