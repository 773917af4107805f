"""A held-out family for the generic extraction path: layouts written after the extractor was tuned.

``generic_set.py`` is the set the generic extractor was developed on. This family was written
afterwards and is not used for tuning: other skeletons (content before the sidebar in the DOM,
deep wrapper nesting, code tabs, text-heavy sidebars with descriptions, API-reference pages made
of signatures and parameter tables, short pages under heavy chrome), class and id names from
another vocabulary (German, abbreviations, BEM), and shorter content (a page cut to 50-600 words).

    .venv/bin/python benchmarks/generic_holdout.py [--out benchmarks/.generic-holdout]
    .venv/bin/python benchmarks/eval_generic.py --set benchmarks/.generic-holdout --by-group

``--real`` writes ``benchmarks/.generic-real`` instead: pages of real third-party manuals shipped
in Debian -doc packages (apache2-doc, sqlite3-doc, git-doc, vim-doc: ``apt-get install`` them),
gold being each manual's own content element minus the chrome inside it.
"""

# ruff: noqa: E501  (HTML templates read better as whole lines)
from __future__ import annotations

import argparse
import html
import importlib
import inspect
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from generic_set import (
    Page,
    Source,
    _gold_of,
    collect_sources,
    has,
    md_fragment,
    pandoc_fragment,
    rst_fragment,
    write_set,
)

TOPICS = [
    "Einstieg",
    "Konfiguration",
    "Schnittstellen",
    "Beispiele",
    "Betrieb",
    "Sicherheit",
    "Migration",
    "Werkzeuge",
    "Quickstart",
    "Runtime",
    "Plugins",
    "Storage",
    "Tokens",
    "Webhooks",
    "Limits",
    "Errors",
    "Billing",
    "Regions",
]


def _cut_words(frag: str, rng: random.Random) -> str:
    """Keep the fragment's first top-level blocks up to a random word budget (50-600 words)."""
    import lxml.html

    budget = rng.choice((50, 80, 120, 200, 350, 600))
    root = lxml.html.fragment_fromstring(frag, create_parent="div")
    kept: list[str] = []
    words = 0
    for child in root:
        if not isinstance(child.tag, str):
            continue
        kept.append(lxml.html.tostring(child, encoding="unicode"))
        words += len(child.text_content().split())
        if words >= budget:
            break
    return "".join(kept)


def api_fragment(module_name: str, rng: random.Random) -> str:
    """An API-reference page of a stdlib module: signatures, docstrings, parameter tables."""
    mod = importlib.import_module(module_name)
    parts = [f"<h1>{module_name}</h1>"]
    doc = inspect.getdoc(mod) or ""
    if doc:
        parts.append(f"<p>{html.escape(doc.split(chr(10) + chr(10))[0])}</p>")
    names = [n for n in sorted(dir(mod)) if not n.startswith("_") and inspect.isfunction(getattr(mod, n))]
    for name in names[: rng.randint(4, 10)]:
        fn = getattr(mod, name)
        try:
            sig = str(inspect.signature(fn))
        except (TypeError, ValueError):
            sig = "(...)"
        parts.append(f'<h3 id="{name}"><code>{html.escape(name + sig)}</code></h3>')
        fdoc = inspect.getdoc(fn) or "No description."
        parts.append(f"<p>{html.escape(fdoc.split(chr(10) + chr(10))[0])}</p>")
        params = list(inspect.signature(fn).parameters.values()) if sig != "(...)" else []
        if params:
            rows = "".join(
                f'<tr><td><code>{html.escape(p.name)}</code></td><td><a href="/types#{p.kind.name.lower()}">'
                f"{p.kind.name.lower().replace('_', ' ')}</a></td><td>"
                f"{'required' if p.default is inspect.Parameter.empty else html.escape(repr(p.default))}</td></tr>"
                for p in params
            )
            parts.append(
                f"<table><thead><tr><th>Parameter</th><th>Kind</th><th>Default</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>"
            )
        if rng.random() < 0.5:
            parts.append(
                f'<pre><code class="language-python">from {module_name} import {name}\n'
                f"result = {name}(...)\n</code></pre>"
            )
    return "\n".join(parts)


class Chrome:
    def __init__(self, site: str, rng: random.Random) -> None:
        self.site, self.rng = site, rng

    def links(self, n: int, base: str = "/handbuch/") -> str:
        items = []
        for _ in range(n):
            t = " ".join(self.rng.sample(TOPICS, self.rng.randint(1, 2)))
            items.append(f'<li class="eintrag"><a href="{base}{t.lower().replace(" ", "-")}">{t}</a></li>')
        return "<ul>" + "".join(items) + "</ul>"

    def described_sidebar(self) -> str:
        """A sidebar whose entries carry a sentence each (text-heavy, few links)."""
        items = "".join(
            f'<div class="kachel"><a href="/k/{i}">{self.rng.choice(TOPICS)}</a><span>Alles über '
            f"{self.rng.choice(TOPICS)} und {self.rng.choice(TOPICS)}, mit Beispielen für den Alltag.</span></div>"
            for i in range(self.rng.randint(4, 9))
        )
        return f'<div class="seitenleiste">{items}</div>'

    def header(self) -> str:
        return (
            f'<div class="kopfzeile"><a class="marke" href="/">{self.site}</a>{self.links(6, "/")}'
            '<div class="suche"><input type="text" placeholder="Suchen"></div></div>'
        )

    def footer(self) -> str:
        return (
            '<div class="fusszeile"><p>Impressum: Beispiel GmbH, Musterstraße 1, 12345 Berlin. Registergericht '
            "Amtsgericht Charlottenburg. Alle Angaben ohne Gewähr; Inhalte unter der Lizenz CC BY-SA 4.0 "
            f"verfügbar, sofern nicht anders angegeben.</p>{self.links(5, '/info/')}</div>"
        )

    def cookies(self) -> str:
        return (
            '<div class="hinweis-datenschutz"><p>Diese Website verwendet Cookies und ähnliche Technologien, um '
            "Inhalte zu personalisieren und Zugriffe zu analysieren. Weitere Informationen finden Sie in unserer "
            'Datenschutzerklärung.</p><a href="/dse">Mehr erfahren</a><a href="#ok">Einverstanden</a></div>'
        )

    def status_box(self) -> str:
        return (
            '<div class="c-stat__box"><h4>Systemstatus</h4><p>All systems operational. The API, dashboard and '
            "build workers are running normally; last incident resolved three days ago.</p>"
            '<a href="/status">Status page</a></div>'
        )

    def help_box(self) -> str:
        return (
            '<div class="c-help"><p>Need help? Our support engineers answer within one business day. Open a '
            'ticket from the console or write to the community forum.</p><a href="/support">Contact support</a></div>'
        )

    def contributors(self) -> str:
        names = ["mkoch", "jlee", "r-santos", "tanaka", "olga_p", "devin"]
        links = "".join(
            f'<a class="avatar" href="https://example.com/u/{n}">{n}</a> ' for n in self.rng.sample(names, 4)
        )
        return f'<div class="b-article__people"><span>Contributors:</span> {links}</div>'

    def updated(self) -> str:
        return f'<div class="b-article__meta">Zuletzt aktualisiert: {self.rng.randint(1, 28)}.0{self.rng.randint(1, 9)}.2026</div>'

    def inline_toc(self, frag: str) -> str:
        import lxml.html

        root = lxml.html.fragment_fromstring(frag, create_parent="div")
        heads = [" ".join(h.text_content().split()) for h in root.iter("h2", "h3")][:12]
        if len(heads) < 2:
            return ""
        items = "".join(f'<li><a href="#s{i}">{html.escape(h)}</a></li>' for i, h in enumerate(heads))
        return f'<div class="b-article__toc"><strong>Inhalt</strong><ol>{items}</ol></div>'


def tabs(frag: str) -> str:
    """Wrap each code block in a tab widget with a button bar (buttons are chrome)."""
    return frag.replace(
        "<pre",
        '<div class="tabs"><div class="tab-bar"><button>Python</button>'
        '<button>Shell</button></div><div class="tab-panel"><pre',
    ).replace("</pre>", "</pre></div></div>")


def page(kind: str, site: str, title: str, frag: str, rng: random.Random) -> str:
    c = Chrome(site, rng)
    h1 = "" if "<h1" in frag[:300] else f"<h1>{html.escape(title)}</h1>"
    if kind == "content-first":
        body = (
            f'<div class="l-grid"><div class="l-grid__main"><div class="b-article">{c.inline_toc(frag)}{h1}{frag}'
            f'{c.updated()}{c.contributors()}</div></div><div class="l-grid__aside">{c.links(25)}</div>'
            f'<div class="l-grid__top">{c.header()}</div></div>{c.footer()}{c.cookies() if rng.random() < 0.5 else ""}'
        )
    elif kind == "deep-wrappers":
        inner = f"{h1}{tabs(frag)}"
        for depth in range(rng.randint(6, 12)):
            inner = f'<div class="w{depth} {"x" * (depth % 3)}">{inner}</div>'
        body = (
            f'{c.header()}<div class="frame"><div class="frame-l">{c.links(18)}</div><div class="frame-c">{inner}'
            f'</div><div class="frame-r">{c.status_box()}{c.help_box()}</div></div>{c.footer()}'
        )
    elif kind == "described-sidebar":
        body = (
            f'{c.cookies()}{c.header()}<div class="haupt">{c.described_sidebar()}<div class="inhalt">{h1}{frag}'
            f"{c.updated()}</div></div>{c.footer()}"
        )
    elif kind == "short-heavy":
        body = (
            f'{c.cookies()}{c.header()}<div class="haupt"><div class="navi">{c.links(30)}</div>'
            f'<div class="inhalt">{h1}{frag}</div><div class="rechts">{c.help_box()}</div></div>{c.footer()}'
        )
    else:  # "api-reference"
        body = (
            f'{c.header()}<table class="lay"><tr><td class="m">{c.links(40, "/api/")}</td><td class="d">'
            f"{h1}{frag}{c.contributors()}</td></tr></table>{c.footer()}"
        )
    return (
        f'<!DOCTYPE html><html lang="de"><head><meta charset="utf-8"><title>{html.escape(title)} – {site}</title>'
        f"</head><body>{body}</body></html>"
    )


KINDS = ("content-first", "deep-wrappers", "described-sidebar", "short-heavy", "api-reference")
API_MODULES = (
    "textwrap",
    "shlex",
    "fnmatch",
    "glob",
    "bisect",
    "colorsys",
    "heapq",
    "keyword",
    "html",
    "base64",
    "binascii",
    "calendar",
    "copy",
    "difflib",
    "filecmp",
    "fractions",
    "gzip",
    "hashlib",
    "json",
    "locale",
    "mimetypes",
    "operator",
    "os.path",
    "pprint",
    "quopri",
    "random",
    "secrets",
    "shutil",
    "statistics",
    "string",
    "tempfile",
    "uuid",
    "zipfile",
    "zlib",
)


def build(out: Path, seed: int, sites: int) -> dict[str, int]:
    rng = random.Random(seed)
    sources = [s for s in collect_sources() if len(s.text.split()) >= 150]
    rng.shuffle(sources)
    sources = sources[::-1]  # the other end of the list than generic_set takes from
    pages: list[Page] = []
    modules = list(API_MODULES)
    rng.shuffle(modules)
    for i in range(sites):
        kind = KINDS[i % len(KINDS)]
        site = f"{rng.choice(TOPICS).lower()}-{i}"
        for j in range(2 if i % 4 == 0 else 1):
            try:
                if kind == "api-reference":
                    module = modules[(i // len(KINDS) + j * 7) % len(modules)]
                    frag, title, src_name = api_fragment(module, rng), module, module
                else:
                    src: Source = sources[(i * 2 + j) % len(sources)]
                    maker = rng.choice(("md", "pandoc")) if has("pandoc") else "md"
                    if src.kind == "rst":
                        frag = rst_fragment(src)
                    else:
                        frag = pandoc_fragment(src) if maker == "pandoc" else md_fragment(src, "plain")
                    frag = (
                        _cut_words(frag, rng)
                        if kind in ("short-heavy", "described-sidebar") or rng.random() < 0.4
                        else frag
                    )
                    title, src_name = src.package.replace("-", " ").title(), f"{src.package}:{src.name}"
                gold, codes = _gold_of(frag)
            except Exception as exc:  # one source failing skips it
                print("note:", exc, file=sys.stderr)
                continue
            if "<h1" not in frag[:300]:
                gold = title + "\n" + gold
            if len(gold.split()) < 25:
                continue
            pages.append(
                Page(
                    f"holdout-{kind}/{site}",
                    f"holdout:{kind}",
                    src_name,
                    page(kind, site, title, frag, random.Random(seed * 100 + i * 3 + j)),
                    gold,
                    codes,
                )
            )
    return write_set(out, pages)


# Real manuals from Debian -doc packages (third-party templates): gold is each manual's content element.
REAL_MANUALS: dict[str, tuple[tuple[str, ...], str, str]] = {
    # package: (globs, xpath of the content, xpath of chrome inside it)
    "apache2-doc": (
        ("/usr/share/doc/apache2-doc/manual/en/*.html", "/usr/share/doc/apache2-doc/manual/en/mod/*.html"),
        "//div[@id='page-content']",
        ".//div[@id='quickview'] | .//div[@class='toplang'] | .//div[@class='top'] | .//div[@class='bottomlang']"
        " | .//div[@id='comments_section']",
    ),
    "sqlite3-doc": (
        ("/usr/share/doc/sqlite3/*.html",),
        "//body",
        ".//div[contains(@class,'nosearch')] | .//div[contains(@class,'rightsidebar')] | .//script"
        " | .//p[small[starts-with(normalize-space(.), 'This page last modified')]]",
    ),
    "git-doc": (
        ("/usr/share/doc/git-doc/git-*.html",),
        "//div[@id='header'] | //div[@id='content']",
        ".//div[@id='toc']",
    ),
    "vim-doc": (("/usr/share/doc/vim/html/*.html",), "//h1 | //pre", ""),
}


def build_real(out: Path, seed: int, per_package: int) -> dict[str, int]:
    """Pages of real manuals shipped in Debian -doc packages (those installed here)."""
    from generic_set import _gold_from_page

    rng = random.Random(seed)
    pages: list[Page] = []
    for package, (globs, content, drop) in REAL_MANUALS.items():
        files = sorted(
            p
            for pattern in globs
            for p in Path(pattern).parent.glob(Path(pattern).name)
            if 4000 < p.stat().st_size < 150_000 and p.name != "index.html"
        )
        if not files:
            print(f"note: {package} not installed (apt-get install {package})", file=sys.stderr)
            continue
        for path in rng.sample(files, min(per_package, len(files))):
            text = path.read_text(errors="replace")
            try:
                gold, codes = _gold_from_page(text, content, drop)
            except RuntimeError as exc:
                print(f"note: {path}: {exc}", file=sys.stderr)
                continue
            if len(gold.split()) >= 40:
                pages.append(Page(f"real/{package}", f"real:{package}", str(path), text, gold, codes))
    return write_set(out, pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / ".generic-holdout")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--sites", type=int, default=50)
    parser.add_argument(
        "--real", action="store_true", help="pages of real manuals from Debian -doc packages instead"
    )
    args = parser.parse_args(argv)
    if args.real:
        out = args.out if args.out != parser.get_default("out") else Path(__file__).parent / ".generic-real"
        print(json.dumps(build_real(out, args.seed, 10)))
        return 0
    print(json.dumps(build(args.out, args.seed, args.sites)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
