"""The Scrapy baseline: follow every same-site link under the start folder, save nothing.

scrapy runspider benchmarks/scrapy_spider.py -a start=URL -s CONCURRENT_REQUESTS=16
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import scrapy
from scrapy.linkextractors import LinkExtractor

if TYPE_CHECKING:
    from collections.abc import Iterator


class DocsSpider(scrapy.Spider):  # type: ignore[misc]
    name = "docs"
    custom_settings: ClassVar[dict[str, Any]] = {
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

    def __init__(self, start: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start]
        prefix = start.rsplit("/", 1)[0] + "/"
        self.links = LinkExtractor(allow=[prefix.replace(".", r"\.") + ".*"], deny_extensions=None)

    def parse(self, response: Any) -> Iterator[Any]:
        if not hasattr(response, "text"):
            return
        for link in self.links.extract_links(response):
            yield response.follow(link.url, callback=self.parse)
