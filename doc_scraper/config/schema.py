"""The configuration model: one frozen dataclass per YAML mapping.

Field names equal the YAML keys, so error messages quote them verbatim.
Defaults live only here (``DEFAULT_*``); ``load.py`` applies the per-site
inheritance rules and produces a ``Config`` whose sites are fully resolved
(``SiteConfig`` fields never hold "unset": inherited values are filled in).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from doc_scraper import __version__

DEFAULT_USER_AGENT = f"doc-scraper/{__version__} (+https://github.com/doc-scraper/doc-scraper; docs crawler)"
DEFAULT_DELAY_PER_HOST = 0.0  # seconds
DEFAULT_JITTER = 0.5  # delay is spread over [d*(1-j), d*(1+j)]
DEFAULT_NUM_WORKERS = 8
DEFAULT_MAX_REQUESTS = 16
DEFAULT_MAX_REQUESTS_PER_HOST = 4
DEFAULT_OUTPUT_BASE_DIR = "./crawled_docs"
DEFAULT_STATE_DIR = "./crawler_state"
DEFAULT_MAX_RETRIES = 3
DEFAULT_INITIAL_RETRY_DELAY = 1.0
DEFAULT_MAX_RETRY_DELAY = 30.0
DEFAULT_GLOBAL_CRAWL_TIMEOUT = 0.0  # 0 = none
DEFAULT_PER_PAGE_TIMEOUT = 0.0  # 0 = none
DEFAULT_SKIP_IMAGES = True
DEFAULT_MAX_IMAGE_SIZE_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_PAGE_SIZE_BYTES = 50 * 1024 * 1024
DEFAULT_ENABLE_JSONL_OUTPUT = True
DEFAULT_JSONL_OUTPUT_FILENAME = "pages.jsonl"
DEFAULT_ENABLE_INCREMENTAL = False
DEFAULT_CRAWL_HISTORY_RETENTION = 10
DEFAULT_HTTP_TIMEOUT = 45.0
DEFAULT_MAX_IDLE_CONNS_PER_HOST = 4
DEFAULT_ALLOW_PRIVATE_NETWORKS = False
DEFAULT_MAX_PAGES = 0  # 0 = no budget
DEFAULT_MAX_DEPTH = 0  # 0 = unlimited
DEFAULT_MAX_REDIRECTS = 10
DEFAULT_MAX_URL_LENGTH = 2048
DEFAULT_MAX_PATH_DEPTH = 32  # path segments
DEFAULT_MAX_SEGMENT_REPEATS = 3  # the same segment repeated in one path (/a/a/a/a)
DEFAULT_KEEP_QUERY_PARAMS: tuple[str, ...] = ()  # query parameters that change content
DEFAULT_CONTENT_SELECTOR = "auto"
DEFAULT_USE_SITEMAPS = True
DEFAULT_LOG_FORMAT = "text"
DEFAULT_SHUTDOWN_GRACE = 30.0
DEFAULT_EMBEDDINGS = "auto"  # auto: embed sections after each crawl when the semantic extra is installed
EMBEDDINGS_CHOICES = ("auto", "off")


@dataclass(frozen=True, slots=True)
class HTTPClientSettings:
    timeout: float = DEFAULT_HTTP_TIMEOUT
    max_idle_conns_per_host: int = DEFAULT_MAX_IDLE_CONNS_PER_HOST
    allow_private_networks: bool = DEFAULT_ALLOW_PRIVATE_NETWORKS


@dataclass(frozen=True, slots=True)
class SiteConfig:
    """One entry under ``sites:``, with inherited values filled in."""

    key: str
    start_urls: tuple[str, ...]
    allowed_domain: str
    content_selector: str = DEFAULT_CONTENT_SELECTOR
    allowed_path_prefix: str = "/"
    link_extraction_selectors: tuple[str, ...] = ()
    disallowed_path_patterns: tuple[str, ...] = ()
    respect_nofollow: bool = False
    user_agent: str = DEFAULT_USER_AGENT
    delay_per_host: float = DEFAULT_DELAY_PER_HOST
    max_depth: int = DEFAULT_MAX_DEPTH
    max_pages: int = DEFAULT_MAX_PAGES
    skip_images: bool = DEFAULT_SKIP_IMAGES
    max_image_size_bytes: int = DEFAULT_MAX_IMAGE_SIZE_BYTES
    allowed_image_domains: tuple[str, ...] = ()
    disallowed_image_domains: tuple[str, ...] = ()
    enable_jsonl_output: bool = DEFAULT_ENABLE_JSONL_OUTPUT
    jsonl_output_filename: str = DEFAULT_JSONL_OUTPUT_FILENAME
    use_sitemaps: bool = DEFAULT_USE_SITEMAPS
    keep_query_params: tuple[str, ...] = DEFAULT_KEEP_QUERY_PARAMS
    enable_incremental: bool = DEFAULT_ENABLE_INCREMENTAL
    embeddings: str = DEFAULT_EMBEDDINGS


@dataclass(frozen=True, slots=True)
class Config:
    """The whole file, frozen after load."""

    sites: dict[str, SiteConfig]
    path: str = "config.yaml"
    default_user_agent: str = DEFAULT_USER_AGENT
    default_delay_per_host: float = DEFAULT_DELAY_PER_HOST
    delay_jitter: float = DEFAULT_JITTER
    num_workers: int = DEFAULT_NUM_WORKERS
    num_image_workers: int = DEFAULT_NUM_WORKERS
    max_requests: int = DEFAULT_MAX_REQUESTS
    max_requests_per_host: int = DEFAULT_MAX_REQUESTS_PER_HOST
    output_base_dir: str = DEFAULT_OUTPUT_BASE_DIR
    state_dir: str = DEFAULT_STATE_DIR
    max_retries: int = DEFAULT_MAX_RETRIES
    initial_retry_delay: float = DEFAULT_INITIAL_RETRY_DELAY
    max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY
    global_crawl_timeout: float = DEFAULT_GLOBAL_CRAWL_TIMEOUT
    per_page_timeout: float = DEFAULT_PER_PAGE_TIMEOUT
    skip_images: bool = DEFAULT_SKIP_IMAGES
    max_image_size_bytes: int = DEFAULT_MAX_IMAGE_SIZE_BYTES
    max_page_size_bytes: int = DEFAULT_MAX_PAGE_SIZE_BYTES
    max_pages: int = DEFAULT_MAX_PAGES
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    max_url_length: int = DEFAULT_MAX_URL_LENGTH
    max_path_depth: int = DEFAULT_MAX_PATH_DEPTH
    max_segment_repeats: int = DEFAULT_MAX_SEGMENT_REPEATS
    enable_jsonl_output: bool = DEFAULT_ENABLE_JSONL_OUTPUT
    jsonl_output_filename: str = DEFAULT_JSONL_OUTPUT_FILENAME
    enable_incremental: bool = DEFAULT_ENABLE_INCREMENTAL
    crawl_history_retention: int = DEFAULT_CRAWL_HISTORY_RETENTION
    log_format: str = DEFAULT_LOG_FORMAT
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE
    embeddings: str = DEFAULT_EMBEDDINGS
    http_client_settings: HTTPClientSettings = field(default_factory=HTTPClientSettings)
    warnings: tuple[str, ...] = ()  # non-fatal notes from loading, shown by `config validate`
