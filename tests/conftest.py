"""Shared fixtures: a loopback static server over folders in the repo."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_SITE = ROOT / "examples" / "mkdocs-site"


def _load_serve() -> Any:
    spec = importlib.util.spec_from_file_location("example_serve", ROOT / "examples" / "serve.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["example_serve"] = module
    spec.loader.exec_module(module)
    return module


serve = _load_serve()


@pytest.fixture
def serve_folder() -> Any:
    """``with serve_folder(path, robots=...) as base_url`` on 127.0.0.1."""
    return serve.serve_folder


@pytest.fixture(scope="session")
def example_site_url() -> Iterator[str]:
    with serve.serve_folder(EXAMPLE_SITE) as url:
        yield url
