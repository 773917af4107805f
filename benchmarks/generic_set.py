"""Build the test set of the generic extraction path: pages no framework profile claims, with gold.

Every page is written as ``OUT/pages/NNNN.html`` with ``OUT/gold/NNNN.txt`` (the main text, one
block a line) and ``OUT/gold/NNNN.code.json`` (the code blocks' text); ``OUT/manifest.jsonl``
names the site, the generator or template and the source of each page. Pages that
``doc_scraper.extract.detect`` assigns to a known framework are left out (and counted).

Two kinds of pages, all built offline from text on this machine (README/markdown and rst files and
package descriptions of installed Python packages, Perl modules' POD, man pages, stdlib modules):

* real generators run as a user would: docutils (html4 + html5 writers), python-markdown,
  pandoc (standalone, with TOC), asciidoctor, makeinfo (split HTML), perl pod2html,
  groff -Thtml, pydoc -w, pdoc. Gold is the part of the output the generator made from the
  source (its known content element), i.e. the source rendered to text;
* hand-made sites: one of several layout skeletons (HTML5 semantic, div soup, table layout,
  bootstrap-like grid, blog, wiki, card sections, minimal), a naming style (semantic tags,
  descriptive classes, hashed CSS-in-JS classes) and a random set of widgets (top nav, sidebar
  with many links, right TOC, breadcrumbs, cookie banner, edit link, search, newsletter,
  related posts, comments, feedback, prev/next, footer with link columns, ads), wrapped around a
  content fragment made by one of the generators above. Gold is the fragment's text.

    .venv/bin/python benchmarks/generic_set.py [--out benchmarks/.generic-set] [--seed 7]

Needs (bench only): markdown, docutils, pdoc in the venv; pandoc, asciidoctor, texinfo, groff
(Debian packages) and perl's pod2html; a generator that is missing is skipped with a note.
"""

# ruff: noqa: E501  (HTML templates read better as whole lines)
from __future__ import annotations

import argparse
import email.parser
import gzip
import html
import json
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import lxml.etree
import lxml.html

BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "pre",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "table",
        "tr",
        "td",
        "th",
        "thead",
        "tbody",
        "blockquote",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "nav",
        "aside",
        "br",
        "hr",
        "figure",
        "figcaption",
        "details",
        "summary",
        "form",
    ]
)
SKIP_TAGS = frozenset(("script", "style", "noscript", "template", "head", "title"))


# ---------------------------------------------------------------------------------------------
# text of an element (gold and plain-text comparisons use the same function)


def element_text(el: lxml.etree._Element) -> str:
    """Visible text with a line break around every block element."""
    out: list[str] = []

    def walk(node: lxml.etree._Element) -> None:
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag in SKIP_TAGS or not isinstance(node.tag, str):
            return
        block = tag in BLOCK_TAGS
        if block:
            out.append("\n")
        if node.text:
            out.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                out.append(child.tail)
        if block:
            out.append("\n")

    walk(el)
    text = "".join(out)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


def code_blocks(el: lxml.etree._Element) -> list[str]:
    """Text of every outermost <pre> (line-number cells of Pygments tables left out)."""
    codes: list[str] = []
    for pre in el.iter("pre"):
        if any(a.tag == "pre" for a in pre.iterancestors()):
            continue
        cls = " ".join(a.get("class") or "" for a in pre.iterancestors("td", "div"))
        if "linenos" in cls or "lineno" in (pre.get("class") or ""):
            continue
        text = "".join(pre.itertext()).strip("\n")
        if text.strip():
            codes.append(text)
    return codes


# ---------------------------------------------------------------------------------------------
# sources of text on this machine


@dataclass
class Source:
    package: str
    name: str
    kind: str  # "md" or "rst"
    text: str


def _site_packages() -> list[Path]:
    roots = {Path(sysconfig.get_paths()["purelib"])}
    roots |= {Path(p) for p in sys.path if p.endswith("site-packages")}
    return sorted(r for r in roots if r.is_dir())


def collect_sources(limit_chars: int = 30_000) -> list[Source]:
    """Markdown and rst documents of installed Python packages and Debian doc folders."""
    found: dict[str, Source] = {}
    for root in _site_packages():
        for meta in sorted(root.glob("*.dist-info/METADATA")):
            msg = email.parser.Parser().parsestr(meta.read_text(errors="replace"))
            body = msg.get_payload()
            if not isinstance(body, str) or len(body) < 1500:
                continue
            ctype = (msg.get("Description-Content-Type") or "").lower()
            kind = "md" if "markdown" in ctype else "rst" if ("rst" in ctype or not ctype) else ""
            if not kind:
                continue
            pkg = (msg.get("Name") or meta.parent.name).lower()
            found.setdefault(f"{pkg}:description", Source(pkg, "description", kind, body[:limit_chars]))
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() not in (".md", ".rst") or not path.is_file():
                continue
            rel = path.relative_to(root)
            text = path.read_text(errors="replace")
            if len(text) < 1500 or "LICENSE" in path.name.upper():
                continue
            pkg = rel.parts[0].split("-")[0].lower()
            kind = "md" if path.suffix.lower() == ".md" else "rst"
            found.setdefault(f"{pkg}:{rel}", Source(pkg, str(rel), kind, text[:limit_chars]))
    for path in sorted(Path("/usr/share/doc").glob("*/*")):
        if path.suffix.lower() == ".md" and path.is_file():
            text = path.read_text(errors="replace")
            if len(text) >= 1500:
                pkg = path.parent.name
                found.setdefault(f"{pkg}:{path.name}", Source(pkg, path.name, "md", text[:limit_chars]))
    return list(found.values())


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n\n", 0, limit)
    return text[: cut if cut > 0 else limit]


# ---------------------------------------------------------------------------------------------
# content fragments: (title, html fragment) made from a source by a generator


def md_fragment(src: Source, variant: str) -> str:
    import markdown

    ext: list[object] = ["tables", "fenced_code", "def_list", "admonition"]
    if variant == "codehilite":
        from markdown.extensions.codehilite import CodeHiliteExtension

        ext = ["tables", "def_list", "admonition", "fenced_code", CodeHiliteExtension(linenums=False)]
    elif variant == "codehilite-linenos":
        from markdown.extensions.codehilite import CodeHiliteExtension

        ext = ["tables", "fenced_code", CodeHiliteExtension(linenums=True)]
    return str(markdown.markdown(src.text, extensions=ext))


def rst_parts(src: Source, writer: str = "html5") -> dict[str, str]:
    from docutils.core import publish_parts

    settings = {
        "report_level": 5,
        "halt_level": 5,
        "raw_enabled": False,
        "file_insertion_enabled": False,
        "syntax_highlight": "short",
        "_disable_config": True,
    }
    return dict(publish_parts(src.text, writer_name=writer, settings_overrides=settings))


def rst_fragment(src: Source) -> str:
    parts = rst_parts(src)
    title = parts.get("title") or ""
    return (f"<h1>{title}</h1>\n" if title else "") + parts["body"]


def pandoc_fragment(src: Source) -> str:
    fmt = "gfm" if src.kind == "md" else "rst"
    return _run(["pandoc", "-f", fmt, "-t", "html5", "--wrap=none"], src.text)


def _run(cmd: list[str], stdin: str, cwd: str | None = None) -> str:
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60, cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {proc.stderr[:200]}")
    return proc.stdout


def has(tool: str) -> bool:
    return shutil.which(tool) is not None


# ---------------------------------------------------------------------------------------------
# page records


@dataclass
class Page:
    site: str
    generator: str
    source: str
    html: str
    gold: str
    codes: list[str]
    meta: dict[str, str] = field(default_factory=dict)


def _gold_of(fragment: str) -> tuple[str, list[str]]:
    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    return element_text(root), code_blocks(root)


def _doc(html_text: str) -> lxml.etree._Element:
    return lxml.html.document_fromstring(html_text.encode("utf-8"))


def _gold_from_page(html_text: str, xpath: str, drop: str = "") -> tuple[str, list[str]]:
    """Gold from the generator's known content element(s) of a full page."""
    doc = _doc(html_text)
    els = doc.xpath(xpath)
    if not els:
        raise RuntimeError(f"content element {xpath} not found")
    texts: list[str] = []
    codes: list[str] = []
    for el in els:
        if drop:
            for junk in el.xpath(drop):
                junk.getparent().remove(junk)
        texts.append(element_text(el))
        codes.extend(code_blocks(el))
    return "\n".join(texts), codes


# ---------------------------------------------------------------------------------------------
# real generators, whole pages


def gen_docutils(src: Source, writer: str) -> Page:
    from docutils.core import publish_string

    settings = {
        "report_level": 5,
        "halt_level": 5,
        "raw_enabled": False,
        "file_insertion_enabled": False,
        "syntax_highlight": "short",
        "_disable_config": True,
        "embed_stylesheet": False,
        "stylesheet_path": "",
    }
    out = publish_string(src.text, writer_name=writer, settings_overrides=settings).decode("utf-8")
    xp = "//main" if writer == "html5" and "<main" in out else "//div[contains(@class,'document')]"
    gold, codes = _gold_from_page(out, xp)
    return Page(f"docutils-{writer}/{src.package}", f"docutils-{writer}", src.name, out, gold, codes)


def gen_markdown_bare(src: Source, variant: str) -> Page:
    frag = md_fragment(src, variant)
    title = html.escape(src.package)
    out = (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title></head>\n"
        f"<body>\n{frag}\n</body></html>\n"
    )
    gold, codes = _gold_of(frag)
    return Page(f"markdown-{variant}/{src.package}", f"python-markdown-{variant}", src.name, out, gold, codes)


def gen_pandoc(src: Source, toc: bool) -> Page:
    fmt = "gfm" if src.kind == "md" else "rst"
    cmd = ["pandoc", "-f", fmt, "-t", "html5", "-s", "--wrap=none", "--metadata", f"title={src.package}"]
    if toc:
        cmd.append("--toc")
    out = _run(cmd, src.text)
    gold, codes = _gold_from_page(out, "//body", drop=".//nav[@id='TOC']")
    return Page(f"pandoc{'-toc' if toc else ''}/{src.package}", "pandoc", src.name, out, gold, codes)


def gen_asciidoctor(src: Source) -> Page:
    fmt = "gfm" if src.kind == "md" else "rst"
    adoc = _run(
        ["pandoc", "-f", fmt, "-t", "asciidoc", "-s", "--wrap=none", "--metadata", f"title={src.package}"],
        src.text,
    )
    out = _run(["asciidoctor", "-a", "toc=left", "-a", "linkcss", "-o", "-", "-"], adoc)
    gold, codes = _gold_from_page(out, "//div[@id='header']/h1 | //div[@id='content']")
    return Page(f"asciidoctor/{src.package}", "asciidoctor", src.name, out, gold, codes)


def gen_makeinfo(src: Source, tmp: Path) -> list[Page]:
    fmt = "gfm" if src.kind == "md" else "rst"
    texi = _run(
        ["pandoc", "-f", fmt, "-t", "texinfo", "-s", "--wrap=none", "--metadata", f"title={src.package}"],
        src.text,
    )
    work = tmp / f"texi-{src.package}"
    work.mkdir(parents=True, exist_ok=True)
    (work / "doc.texi").write_text(texi)
    subprocess.run(
        ["makeinfo", "--html", "--split=chapter", "--force", "-o", "html", "doc.texi"],
        cwd=work,
        capture_output=True,
        timeout=60,
        check=False,
    )
    pages: list[Page] = []
    for path in sorted((work / "html").glob("*.html"))[:3]:
        out = path.read_text(errors="replace")
        if "Redirect" in out[:600] and len(out) < 2000:
            continue
        gold, codes = _gold_from_page(
            out,
            "//body",
            drop=".//div[contains(@class,'nav-panel')] | .//div[@class='header'] "
            "| .//ul[contains(@class,'toc')] | .//div[@class='contents'] | .//div[contains(@class,'element-contents')]",
        )
        if len(gold.split()) >= 40:
            pages.append(
                Page(f"makeinfo/{src.package}", "makeinfo", f"{src.name}#{path.name}", out, gold, codes)
            )
    return pages


def gen_pod2html(module_path: Path, tmp: Path) -> Page:
    proc = subprocess.run(
        ["pod2html", f"--infile={module_path}", "--quiet", f"--cachedir={tmp}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    out = proc.stdout
    gold, codes = _gold_from_page(out, "//body", drop=".//ul[@id='index']")
    pkg = module_path.stem
    return Page(f"pod2html/{pkg}", "pod2html", str(module_path), out, gold, codes)


def gen_groff(man_path: Path, tmp: Path) -> Page:
    raw = gzip.decompress(man_path.read_bytes()).decode("utf-8", "replace")
    proc = subprocess.run(  # in tmp: grohtml writes images of tables and equations to its cwd
        ["groff", "-Thtml", "-man"],
        input=raw,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp,
    )
    out = proc.stdout
    if "<hr>" not in out:
        raise RuntimeError("groff gave no page")
    # Before the first <hr>: the generated index of section links.
    doc = _doc(out)
    body = doc.find("body")
    first_hr = body.find("hr") if body is not None else None
    if body is None or first_hr is None:
        raise RuntimeError("groff page without body/hr")
    frag = lxml.html.fromstring("<div></div>")
    collecting = False
    for child in list(body):
        if child.tag == "h1" and not collecting:
            frag.append(child.__copy__())
        if child is first_hr:
            collecting = True
            continue
        if collecting:
            frag.append(child.__copy__())
    frag.text = None
    gold, codes = element_text(frag), code_blocks(frag)
    pkg = man_path.name.split(".")[0]
    return Page(f"groff/{pkg}", "groff", str(man_path), out, gold, codes)


def gen_pydoc(module: str, tmp: Path) -> Page:
    subprocess.run(
        [sys.executable, "-m", "pydoc", "-w", module], cwd=tmp, capture_output=True, timeout=60, check=False
    )
    out = (tmp / f"{module}.html").read_text(errors="replace")
    gold, codes = _gold_from_page(out, "//body")
    return Page(f"pydoc/{module}", "pydoc", module, out, gold, codes)


def gen_pdoc(module: str, tmp: Path) -> Page:
    target = tmp / f"pdoc-{module}"
    subprocess.run(
        [sys.executable, "-m", "pdoc", "--no-show-source", "-o", str(target), module],
        capture_output=True,
        timeout=120,
        check=False,
    )
    path = target / (module.replace(".", "/") + ".html")
    out = path.read_text(errors="replace")
    gold, codes = _gold_from_page(out, "//main")
    return Page(f"pdoc/{module}", "pdoc", module, out, gold, codes)


_TEXI_DROP = (
    ".//div[contains(@class,'nav-panel')] | .//div[@class='header'] | .//ul[contains(@class,'toc')] "
    "| .//div[@class='contents'] | .//div[contains(@class,'element-contents')] | .//table[@class='menu']"
)


def gen_debian_doc(package: str, path: Path) -> Page:
    """A page of an HTML manual shipped in a Debian package; gold: the manual's content element."""
    out = path.read_text(errors="replace")
    if package == "nodejs":
        gold, codes = _gold_from_page(out, "//div[@id='apicontent']")
    else:  # texinfo manuals (texinfo, libffi)
        gold, codes = _gold_from_page(out, "//body", drop=_TEXI_DROP)
    return Page(f"debian-doc/{package}", f"debian-doc-{package}", str(path), out, gold, codes)


def debian_doc_pages(rng: random.Random, per_package: int = 6) -> list[tuple[str, Path]]:
    picks: list[tuple[str, Path]] = []
    globs = {
        "nodejs": "/usr/share/doc/nodejs/api/*.html",
        "texinfo": "/usr/share/doc/texinfo/texinfo.html/*.html",
        "libffi8": "/usr/share/doc/libffi8/html/*.html",
    }
    for package, pattern in globs.items():
        folder = Path(pattern).parent
        files = sorted(p for p in folder.glob(Path(pattern).name) if 3000 < p.stat().st_size < 120_000)
        files = [p for p in files if p.name not in ("index.html", "all.html")]
        picks.extend((package, p) for p in rng.sample(files, min(per_package, len(files))))
    return picks


# ---------------------------------------------------------------------------------------------
# hand-made sites

WORDS = [
    "guide",
    "api",
    "reference",
    "install",
    "setup",
    "config",
    "deploy",
    "cli",
    "plugins",
    "auth",
    "tokens",
    "sessions",
    "cache",
    "storage",
    "queue",
    "events",
    "hooks",
    "logging",
    "metrics",
    "tracing",
    "testing",
    "release",
    "migrate",
    "upgrade",
    "faq",
    "support",
    "pricing",
    "blog",
    "community",
    "changelog",
    "security",
    "errors",
    "limits",
    "webhooks",
    "sdk",
    "python",
    "javascript",
    "go",
    "rust",
    "overview",
    "tutorial",
    "examples",
    "concepts",
    "architecture",
    "glossary",
]


def _hashed(rng: random.Random) -> str:
    return "css-" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))


@dataclass
class Style:
    naming: str  # "semantic", "descriptive", "hashed"
    rng: random.Random

    def name(self, role: str, *alternatives: str) -> str:
        if self.naming == "hashed":
            return _hashed(self.rng) + " " + _hashed(self.rng)
        return self.rng.choice(alternatives or (role,))

    def tag(self, semantic: str) -> str:
        return semantic if self.naming == "semantic" else "div"


class Widgets:
    """Boilerplate blocks with real-looking text, named per the site's style."""

    def __init__(self, site: str, style: Style, rng: random.Random, phrases: list[str]) -> None:
        self.site, self.s, self.rng, self.phrases = site, style, rng, phrases

    def _links(self, n: int, prefix: str = "/docs/") -> list[tuple[str, str]]:
        out = []
        for _ in range(n):
            words = self.rng.sample(WORDS, self.rng.randint(1, 3))
            out.append(
                (
                    prefix + "-".join(words),
                    " ".join(w.capitalize() if i == 0 else w for i, w in enumerate(words)),
                )
            )
        return out

    def _ul(self, links: list[tuple[str, str]], cls: str = "") -> str:
        c = f' class="{cls}"' if cls else ""
        return (
            f"<ul{c}>" + "".join(f'<li><a href="{h}">{html.escape(t)}</a></li>' for h, t in links) + "</ul>"
        )

    def _sentence(self) -> str:
        return html.escape(self.rng.choice(self.phrases)) if self.phrases else "Lorem ipsum dolor sit amet."

    def topnav(self) -> str:
        t = self.s.tag("nav")
        role = "" if t == "nav" or self.rng.random() < 0.5 else ' role="navigation"'
        search = self.search() if self.rng.random() < 0.5 else ""
        return (
            f'<{t} class="{self.s.name("nav", "navbar", "topbar", "site-header-menu", "hdr-links")}"{role}>'
            f'<a class="{self.s.name("brand", "logo", "brand")}" href="/">{self.site}</a>'
            + self._ul(self._links(self.rng.randint(4, 9), "/"))
            + search
            + f"</{t}>"
        )

    def sidebar(self) -> str:
        t = self.s.tag("aside")
        groups = []
        for _ in range(self.rng.randint(2, 6)):
            head = self.rng.choice(WORDS).capitalize()
            groups.append(
                f'<div class="{self.s.name("grp", "menu-group", "sb-section", "toc-part")}">'
                f'<p class="{self.s.name("grp-t", "caption", "group-title")}">{head}</p>'
                + self._ul(self._links(self.rng.randint(4, 14)))
                + "</div>"
            )
        return f'<{t} class="{self.s.name("side", "sidebar", "left-col", "docs-menu", "sidenav")}">{"".join(groups)}</{t}>'

    def toc(self, headings: list[str]) -> str:
        if not headings:
            return ""
        t = self.s.tag("aside")
        links = [("#" + re.sub(r"\W+", "-", h.lower()).strip("-"), h) for h in headings[:20]]
        return (
            f'<{t} class="{self.s.name("toc", "toc", "on-this-page", "page-outline", "right-rail")}">'
            f"<p>On this page</p>{self._ul(links)}</{t}>"
        )

    def breadcrumbs(self, title: str) -> str:
        crumbs = " <span>/</span> ".join(f'<a href="{h}">{html.escape(t)}</a>' for h, t in self._links(2))
        return (
            f'<div class="{self.s.name("bc", "breadcrumbs", "crumbs", "path-bar")}"><a href="/">Home</a>'
            f" <span>/</span> {crumbs} <span>/</span> <span>{html.escape(title)}</span></div>"
        )

    def cookie(self) -> str:
        return (
            f'<div class="{self.s.name("cookie", "cookie-banner", "consent", "gdpr-bar", "cc-window")}" '
            f'id="{self.s.name("cookie", "cookie-notice", "consent-bar")}"><p>We use cookies to improve your '
            "experience, analyse traffic and show personalised content. By continuing to browse this site "
            'you agree to our use of cookies. <a href="/privacy">Privacy policy</a></p>'
            '<button>Accept all</button><button>Reject</button><a href="/cookies">Settings</a></div>'
        )

    def edit(self) -> str:
        return (
            f'<div class="{self.s.name("edit", "page-actions", "edit-link", "gh-edit")}"><a href="https://github.com/'
            f'example/{self.site}/edit/main/docs/page.md">Edit this page on GitHub</a> · '
            '<a href="/issues/new">Report an issue</a></div>'
        )

    def search(self) -> str:
        return (
            f'<form class="{self.s.name("search", "search-form", "site-search")}" action="/search">'
            '<input type="search" name="q" placeholder="Search the docs..."><span>Ctrl K</span></form>'
        )

    def newsletter(self) -> str:
        return (
            f'<div class="{self.s.name("nl", "newsletter", "signup-box", "subscribe")}"><h3>Stay up to date</h3>'
            f"<p>Subscribe to the {self.site} newsletter and get release notes, tips and event invitations "
            "delivered to your inbox once a month. No spam, unsubscribe at any time.</p>"
            '<form><input type="email" placeholder="you@example.com"><button>Subscribe</button></form></div>'
        )

    def related(self) -> str:
        items = "".join(
            f'<li><a href="{h}">{html.escape(t)}</a><p>{self._sentence()}</p></li>'
            for h, t in self._links(self.rng.randint(3, 5), "/blog/")
        )
        return f'<div class="{self.s.name("rel", "related-posts", "see-also-box", "more-reading")}"><h3>Related articles</h3><ul>{items}</ul></div>'

    def comments(self) -> str:
        names = ["alice", "bob_dev", "Carla M.", "dmitri", "eve42", "Frank"]
        items = "".join(
            f'<div class="{self.s.name("cm", "comment", "reply", "c-item")}"><span class="author">{self.rng.choice(names)}</span>'
            f'<span class="date">{self.rng.randint(2, 11)} months ago</span><p>{self._sentence()} {self._sentence()}</p>'
            '<a href="#reply">Reply</a></div>'
            for _ in range(self.rng.randint(2, 5))
        )
        t = self.s.tag("section")
        return f'<{t} class="{self.s.name("cms", "comments", "discussion", "responses")}" id="comments"><h2>{self.rng.randint(2, 40)} Comments</h2>{items}</{t}>'

    def feedback(self) -> str:
        return (
            f'<div class="{self.s.name("fb", "helpful", "page-feedback", "rating")}"><p>Was this page helpful?</p>'
            "<button>Yes</button><button>No</button></div>"
        )

    def prevnext(self) -> str:
        (h1, t1), (h2, t2) = self._links(2)
        return (
            f'<div class="{self.s.name("pn", "pager", "prev-next", "page-nav")}"><a href="{h1}">« Previous: {html.escape(t1)}</a>'
            f'<a href="{h2}">Next: {html.escape(t2)} »</a></div>'
        )

    def footer(self) -> str:
        t = self.s.tag("footer")
        cols = "".join(
            f'<div class="{self.s.name("fc", "footer-col", "col")}"><h4>{self.rng.choice(WORDS).capitalize()}</h4>{self._ul(self._links(4, "/"))}</div>'
            for _ in range(self.rng.randint(2, 4))
        )
        return (
            f'<{t} class="{self.s.name("foot", "site-footer", "bottom", "ftr")}">{cols}<p>© 2026 {self.site} '
            "Project. Content licensed under CC BY 4.0; code samples under the MIT license. "
            'Built with care by the community.</p><a href="/terms">Terms</a> <a href="/privacy">Privacy</a></{t}>'
        )

    def ad(self) -> str:
        return (
            f'<div class="{self.s.name("ad", "sponsor", "promo", "ad-slot")}"><p>Sponsored: Deploy your '
            f"{self.rng.choice(WORDS)} apps in seconds with CloudThing. Free tier available, no credit card "
            'required.</p><a href="https://ads.example.com/x">Try it free</a></div>'
        )

    def announcement(self) -> str:
        return (
            f'<div class="{self.s.name("ann", "announcement", "banner-top", "notice-bar")}">Version 5.0 is out! '
            f'<a href="/blog/v5">Read the release notes</a></div>'
        )

    def version(self) -> str:
        return (
            '<select class="version"><option>latest</option><option>4.2</option><option>4.1</option>'
            "<option>3.x</option></select>"
        )


SKELETONS = ("html5", "divsoup", "table", "grid", "blog", "wiki", "cards", "minimal", "app")


def _headings(frag: str) -> list[str]:
    root = lxml.html.fragment_fromstring(frag, create_parent="div")
    return [" ".join("".join(h.itertext()).split()) for h in root.iter("h2", "h3")]


def _split_sections(frag: str) -> list[str]:
    """The fragment's top-level children, cut before every h2 (for the card layout)."""
    root = lxml.html.fragment_fromstring(frag, create_parent="div")
    parts: list[list[str]] = [[]]
    if root.text and root.text.strip():
        parts[0].append(html.escape(root.text))
    for child in root:
        if child.tag in ("h2",) and parts[-1]:
            parts.append([])
        parts[-1].append(lxml.html.tostring(child, encoding="unicode"))
    return ["".join(p) for p in parts if p]


def hand_page(
    site: str, skeleton: str, naming: str, seed: int, title: str, frag: str, phrases: list[str]
) -> str:
    rng = random.Random(seed)
    style = Style(naming, rng)
    w = Widgets(site, style, rng, phrases)
    pick = lambda p: rng.random() < p  # noqa: E731
    heads = _headings(frag)
    has_h1 = "<h1" in frag[:400]
    h1 = "" if has_h1 else f"<h1>{html.escape(title)}</h1>"
    top = (w.cookie() if pick(0.35) else "") + (w.announcement() if pick(0.25) else "")
    nav = w.topnav() if pick(0.85) else ""
    pre_content = (w.breadcrumbs(title) if pick(0.5) else "") + (w.edit() if pick(0.25) else "")
    post_content = "".join(
        part for part, p in ((w.edit(), 0.3), (w.feedback(), 0.35), (w.prevnext(), 0.45)) if pick(p)
    )
    below = "".join(
        part for part, p in ((w.related(), 0.3), (w.comments(), 0.25), (w.newsletter(), 0.25)) if pick(p)
    )
    side = w.sidebar() if skeleton not in ("minimal", "blog") and pick(0.85) else ""
    toc = w.toc(heads) if pick(0.45) else ""
    foot = w.footer() if pick(0.9) else ""
    ad = w.ad() if pick(0.25) else ""
    main_cls = style.name("main", "content-area", "page-body", "doc-wrap", "col-main", "primary", "entry")
    ver = w.version() if pick(0.2) else ""
    if skeleton == "html5":
        body = (
            f'{top}<header>{nav}</header><div class="{style.name("lay", "layout", "shell")}">{side}'
            f'<main class="{main_cls}">{pre_content}<article>{h1}{frag}</article>{post_content}{below}</main>'
            f"{toc}</div>{foot}"
        )
    elif skeleton == "divsoup":
        body = (
            f'<div id="{style.name("w", "wrapper", "page")}">{top}<div class="{style.name("t", "top", "hd")}">{nav}{ver}</div>'
            f'<div class="{style.name("r", "row", "cols")}"><div class="{style.name("c3", "col-3", "span3")}">{side}{ad}</div>'
            f'<div class="{style.name("c9", "col-9", "span9")}"><div class="{main_cls}"><div class="inner">'
            f'{pre_content}<div class="{style.name("x", "text", "rich")}">{h1}{frag}</div></div>{post_content}</div>{below}</div>'
            f"</div>{foot}</div>"
        )
    elif skeleton == "table":
        body = (
            f'{top}<table width="100%" border="0"><tr><td colspan="2" class="hdr">{nav}</td></tr>'
            f'<tr><td valign="top" width="200" class="{style.name("l", "leftnav", "menu")}">{side}{ad}</td>'
            f'<td valign="top" class="{main_cls}">{pre_content}{h1}{frag}{post_content}</td></tr>'
            f'<tr><td colspan="2">{below}{foot}</td></tr></table>'
        )
    elif skeleton == "grid":
        body = (
            f'{top}{nav}<div class="container-fluid"><div class="row"><div class="col-md-2 d-none d-md-block">{side}</div>'
            f'<div class="col-md-8" id="{style.name("pg", "pg-body", "td-main", "doc-area")}">{pre_content}{h1}{frag}{post_content}{below}</div>'
            f'<div class="col-md-2">{toc}{ad}</div></div></div>{foot}'
        )
        toc = ""
    elif skeleton == "blog":
        date = f"{rng.randint(1, 28)} March 202{rng.randint(0, 6)}"
        body = (
            f'{top}<div class="{style.name("hd", "masthead", "site-head")}">{nav}</div><div class="container">'
            f'<div class="{style.name("post", "post", "entry-wrap", "blog-post")}"><h1>{html.escape(title)}</h1>'
            f'<p class="meta">Posted on {date} by the {site} team · {rng.randint(3, 15)} min read</p>'
            f'<div class="{style.name("pb", "post-body", "entry-content")}">{frag.replace("<h1", "<h2").replace("</h1", "</h2")}</div>'
            f'<div class="tags">Tags: {" ".join(f"<a href=/t/{t}>{t}</a>" for t in rng.sample(WORDS, 4))}</div>'
            f'{post_content}</div>{below}<div class="{style.name("wa", "widget-area", "sidebar")}">{w.newsletter()}{w.related()}{ad}</div></div>{foot}'
        )
    elif skeleton == "wiki":
        body = (
            f'{top}<div id="{style.name("p", "globalWrapper", "wiki-page")}"><div id="{style.name("co", "column-content")}">'
            f'<div id="{style.name("c", "bodyContent", "wikitext")}"><h1 class="firstHeading">{html.escape(title)}</h1>'
            f'<div class="siteSub">From {site} Wiki</div>{frag.replace("<h1", "<h2").replace("</h1", "</h2")}'
            f'<div class="catlinks">Categories: <a href="/c/a">Documentation</a> | <a href="/c/b">Howto</a></div></div></div>'
            f'<div id="{style.name("c1", "column-one", "wiki-tools")}">{side}{w.search()}</div>'
            f'<div class="{style.name("f", "wiki-footer", "lastmod")}">This page was last edited on {rng.randint(1, 28)} May 2026. '
            f"Text is available under the Creative Commons license.</div></div>"
        )
    elif skeleton == "cards":
        sections = _split_sections(frag)
        cards = []
        card_cls = style.name("card", "card", "box", "panel")
        for i, sec in enumerate(sections):
            cards.append(
                f'<section class="{card_cls}">{sec}</section>'
                if style.naming == "semantic"
                else f'<div class="{card_cls}">{sec}</div>'
            )
            if i == 1 and ad:
                cards.append(ad)
        body = (
            f'{top}{nav}<div class="{style.name("wrap", "wrap", "stage")}">{side}<div class="{main_cls}">'
            f"{pre_content}{h1}{''.join(cards)}{post_content}</div>{toc}</div>{below}{foot}"
        )
    elif skeleton == "minimal":
        body = f'{nav}<div class="{main_cls}">{h1}{frag}</div>{foot}'
    else:  # "app": a docs page inside an app shell with a header toolbar and drawers
        body = (
            f'<div id="__app"><div class="{style.name("tb", "toolbar", "app-bar")}">{nav}{w.search()}{ver}</div>'
            f'<div class="{style.name("dr", "drawer", "panel-left")}">{side}</div><div class="{style.name("ct", "app-content", "view")}">'
            f'{top}{pre_content}<div class="{style.name("md", "md", "rendered", "prose")}">{h1}{frag}</div>{post_content}{toc}</div>'
            f"{below}{foot}</div>"
        )
        toc = ""
    if skeleton in ("html5", "cards"):
        toc = ""
    body += toc
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)} | {site} docs</title>'
        f'<meta name="viewport" content="width=device-width"><link rel="stylesheet" href="/static/{site}.css">'
        f'<script src="/static/app.{rng.randint(1000, 9999)}.js"></script></head>\n<body>{body}'
        f"<script>window.dataLayer=window.dataLayer||[];</script></body></html>\n"
    )


# ---------------------------------------------------------------------------------------------
# assembly


def _phrases(sources: list[Source], rng: random.Random) -> list[str]:
    """Sentences from the sources, for the text of comments and related posts."""
    out: list[str] = []
    for src in rng.sample(sources, min(40, len(sources))):
        for sent in re.split(r"(?<=[.!?])\s+", re.sub(r"[`*#_\[\]()<>|=]", " ", src.text)):
            words = sent.split()
            if 8 <= len(words) <= 30:
                out.append(" ".join(words))
    return out


def _fragment(src: Source, maker: str, tmp: Path) -> str:
    if maker.startswith("markdown"):
        variant = maker.split(":", 1)[1] if ":" in maker else "plain"
        return md_fragment(src, variant) if src.kind == "md" else rst_fragment(src)
    if maker == "docutils":
        return rst_fragment(src) if src.kind == "rst" else md_fragment(src, "plain")
    if maker == "pandoc":
        return pandoc_fragment(src)
    raise ValueError(maker)


def build(out: Path, seed: int, hand_sites: int) -> dict[str, int]:
    rng = random.Random(seed)
    sources = [s for s in collect_sources() if len(s.text.split()) >= 150]
    rng.shuffle(sources)
    by_kind = {"md": [s for s in sources if s.kind == "md"], "rst": [s for s in sources if s.kind == "rst"]}
    phrases = _phrases(sources, rng)
    pages: list[Page] = []
    notes: list[str] = []
    used: set[str] = set()

    def take(kind: str | None = None) -> Source:
        pool = by_kind[kind] if kind else sources
        for s in pool:
            key = f"{s.package}:{s.name}"
            if key not in used:
                used.add(key)
                return s
        s = rng.choice(pool)
        return s

    def attempt(fn: object, *args: object) -> None:
        try:
            res = fn(*args)  # type: ignore[operator]
        except Exception as exc:  # a generator failing on one input skips that input
            notes.append(f"{getattr(fn, '__name__', fn)}: {exc}"[:200])
            return
        pages.extend(
            page for page in (res if isinstance(res, list) else [res]) if len(page.gold.split()) >= 40
        )

    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        # 1. real generators, whole pages
        for _ in range(4):
            attempt(gen_docutils, take("rst"), "html5")
        for _ in range(3):
            attempt(gen_docutils, take("rst"), "html4css1")
        for variant in ("plain", "codehilite", "plain", "codehilite-linenos"):
            attempt(gen_markdown_bare, take("md"), variant)
        if has("pandoc"):
            for i in range(5):
                attempt(gen_pandoc, take(), i % 2 == 0)
        if has("pandoc") and has("asciidoctor"):
            for _ in range(5):
                attempt(gen_asciidoctor, take())
        else:
            notes.append("asciidoctor or pandoc missing: no asciidoctor pages")
        if has("pandoc") and has("makeinfo"):
            for _ in range(3):
                attempt(gen_makeinfo, take(), tmp)
        if has("pod2html"):
            pms = sorted(p for p in Path("/usr/share/perl").rglob("*.pm") if b"=head1" in p.read_bytes())
            for pm in rng.sample(pms, min(8, len(pms))):
                attempt(gen_pod2html, pm, tmp)
        if has("groff"):
            mans = sorted(Path("/usr/share/man/man1").glob("*.1.gz")) + sorted(
                Path("/usr/share/man/man3").glob("*.3*.gz")
            )
            mans = [m for m in mans if m.stat().st_size > 2500]
            for man in rng.sample(mans, min(10, len(mans))):
                attempt(gen_groff, man, tmp)
        for module in ("textwrap", "shlex", "fnmatch", "glob", "bisect", "colorsys"):
            attempt(gen_pydoc, module, tmp)
        for module in (
            "markdown.extensions.toc",
            "docutils.utils",
            "lxml.html.clean",
            "trafilatura.core",
            "pdoc.doc_types",
        ):
            attempt(gen_pdoc, module, tmp)
        for package, path in debian_doc_pages(rng):
            attempt(gen_debian_doc, package, path)
        # 2. hand-made sites around generated fragments
        makers = [
            "markdown:plain",
            "markdown:codehilite",
            "markdown:codehilite-linenos",
            "docutils",
            "pandoc",
        ]
        namings = ("semantic", "descriptive", "hashed")
        for i in range(hand_sites):
            skeleton = SKELETONS[i % len(SKELETONS)]
            naming = namings[(i // len(SKELETONS)) % len(namings)]
            maker = makers[i % len(makers)] if has("pandoc") else makers[i % 4]
            site = f"{rng.choice(WORDS)}{rng.choice(WORDS)}{i}"
            n_pages = 2 if i % 3 == 0 else 1
            for j in range(n_pages):
                src = take()
                try:
                    frag = _fragment(src, maker, tmp)
                    gold, codes = _gold_of(frag)
                except Exception as exc:
                    notes.append(f"fragment {maker} {src.package}: {exc}"[:200])
                    continue
                title = src.package.replace("-", " ").title()
                if "<h1" not in frag[:400] and skeleton not in ("blog", "wiki"):
                    gold = title + "\n" + gold
                if skeleton in ("blog", "wiki") and "<h1" not in frag[:400]:
                    gold = title + "\n" + gold
                page_html = hand_page(site, skeleton, naming, seed * 1000 + i * 10 + j, title, frag, phrases)
                if len(gold.split()) >= 40:
                    pages.append(
                        Page(
                            f"hand-{skeleton}-{naming}/{site}",
                            f"hand:{skeleton}:{naming}:{maker}",
                            f"{src.package}:{src.name}",
                            page_html,
                            gold,
                            codes,
                        )
                    )
    for note in notes:
        print("note:", note, file=sys.stderr)
    summary = write_set(out, pages)
    summary["notes"] = len(notes)
    return summary


def write_set(out: Path, pages: list[Page]) -> dict[str, int]:
    """Write the pages no framework profile claims (the others are counted and left out)."""
    from doc_scraper.extract.detect import PageIndex, detect

    if out.exists():
        shutil.rmtree(out)
    (out / "pages").mkdir(parents=True)
    (out / "gold").mkdir()
    (out / ".gitignore").write_text("*\n")
    kept = 0
    detected: dict[str, int] = {}
    with (out / "manifest.jsonl").open("w") as manifest:
        for page in pages:
            raw = page.html.encode("utf-8")
            doc = lxml.etree.fromstring(raw, lxml.etree.HTMLParser(remove_comments=True))
            detection, profile = detect(doc, PageIndex(raw))
            if profile is not None or detection.confidence == "js-rendered":
                key = f"{page.generator}->{detection.framework}"
                detected[key] = detected.get(key, 0) + 1
                continue
            pid = f"{kept:04d}"
            (out / "pages" / f"{pid}.html").write_bytes(raw)
            (out / "gold" / f"{pid}.txt").write_text(page.gold + "\n")
            (out / "gold" / f"{pid}.code.json").write_text(json.dumps(page.codes))
            manifest.write(
                json.dumps({"id": pid, "site": page.site, "generator": page.generator, "source": page.source})
                + "\n"
            )
            kept += 1
    sites = {json.loads(line)["site"] for line in (out / "manifest.jsonl").read_text().splitlines()}
    for key, n in sorted(detected.items()):
        print(f"left out (detected as a framework): {key} x{n}", file=sys.stderr)
    return {"pages": kept, "sites": len(sites), "left_out_detected": sum(detected.values())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / ".generic-set")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--hand-sites", type=int, default=90)
    args = parser.parse_args(argv)
    summary = build(args.out, args.seed, args.hand_sites)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
