"""The dependency rules of STYLE.md §2, checked by walking imports with ast.

Each third-party library lives in the few modules that own it, and a pipeline
stage never imports another stage (the engine and worker join them).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "doc_scraper"

# library -> modules (paths relative to the package, prefix match) allowed to import it
LIBRARY_HOMES = {
    "aiohttp": ("fetch/", "corpus.py", "discover/probe.py"),
    "plyvel": ("frontier/store.py",),
    "apsw": ("index/",),
    "mcp": ("mcp_tools.py",),
    "pydantic": ("mcp_tools.py", "corpus.py"),
    "tenacity": ("fetch/retry.py",),
    "protego": ("frontier/robots.py",),
    "readability": ("extract/",),
    "markdownify": ("convert/",),
    "markdownify_rs": ("convert/",),
    "lxml": ("extract/", "convert/", "worker.py", "discover/preview.py"),
    "yaml": ("config/", "write/", "discover/config_edit.py"),
}
STAGES = ("frontier", "fetch", "extract", "convert", "write", "index")
# stage -> stages it may import (kept short on purpose: each edge is a decision)
STAGE_EDGES = {
    "extract": {"convert"},
    "convert": set(),
    "frontier": set(),
    "fetch": set(),
    "write": set(),
    "index": {"convert"},
}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def modules() -> list[tuple[str, set[str]]]:
    return [(str(p.relative_to(PACKAGE)), imports_of(p)) for p in sorted(PACKAGE.rglob("*.py"))]


def test_each_library_is_imported_only_where_it_lives() -> None:
    wrong = []
    for rel, names in modules():
        for name in names:
            top = name.split(".")[0]
            homes = LIBRARY_HOMES.get(top)
            if homes and not rel.startswith(homes):
                wrong.append(f"{rel} imports {name}")
    assert wrong == []


def test_stages_do_not_import_each_other() -> None:
    wrong = []
    for rel, names in modules():
        stage = rel.split("/")[0]
        if stage not in STAGES:
            continue
        for name in names:
            parts = name.split(".")
            other = parts[1] if parts[0] == "doc_scraper" and len(parts) > 1 else ""
            if other in STAGES and other != stage and other not in STAGE_EDGES[stage]:
                wrong.append(f"{rel} imports {name}")
    assert wrong == []


def test_layer_zero_modules_use_only_the_standard_library_and_each_other() -> None:
    layer_zero = ("errors.py", "models.py", "urls.py", "log.py", "stats.py")
    for rel in layer_zero:
        for name in imports_of(PACKAGE / rel):
            top = name.split(".")[0]
            ours = name.startswith("doc_scraper.") and name.split(".")[1] + ".py" in layer_zero
            assert top in sys.stdlib_module_names or ours or name == "doc_scraper", f"{rel} imports {name}"
