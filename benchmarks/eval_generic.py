"""Score main-text extractors on the generic test set (pages no framework profile claims).

For every page of ``benchmarks/generic_set.py``'s output and every extractor: word-level
precision / recall / F1 of the extractor's plain text against the gold text (bag of words:
lower-cased ``\\w+`` tokens, edge underscores stripped, counts kept), averaged per page (macro:
the mean of the pages' F1), the code-line recall (the share of the gold code blocks' non-blank
lines, whitespace-collapsed, found in the output; macro over the pages that have code) and CPU
pages/s (one core, ``time.process_time``).

    .venv/bin/python benchmarks/generic_set.py
    .venv/bin/python benchmarks/eval_generic.py [--set benchmarks/.generic-set] [--only a,b] [--by-group]
    # a shared corpus with detection switched off, then scored against its sources:
    .venv/bin/python benchmarks/eval_generic.py --as-unknown ../shared/corpus/python-3.11 --out /tmp/u-py
    python3 ../shared/tools/extract_eval.py --output /tmp/u-py --corpus ../shared/corpus/python-3.11

Extractors: ``pipeline-readability`` (parse_page with ``region.readability_region`` as the
fallback of ``select_region``, then our cleanup and converter), ``pipeline-generic`` (the same
with ``extract.generic.generic_region`` as the fallback; either way, whichever the code ships),
``pipeline-body`` (whole body, cleanup + converter), ``readability+markdownify``,
``trafilatura`` (defaults, txt), ``trafilatura-recall`` (favor_recall), ``trafilatura-md``
(markdown output, formatting and tables), ``jusText`` (paragraph classifier, if installed).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

_WORD = re.compile(r"\w+")
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_MD_LINK_TARGET = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def tokens(text: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for tok in _WORD.findall(text.lower()):
        tok = tok.strip("_")
        if tok:
            out[tok] += 1
    return out


def prf(gold: Counter[str], got: Counter[str]) -> tuple[float, float, float]:
    common = sum((gold & got).values())
    g, o = sum(gold.values()), sum(got.values())
    if not g or not o:
        return 0.0, 0.0, 0.0
    p, r = common / o, common / g
    return p, r, (2 * p * r / (p + r) if common else 0.0)


def markdown_text(md: str) -> str:
    """Markdown to plain text for scoring: images, link targets, fences, escapes, table rules dropped."""
    out: list[str] = []
    in_code = False
    for line in md.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            out.append(line)
            continue
        if _TABLE_RULE.match(line):
            continue
        line = _MD_IMAGE.sub("", line)  # an image's alt text is not text a reader sees
        line = _BR.sub(" ", line)  # line breaks GFM tables keep as HTML
        line = _MD_LINK_TARGET.sub("]", line)
        line = _MD_ESCAPE.sub(r"\1", line)
        out.append(line)
    return "\n".join(out)


def _norm_lines(text: str) -> list[str]:
    return [" ".join(ln.split()) for ln in text.replace("\t", " ").splitlines() if ln.strip()]


def code_recall(codes: list[str], output: str) -> tuple[int, int]:
    """(found, total) non-blank gold code lines present in the output (whitespace collapsed)."""
    hay = "\n".join(_norm_lines(output))
    total = found = 0
    for code in codes:
        for line in _norm_lines(code):
            total += 1
            if line in hay:
                found += 1
    return found, total


# ---------------------------------------------------------------------------------------------
# extractors: raw page bytes -> plain text (or Markdown, reduced to text by markdown_text)


_FALLBACK_NAMES = ("readability_region", "generic_region")  # what select_region may call


def use_fallback(region_fn: Callable[[Any], Any]) -> dict[str, Any]:
    """Make select_region's fallback ``region_fn`` (whichever name it calls); returns what to restore."""
    import doc_scraper.extract.region as region_mod

    saved = {name: getattr(region_mod, name) for name in _FALLBACK_NAMES if hasattr(region_mod, name)}
    for name in _FALLBACK_NAMES:
        setattr(region_mod, name, region_fn)
    return saved


def restore_fallback(saved: dict[str, Any]) -> None:
    import doc_scraper.extract.region as region_mod

    for name in _FALLBACK_NAMES:
        if name in saved:
            setattr(region_mod, name, saved[name])
        elif hasattr(region_mod, name):
            delattr(region_mod, name)


def _pipeline(region_fn: Callable[[Any], Any]) -> Callable[[bytes], str]:
    from doc_scraper.models import ExtractOptions
    from doc_scraper.worker import parse_page

    def run(body: bytes) -> str:
        saved = use_fallback(region_fn)
        try:
            page = parse_page(body, "https://docs.example.org/guide/page.html", ExtractOptions())
        finally:
            restore_fallback(saved)
        return markdown_text(page.markdown)

    return run


def _body_region(doc: Any) -> Any:
    return doc.find("body")


def _readability_markdownify(body: bytes) -> str:
    from markdownify import markdownify
    from readability import Document

    summary = Document(body.decode("utf-8", "replace")).summary(html_partial=True)
    return markdown_text(markdownify(summary, heading_style="ATX"))


def _trafilatura(**kwargs: Any) -> Callable[[bytes], str]:
    import trafilatura

    fmt = kwargs.pop("output_format", "txt")

    def run(body: bytes) -> str:
        out = trafilatura.extract(body.decode("utf-8", "replace"), output_format=fmt, **kwargs) or ""
        return markdown_text(out) if fmt == "markdown" else out

    return run


def _justext(body: bytes) -> str:
    import justext

    paragraphs = justext.justext(body, justext.get_stoplist("English"))
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


def extractors() -> dict[str, Callable[[bytes], str]]:
    from doc_scraper.extract.generic import generic_region
    from doc_scraper.extract.region import readability_region

    found: dict[str, Callable[[bytes], str]] = {
        "pipeline-readability": _pipeline(readability_region),
        "pipeline-generic": _pipeline(generic_region),
        "pipeline-body": _pipeline(_body_region),
        "readability+markdownify": _readability_markdownify,
        "trafilatura": _trafilatura(include_tables=True, include_comments=False),
        "trafilatura-recall": _trafilatura(include_tables=True, include_comments=False, favor_recall=True),
        "trafilatura-md": _trafilatura(
            output_format="markdown", include_formatting=True, include_tables=True, include_comments=False
        ),
    }
    try:
        import justext  # noqa: F401

        found["jusText"] = _justext
    except ImportError:
        pass
    return found


# ---------------------------------------------------------------------------------------------


def load_set(folder: Path) -> list[dict[str, Any]]:
    pages = []
    for line in (folder / "manifest.jsonl").read_text().splitlines():
        rec = json.loads(line)
        pid = rec["id"]
        rec["body"] = (folder / "pages" / f"{pid}.html").read_bytes()
        rec["gold"] = (folder / "gold" / f"{pid}.txt").read_text()
        rec["codes"] = json.loads((folder / "gold" / f"{pid}.code.json").read_text())
        parts = rec["generator"].split(":")
        rec["group"] = ":".join(parts[:2]) if parts[0] in ("hand", "holdout", "real") else parts[0]
        pages.append(rec)
    return pages


def evaluate(pages: list[dict[str, Any]], name: str, fn: Callable[[bytes], str]) -> dict[str, Any]:
    rows = []
    cpu = 0.0
    for page in pages:
        start = time.process_time()
        try:
            text = fn(page["body"])
        except Exception as exc:  # an extractor crashing on a page scores 0 there
            print(f"{name}: {page['id']}: {exc!r}", file=sys.stderr)
            text = ""
        cpu += time.process_time() - start
        p, r, f = prf(tokens(page["gold"]), tokens(text))
        found, total = code_recall(page["codes"], text)
        rows.append(
            {
                "id": page["id"],
                "group": page["group"],
                "p": p,
                "r": r,
                "f1": f,
                "code_found": found,
                "code_total": total,
            }
        )
    with_code = [x for x in rows if x["code_total"]]
    return {
        "name": name,
        "rows": rows,
        "f1": statistics.fmean(x["f1"] for x in rows),
        "p": statistics.fmean(x["p"] for x in rows),
        "r": statistics.fmean(x["r"] for x in rows),
        "f1_median": statistics.median(x["f1"] for x in rows),
        "code_macro": statistics.fmean(x["code_found"] / x["code_total"] for x in with_code)
        if with_code
        else 1.0,
        "code_micro": (sum(x["code_found"] for x in rows) / max(1, sum(x["code_total"] for x in rows))),
        "pages_per_s": len(rows) / cpu if cpu else 0.0,
        "ms_per_page": 1000 * cpu / len(rows),
    }


def region_timing(pages: list[dict[str, Any]], repeat: int = 3) -> dict[str, float]:
    """CPU ms per page of the region step alone (lxml parse excluded), best of ``repeat`` passes."""
    import lxml.etree

    from doc_scraper.extract.generic import generic_region
    from doc_scraper.extract.region import readability_region

    parser = lxml.etree.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True)
    out: dict[str, float] = {}
    for name, fn in (("readability_region", readability_region), ("generic_region", generic_region)):
        best = float("inf")
        for _ in range(repeat):
            docs = [lxml.etree.fromstring(p["body"], parser) for p in pages]
            start = time.process_time()
            for doc in docs:
                fn(doc)
            best = min(best, time.process_time() - start)
        out[name] = 1000 * best / len(pages)
    return out


def as_unknown(corpus: Path, out: Path, region: str) -> int:
    """Convert a shared corpus with framework detection switched off (every page takes the fallback).

    The output is for ``shared/tools/extract_eval.py``: real sites' templates, gold from their
    sources, as if their framework were one we do not know.
    """
    import bench_extract

    import doc_scraper.extract.region as region_mod
    from doc_scraper.extract.generic import generic_region
    from doc_scraper.models import Detection

    real_detect = region_mod.detect

    def no_profile(doc: Any, index: Any) -> tuple[Detection, None]:
        detection, _ = real_detect(doc, index)
        if detection.confidence == "js-rendered":
            return detection, None
        return Detection(generator=detection.generator), None

    region_mod.detect = no_profile  # type: ignore[assignment]
    fallbacks = {
        "generic": generic_region,
        "readability": region_mod.readability_region,
        "body": _body_region,
    }
    use_fallback(fallbacks[region])
    return bench_extract.main(["--corpus", str(corpus), "--out", str(out)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=Path(__file__).parent / ".generic-set")
    parser.add_argument("--only", default="", help="comma-separated extractor names")
    parser.add_argument("--by-group", action="store_true", help="F1 per generator / template family")
    parser.add_argument("--worst", type=int, default=0, help="list the N worst pages of each extractor")
    parser.add_argument("--json", type=Path, help="write all figures, per page too, to this file")
    parser.add_argument("--as-unknown", type=Path, metavar="CORPUS", help="see as_unknown(); needs --out")
    parser.add_argument("--region", default="generic", choices=("generic", "readability", "body"))
    parser.add_argument("--out", type=Path, help="Markdown output folder of --as-unknown")
    args = parser.parse_args(argv)
    if args.as_unknown:
        if not args.out:
            parser.error("--as-unknown needs --out")
        return as_unknown(args.as_unknown, args.out, args.region)
    pages = load_set(args.set)
    chosen = extractors()
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k in args.only.split(",")}
    results = [evaluate(pages, name, fn) for name, fn in chosen.items()]
    sites = len({p["site"] for p in pages})
    print(
        f"generic set: {len(pages)} pages, {sites} sites; F1 = word-level bag-of-words, macro (mean of pages)"
    )
    heads = ("F1", "P", "R", "F1 med", "code", "code µ", "pages/s", "ms/page")
    widths = (6, 6, 6, 7, 6, 7, 8, 8)
    print(f"{'extractor':26} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)))
    for res in results:
        print(
            f"{res['name']:26} {res['f1']:6.3f} {res['p']:6.3f} {res['r']:6.3f} {res['f1_median']:7.3f} "
            f"{res['code_macro']:6.3f} {res['code_micro']:7.3f} {res['pages_per_s']:8.1f} "
            f"{res['ms_per_page']:8.2f}"
        )
    if not args.only or "pipeline-generic" in args.only:
        timing = region_timing(pages)
        print(
            "region step alone (CPU ms/page, parse excluded): "
            + ", ".join(f"{k} {v:.2f} ({1000 / v:.0f} pages/s)" for k, v in timing.items())
        )
    if args.by_group:
        groups = sorted({p["group"] for p in pages})
        print("\nF1 per group (pages): " + " ".join(f"{r['name']}" for r in results))
        for g in groups:
            n = sum(1 for p in pages if p["group"] == g)
            cells = " ".join(
                f"{statistics.fmean(x['f1'] for x in r['rows'] if x['group'] == g):.3f}" for r in results
            )
            print(f"  {g:34} ({n:3}) {cells}")
        print("\nF1 of the hand-made sites per naming style (semantic tags, descriptive or hashed classes):")
        for naming in ("semantic", "descriptive", "hashed"):
            ids = {
                p["id"]
                for p in pages
                if p["generator"].startswith("hand") and p["generator"].split(":")[2] == naming
            }
            if not ids:
                continue
            cells = " ".join(
                f"{statistics.fmean(x['f1'] for x in r['rows'] if x['id'] in ids):.3f}" for r in results
            )
            print(f"  {naming:34} ({len(ids):3}) {cells}")
    for res in results if args.worst else []:
        worst = sorted(res["rows"], key=lambda x: x["f1"])[: args.worst]
        print(
            f"\nworst of {res['name']}: "
            + ", ".join(
                f"{x['id']} {x['group']} F1 {x['f1']:.2f} (P {x['p']:.2f} R {x['r']:.2f})" for x in worst
            )
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
