from __future__ import annotations

import sys

from doc_scraper.cli import main

sys.exit(main())
