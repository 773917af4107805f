"""doc-scraper: crawl documentation sites into clean, searchable Markdown."""

__version__ = "0.1.0"
