"""Detection on every page of the shared corpus, beside each site's SITE.json framework.

    python benchmarks/detect_corpus.py [--corpus-root ../shared/corpus]

Prints one row per (site, detected framework, confidence, selector) with its page count, and
whether the detected framework is the one SITE.json names (issue 3, must show 3).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import CORPUS

from doc_scraper.models import ExtractOptions
from doc_scraper.worker import parse_page


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus-root", type=Path, default=CORPUS)
    args = ap.parse_args()
    print(f"{'site':16} {'expected':11} {'detected':11} {'confidence':12} {'selector':24} pages")
    ok_sites = 0
    sites = sorted(p for p in args.corpus_root.iterdir() if (p / "SITE.json").is_file())
    for site in sites:
        meta = json.loads((site / "SITE.json").read_text(encoding="utf-8"))
        expected = meta.get("framework", "?")
        root = site / "site" if (site / "site").is_dir() else site
        tally: collections.Counter[tuple[str, str, str]] = collections.Counter()
        for page in sorted(root.rglob("*.html")):
            rel = page.relative_to(root).as_posix()
            parsed = parse_page(page.read_bytes(), f"http://127.0.0.1/{site.name}/{rel}", ExtractOptions())
            d = parsed.detection
            tally[(d.framework or "unknown", d.confidence, d.selector)] += 1
        for (framework, confidence, selector), n in tally.most_common():
            print(f"{site.name:16} {expected:11} {framework:11} {confidence:12} {selector or '-':24} {n}")
        top = tally.most_common(1)[0][0][0] if tally else ""
        ok_sites += top == expected
    print(f"\n{ok_sites}/{len(sites)} sites detected as their SITE.json framework (by most pages)")
    return 0 if ok_sites == len(sites) else 1


if __name__ == "__main__":
    sys.exit(main())
