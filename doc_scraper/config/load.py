"""YAML -> frozen ``Config``: strict, and every error names the key path, the line and the fix.

``load_config(path)`` raises the first ``ConfigError``; ``check_config(path)`` collects every error
and warning, per site, for ``config validate``. ``config_from_dict`` runs the same checks on data
that did not come from a file (tests, ``add``, the ``run`` task spec).
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import logging
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from doc_scraper.config.durations import parse_duration
from doc_scraper.config.schema import EMBEDDINGS_CHOICES, Config, HTTPClientSettings, SiteConfig
from doc_scraper.errors import ConfigError

logger = logging.getLogger(__name__)

MAX_CONFIG_BYTES = 5 * 1024 * 1024
SITE_KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_MAX_NODES = 200_000  # alias expansion guard ("billion laughs")
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?$")

Lines = dict[tuple[str, ...], int]


@dataclass(frozen=True, slots=True)
class _Field:
    kind: str  # int | float | bool | str | duration | strlist | enum
    example: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    allow_empty: bool = False


_GLOBAL_FIELDS: dict[str, _Field] = {
    "default_user_agent": _Field("str", '"my-docs-bot/1.0 (+mailto:me@example.com)"'),
    "default_delay_per_host": _Field("duration", "500ms"),
    "delay_jitter": _Field("float", "0.5", 0, 1),
    "num_workers": _Field("int", "8", 1, 1024),
    "num_image_workers": _Field("int", "8", 1, 1024),
    "max_requests": _Field("int", "16", 1, 4096),
    "max_requests_per_host": _Field("int", "4", 1, 1024),
    "output_base_dir": _Field("str", "./crawled_docs"),
    "state_dir": _Field("str", "./crawler_state"),
    "max_retries": _Field("int", "3", 0, 100),
    "initial_retry_delay": _Field("duration", "1s"),
    "max_retry_delay": _Field("duration", "30s"),
    "global_crawl_timeout": _Field("duration", "2h"),
    "per_page_timeout": _Field("duration", "60s"),
    "skip_images": _Field("bool", "true"),
    "max_image_size_bytes": _Field("int", "10485760", 0),
    "max_page_size_bytes": _Field("int", "52428800", 1),
    "max_pages": _Field("int", "5000", 0),
    "max_redirects": _Field("int", "10", 0, 100),
    "max_url_length": _Field("int", "2048", 16),
    "max_path_depth": _Field("int", "32", 1),
    "max_segment_repeats": _Field("int", "3", 1),
    "enable_jsonl_output": _Field("bool", "true"),
    "jsonl_output_filename": _Field("str", "pages.jsonl"),
    "enable_incremental": _Field("bool", "false"),
    "crawl_history_retention": _Field("int", "10", 1),
    "log_format": _Field("enum", "text", choices=("text", "json")),
    "shutdown_grace": _Field("duration", "30s"),
    "embeddings": _Field("enum", "auto", choices=EMBEDDINGS_CHOICES),
    "http_client_settings": _Field("mapping", "{timeout: 45s}"),
}
_HTTP_FIELDS: dict[str, _Field] = {
    "timeout": _Field("duration", "45s"),
    "max_idle_conns_per_host": _Field("int", "4", 0, 1024),
    "allow_private_networks": _Field("bool", "false"),
}
_SITE_FIELDS: dict[str, _Field] = {
    "start_urls": _Field("strlist", '["https://docs.example.com/"]'),
    "allowed_domain": _Field("str", "docs.example.com"),
    "content_selector": _Field("str", "auto"),
    "allowed_path_prefix": _Field("str", "/docs/", allow_empty=True),
    "link_extraction_selectors": _Field("strlist", '["nav", "main"]'),
    "disallowed_path_patterns": _Field("strlist", '["/v[0-9]+/"]'),
    "respect_nofollow": _Field("bool", "false"),
    "user_agent": _Field("str", '"my-docs-bot/1.0"'),
    "delay_per_host": _Field("duration", "500ms"),
    "max_depth": _Field("int", "3", 0),
    "max_pages": _Field("int", "5000", 0),
    "skip_images": _Field("bool", "true"),
    "max_image_size_bytes": _Field("int", "10485760", 0),
    "allowed_image_domains": _Field("strlist", '["*.example.com"]'),
    "disallowed_image_domains": _Field("strlist", '["ads.example.com"]'),
    "enable_jsonl_output": _Field("bool", "true"),
    "jsonl_output_filename": _Field("str", "pages.jsonl"),
    "use_sitemaps": _Field("bool", "true"),
    "keep_query_params": _Field("strlist", '["version"]'),
    "enable_incremental": _Field("bool", "false"),
    "embeddings": _Field("enum", "auto", choices=EMBEDDINGS_CHOICES),
}
# site key -> global key it inherits from when the site leaves it unset
_INHERITED: dict[str, str] = {
    "user_agent": "default_user_agent",
    "delay_per_host": "default_delay_per_host",
    "skip_images": "skip_images",
    "max_image_size_bytes": "max_image_size_bytes",
    "enable_jsonl_output": "enable_jsonl_output",
    "jsonl_output_filename": "jsonl_output_filename",
    "max_pages": "max_pages",
    "enable_incremental": "enable_incremental",
    "embeddings": "embeddings",
}


@dataclass(frozen=True, slots=True)
class SiteCheck:
    """One site's verdict: a resolved ``SiteConfig`` or the errors that prevent one."""

    key: str
    site: SiteConfig | None
    errors: tuple[ConfigError, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return self.site is not None and not self.errors


@dataclass(frozen=True, slots=True)
class ConfigCheck:
    """Everything ``config validate`` reports; ``config`` is set only when nothing is wrong."""

    path: str
    config: Config | None
    errors: tuple[ConfigError, ...] = ()  # file-level and global-key errors
    warnings: tuple[str, ...] = ()  # warnings about global keys; each SiteCheck has its own
    sites: tuple[SiteCheck, ...] = ()

    @property
    def valid(self) -> bool:
        return self.config is not None

    def all_errors(self) -> list[ConfigError]:
        return [*self.errors, *(e for s in self.sites for e in s.errors)]


def load_config(path: str | Path) -> Config:
    """Read and validate a config file; raise the first ``ConfigError`` found.

    Warnings (``Config.warnings``) are logged once here as ``config.warning``.
    """
    config = _unwrap(check_config(path))
    for warning in config.warnings:
        logger.warning("config.warning", extra={"config_path": config.path, "warning": warning})
    logger.debug("config.loaded", extra={"config_path": config.path, "site_count": len(config.sites)})
    return config


def config_from_dict(data: Any, path: str = "<dict>") -> Config:
    """Validate already-parsed data with the same rules as a file (no line numbers)."""
    return _unwrap(check_config_data(data, path))


def check_config(path: str | Path) -> ConfigCheck:
    """Validate a config file, collecting every error instead of stopping at the first."""
    source = str(path)
    try:
        data, lines = _read_yaml(Path(path))
    except ConfigError as exc:
        return ConfigCheck(path=source, config=None, errors=(exc,))
    return check_config_data(data, source, lines)


def check_config_data(data: Any, path: str = "<dict>", lines: Lines | None = None) -> ConfigCheck:
    """Validate parsed data; ``lines`` maps key paths to line numbers when the data came from YAML."""
    return _Checker(path, lines or {}).run(data)


def closest_key(name: str, valid: list[str] | tuple[str, ...]) -> str | None:
    """The valid key most like ``name`` (difflib), or None if nothing is close."""
    found = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    if found:
        return found[0]
    # an abbreviation ("max_idle" for "max_idle_conns_per_host") is too short for difflib
    lowered = name.lower()
    partial = [key for key in valid if len(lowered) >= 4 and lowered in key]
    return min(partial, key=len) if partial else None


def _unwrap(check: ConfigCheck) -> Config:
    if check.config is None:
        errors = check.all_errors()
        raise errors[0] if errors else ConfigError(f"{check.path}: invalid configuration")
    return check.config


# ---------------------------------------------------------------- reading YAML


def _read_yaml(path: Path) -> tuple[Any, Lines]:
    if not path.exists():
        raise ConfigError(
            f"config file {path} not found; create one with `doc-scraper add URL`, "
            f"or copy config.example.yaml to {path} and edit it"
        )
    if not path.is_file():
        raise ConfigError(f"config path {path} is not a file; pass a YAML file with -config FILE")
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"config file {path} is {size} bytes, over the {MAX_CONFIG_BYTES // 2**20} MiB limit; "
                "is it really the config file?"
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}: line {line}: not valid UTF-8; save the file as UTF-8", line=line) from exc
    return _parse_yaml(text, str(path))


def _parse_yaml(text: str, source: str) -> tuple[Any, Lines]:
    loader = yaml.SafeLoader(text)
    lines: Lines = {}
    try:
        node = loader.get_single_node()
        if node is None:
            return None, lines
        _walk(node, (), lines, [0], set())
        return loader.construct_document(node), lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise ConfigError(f"{source}: YAML syntax error: {problem}") from None
        line = mark.line + 1
        raise ConfigError(
            f"{source}: YAML syntax error at line {line}, column {mark.column + 1}: {problem}", line=line
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: YAML error: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{source}: YAML nested too deeply to be a config file") from None
    finally:
        loader.dispose()


def _walk(node: yaml.Node, path: tuple[str, ...], lines: Lines, count: list[int], stack: set[int]) -> None:
    """Record the line of every mapping key and list item; reject duplicate keys."""
    count[0] += 1
    if count[0] > _MAX_NODES or id(node) in stack:
        raise ConfigError(
            "too many or recursive YAML aliases; write the values out instead",
            key=_dotted(path) or "config",
            line=node.start_mark.line + 1,
        )
    stack.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                # keys merged with "<<: *anchor" point at the anchor's lines; explicit keys win
                merged: Lines = {}
                _walk(value_node, path, merged, count, stack)
                for merged_path, merged_line in merged.items():
                    lines.setdefault(merged_path, merged_line)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                continue  # construct_document reports unhashable keys
            name = str(key_node.value)
            child = (*path, name)
            line = key_node.start_mark.line + 1
            if name in seen:
                raise ConfigError(
                    f"duplicate key (first set at line {seen[name]}); keep only one",
                    key=_dotted(child),
                    line=line,
                )
            seen[name] = line
            lines[child] = line
            _walk(value_node, child, lines, count, stack)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = (*path, f"[{index}]")
            lines[child] = item.start_mark.line + 1
            _walk(item, child, lines, count, stack)
    stack.discard(id(node))


def _dotted(path: tuple[str, ...]) -> str:
    out = ""
    for part in path:
        out += part if part.startswith("[") or not out else "." + part
    return out


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return '"' + shown.replace('"', '\\"') + '"'
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


# ---------------------------------------------------------------- validating


_GLOBAL_DEFAULTS = Config(sites={})
_SITE_DEFAULTS = SiteConfig(key="", start_urls=(), allowed_domain="")
# a per-site spelling for global keys whose site form has another name
_SITE_SPELLING = {"default_user_agent": "user_agent", "default_delay_per_host": "delay_per_host"}


class _Checker:
    def __init__(self, source: str, lines: Lines) -> None:
        self.source = source
        self.lines = lines

    def line(self, path: tuple[str, ...]) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def error(self, path: tuple[str, ...], message: str) -> ConfigError:
        return ConfigError(message, key=_dotted(path), line=self.line(path))

    # 1. the whole file
    def run(self, data: Any) -> ConfigCheck:
        if data is None:
            return self._fail(
                f"{self.source}: the config is empty; add a `sites:` mapping (see config.example.yaml) "
                "or run `doc-scraper add URL`"
            )
        if not isinstance(data, dict):
            return self._fail(
                f"{self.source}: the top level must be a mapping of settings (key: value), "
                f"got {_describe(data)}"
            )
        errors: list[ConfigError] = []
        warnings: list[str] = []
        errors.extend(self.unknown_keys((), data, _GLOBAL_FIELDS, extra=("sites",), other=_SITE_FIELDS))
        values: dict[str, Any] = {}
        for name, spec in _GLOBAL_FIELDS.items():
            if spec.kind == "mapping" or data.get(name) is None:
                continue
            try:
                values[name] = self.convert((name,), data[name], spec)
            except ConfigError as exc:
                errors.append(exc)
        values["http_client_settings"] = self.http(data.get("http_client_settings"), errors)
        self.cross_check(values, errors)
        resolved = {f.name: getattr(_GLOBAL_DEFAULTS, f.name) for f in dataclasses.fields(Config)}
        resolved.update(values)
        sites = self.sites(data, resolved, errors)
        errors.sort(key=lambda error: error.line or 0)
        if errors or not all(site.valid for site in sites) or not sites:
            return ConfigCheck(self.source, None, tuple(errors), tuple(warnings), tuple(sites))
        config = Config(
            sites={site.key: site.site for site in sites if site.site is not None},
            path=self.source,
            warnings=(*warnings, *(w for site in sites for w in site.warnings)),
            **values,
        )
        return ConfigCheck(self.source, config, (), tuple(warnings), tuple(sites))

    def _fail(self, message: str) -> ConfigCheck:
        return ConfigCheck(self.source, None, (ConfigError(message),))

    def unknown_keys(
        self,
        parent: tuple[str, ...],
        data: dict[Any, Any],
        fields: dict[str, _Field],
        *,
        extra: tuple[str, ...] = (),
        other: dict[str, _Field] | None = None,
    ) -> list[ConfigError]:
        errors = []
        valid = [*fields, *extra]
        for key in data:
            if isinstance(key, str) and key in valid:
                continue
            path = (*parent, str(key))
            if not isinstance(key, str):
                errors.append(
                    self.error(path, f"key {_describe(key)} is not a string; quote it or rename it")
                )
                continue
            where = f"under {_dotted(parent)}" if parent else "at the top level"
            if parent and parent[0] == "sites" and key in _SITE_SPELLING:
                hint = f"inside a site this key is spelled `{_SITE_SPELLING[key]}`"
            elif other is not None and key in other:
                hint = (
                    f"`{key}` is a per-site key: move it under sites.<key>"
                    if not parent
                    else f"`{key}` is a global key: move it to the top level of the file"
                )
            else:
                guess = closest_key(key, valid)
                hint = f"did you mean `{guess}`?" if guess else "see config.example.yaml for the valid keys"
            errors.append(self.error(path, f"unknown key {where}; {hint}"))
        return errors

    # 2. one value
    def convert(self, path: tuple[str, ...], raw: Any, spec: _Field) -> Any:
        name = path[-1]
        hint = f"; set e.g. {name}: {spec.example}"
        got = _describe(raw)
        if spec.kind in ("int", "float"):
            is_number = isinstance(raw, int) and not isinstance(raw, bool)
            if spec.kind == "float":
                is_number = is_number or isinstance(raw, float)
            noun = "an integer" if spec.kind == "int" else "a number"
            expected = noun + _bounds(spec)
            if spec.kind == "int" and not (is_number and spec.maximum is not None and raw > spec.maximum):
                # An integer's maximum is a sanity cap: name it only to values above it.
                expected = noun + _bounds(replace(spec, maximum=None))
            if (
                not is_number
                or (spec.minimum is not None and raw < spec.minimum)
                or (spec.maximum is not None and raw > spec.maximum)
            ):
                raise self.error(path, f"expected {expected}, got {got}{hint}")
            if spec.kind == "float" and raw != raw:  # NaN
                raise self.error(path, f"expected {expected}, got {got}{hint}")
            return float(raw) if spec.kind == "float" else raw
        if spec.kind == "bool":
            if not isinstance(raw, bool):
                raise self.error(path, f"expected true or false, got {got}{hint}")
            return raw
        if spec.kind == "duration":
            if isinstance(raw, bool) or not isinstance(raw, str | int | float):
                raise self.error(path, f"expected a duration like 500ms, 45s, 2m or 1h30m, got {got}{hint}")
            try:
                return parse_duration(raw)
            except ValueError as exc:
                raise self.error(path, f"{exc}{hint}") from None
        if spec.kind in ("str", "enum"):
            if not isinstance(raw, str):
                raise self.error(path, f"expected a string, got {got}{hint}")
            if not raw.strip() and not spec.allow_empty:
                raise self.error(path, f"must not be empty; remove the key to use the default{hint}")
            if spec.kind == "enum":
                if raw.strip().lower() not in spec.choices:
                    choices = " or ".join(spec.choices)
                    raise self.error(path, f"expected {choices}, got {got}{hint}")
                return raw.strip().lower()
            if name == "jsonl_output_filename" and ("/" in raw or "\\" in raw or raw.strip() in (".", "..")):
                raise self.error(path, f"expected a plain file name, got {got}{hint}")
            return raw
        if spec.kind == "strlist":
            if not isinstance(raw, list):
                raise self.error(
                    path, f"expected a list of strings, got {got}; set e.g. {name}: {spec.example}"
                )
            for index, item in enumerate(raw):
                if not isinstance(item, str) or not item.strip():
                    raise self.error(
                        (*path, f"[{index}]"), f"expected a non-empty string, got {_describe(item)}{hint}"
                    )
            return tuple(item.strip() for item in raw)
        raise AssertionError(f"unhandled field kind {spec.kind}")

    def http(self, raw: Any, errors: list[ConfigError]) -> HTTPClientSettings:
        path = ("http_client_settings",)
        if raw is None:
            return HTTPClientSettings()
        if not isinstance(raw, dict):
            errors.append(
                self.error(
                    path, f"expected a mapping (timeout, max_idle_conns_per_host, ...), got {_describe(raw)}"
                )
            )
            return HTTPClientSettings()
        errors.extend(self.unknown_keys(path, raw, _HTTP_FIELDS))
        values: dict[str, Any] = {}
        for name, spec in _HTTP_FIELDS.items():
            if raw.get(name) is None:
                continue
            try:
                values[name] = self.convert((*path, name), raw[name], spec)
            except ConfigError as exc:
                errors.append(exc)
        if values.get("timeout") == 0:
            errors.append(self.error((*path, "timeout"), "must be longer than 0; set e.g. timeout: 45s"))
            del values["timeout"]
        return HTTPClientSettings(**values)

    def cross_check(self, values: dict[str, Any], errors: list[ConfigError]) -> None:
        initial = values.get("initial_retry_delay", _GLOBAL_DEFAULTS.initial_retry_delay)
        maximum = values.get("max_retry_delay", _GLOBAL_DEFAULTS.max_retry_delay)
        if initial > maximum:
            key = "initial_retry_delay" if "initial_retry_delay" in values else "max_retry_delay"
            errors.append(
                self.error(
                    (key,),
                    f"initial_retry_delay ({initial:g}s) is longer than max_retry_delay ({maximum:g}s); "
                    "lower initial_retry_delay or raise max_retry_delay",
                )
            )

    # 3. sites
    def sites(
        self, data: dict[Any, Any], resolved: dict[str, Any], errors: list[ConfigError]
    ) -> list[SiteCheck]:
        raw = data.get("sites")
        fix = "add one with `doc-scraper add URL`, or see config.example.yaml"
        if raw is None or raw == {}:
            where = ("sites",) if "sites" in data else ()
            message = f"no sites configured; {fix}"
            errors.append(self.error(where, message) if where else ConfigError(message))
            return []
        if not isinstance(raw, dict):
            errors.append(
                self.error(
                    ("sites",), f"expected a mapping from site key to settings, got {_describe(raw)}; {fix}"
                )
            )
            return []
        return [self.site(key, value, resolved) for key, value in raw.items()]

    def site(self, key: Any, raw: Any, resolved: dict[str, Any]) -> SiteCheck:
        path = ("sites", str(key))
        name = str(key)
        if not isinstance(key, str):
            return SiteCheck(
                name, None, (self.error(path, f'site key {name} is not a string; quote it: "{name}"'),)
            )
        if not SITE_KEY_PATTERN.match(key):
            message = (
                "a site key becomes a folder name: start with a letter or digit and use only letters, "
                "digits, "
                "'_', '.' and '-'; e.g. python_docs"
            )
            return SiteCheck(name, None, (self.error(path, message),))
        if not isinstance(raw, dict):
            message = (
                f"expected a mapping of site settings (start_urls, allowed_domain, ...), got {_describe(raw)}"
            )
            return SiteCheck(name, None, (self.error(path, message),))
        errors = self.unknown_keys(path, raw, _SITE_FIELDS, other=_GLOBAL_FIELDS)
        warnings: list[str] = []
        values: dict[str, Any] = {}
        for field_name, spec in _SITE_FIELDS.items():
            if raw.get(field_name) is None:
                continue
            try:
                values[field_name] = self.convert((*path, field_name), raw[field_name], spec)
            except ConfigError as exc:
                errors.append(exc)
        self.site_scope(path, raw, values, errors, warnings)
        for field_name, global_name in _INHERITED.items():
            values.setdefault(field_name, resolved[global_name])
        if errors:
            errors.sort(key=lambda error: error.line or 0)
            return SiteCheck(name, None, tuple(errors), tuple(warnings))
        return SiteCheck(name, SiteConfig(key=key, **values), (), tuple(warnings))

    def site_scope(
        self,
        path: tuple[str, ...],
        raw: dict[Any, Any],
        values: dict[str, Any],
        errors: list[ConfigError],
        warnings: list[str],
    ) -> None:
        """Start URLs, domain, prefix, selector and patterns: the checks that need more than a type."""
        hosts: list[str] = []
        urls: tuple[str, ...] = values.get("start_urls", ())
        url_errors = len(errors)
        if "start_urls" not in raw or raw["start_urls"] is None:
            errors.append(
                self.error(
                    path,
                    'missing required key start_urls; set e.g. start_urls: ["https://docs.example.com/"]',
                )
            )
        elif "start_urls" in values and not urls:
            errors.append(
                self.error(
                    (*path, "start_urls"), 'must list at least one URL; e.g. ["https://docs.example.com/"]'
                )
            )
        for index, url in enumerate(urls):
            try:
                parts = urlsplit(url)  # raises ValueError for a bad IPv6 literal
                host = parts.hostname or ""
                parts.port  # noqa: B018 - raises ValueError for a bad port
                scheme = parts.scheme.lower()
            except ValueError:
                host = scheme = ""
            if scheme not in ("http", "https") or not host:
                errors.append(
                    self.error(
                        (*path, "start_urls", f"[{index}]"),
                        f'expected an absolute http(s) URL, got "{url}"; e.g. https://docs.example.com/',
                    )
                )
                continue
            hosts.append(host.lower().rstrip("."))
        domain = values.get("allowed_domain")
        if domain is not None:
            domain = self.hostname((*path, "allowed_domain"), domain, errors)
        elif hosts and len(set(hosts)) == 1 and len(hosts) == len(urls):
            domain = hosts[0]
            warnings.append(
                f"{_dotted(path)}: allowed_domain not set; using {domain}, the host of start_urls "
                f"(add allowed_domain: {domain} to silence this)"
            )
        elif len(errors) == url_errors:  # a broken start URL is the error to fix first
            example = hosts[0] if hosts else "docs.example.com"
            errors.append(
                self.error(path, f"missing required key allowed_domain; set e.g. allowed_domain: {example}")
            )
        if domain:
            values["allowed_domain"] = domain
            for index, url in enumerate(urls):
                try:
                    host = (urlsplit(url).hostname or "").lower().rstrip(".")
                except ValueError:
                    continue  # already reported as not an http(s) URL
                if host and host != domain:
                    errors.append(
                        self.error(
                            (*path, "start_urls", f"[{index}]"),
                            f'{url} is on host "{host}", not allowed_domain "{domain}"; '
                            "change the URL or allowed_domain, or add a second site for that host",
                        )
                    )
        prefix = str(values.get("allowed_path_prefix", "/")).strip() or "/"
        if not prefix.startswith("/"):
            prefix = "/" + prefix
        values["allowed_path_prefix"] = prefix
        for url in urls:
            try:
                url_path = urlsplit(url).path or "/"
            except ValueError:
                continue  # already reported as not an http(s) URL
            if not url_path.startswith(prefix) and url_path.rstrip("/") != prefix.rstrip("/"):
                warnings.append(
                    f"{_dotted(path)}.start_urls: {url} is outside allowed_path_prefix {prefix} "
                    "and will be out of scope"
                )
        selector = values.get("content_selector")
        if isinstance(selector, str) and selector.strip().lower() == "auto":
            values["content_selector"] = "auto"
        for index, pattern in enumerate(values.get("disallowed_path_patterns", ())):
            try:
                re.compile(pattern)
            except re.error as exc:
                errors.append(
                    self.error(
                        (*path, "disallowed_path_patterns", f"[{index}]"),
                        f'invalid regular expression "{pattern}": {exc}; escape special characters such as '
                        "( [ + ? with a backslash",
                    )
                )
        for list_name in ("allowed_image_domains", "disallowed_image_domains"):
            cleaned = []
            for index, item in enumerate(values.get(list_name, ())):
                bare = item.lower()[2:] if item.startswith("*.") else item.lower()
                checked = self.hostname((*path, list_name, f"[{index}]"), bare, errors)
                if checked:
                    cleaned.append(("*." if item.startswith("*.") else "") + checked)
            if list_name in values:
                values[list_name] = tuple(cleaned)

    def hostname(self, path: tuple[str, ...], value: str, errors: list[ConfigError]) -> str | None:
        text = value.strip().lower()
        if "://" in text or "/" in text:
            host = urlsplit(text if "://" in text else "//" + text).hostname or "docs.example.com"
            errors.append(
                self.error(path, f'expected a hostname, not a URL: "{value}"; set e.g. {path[-1]}: {host}')
            )
            return None
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        try:
            ipaddress.ip_address(text)
            return text
        except ValueError:
            pass
        if ":" in text:
            bare = text.split(":", 1)[0]
            errors.append(
                self.error(path, f'write the hostname without a port: "{value}"; set e.g. {path[-1]}: {bare}')
            )
            return None
        if not _HOSTNAME.match(text):
            errors.append(self.error(path, f'"{value}" is not a valid hostname; e.g. docs.example.com'))
            return None
        return text.rstrip(".")


def _bounds(spec: _Field) -> str:
    if spec.minimum is not None and spec.maximum is not None:
        return f" between {spec.minimum:g} and {spec.maximum:g}"
    if spec.minimum is not None:
        return f" >= {spec.minimum:g}"
    return ""
