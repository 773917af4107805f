"""Pure URL helpers: normalisation, host and prefix tests, URL -> output file path.

Standard library only; nothing here does I/O. Every function takes and returns
plain strings so that any stage may use it.

Normalisation (``normalize_url``) is idempotent: the engine keys its seen set,
page state and output paths on the normalised form, so a URL must normalise to
itself. It never strips a trailing slash (``/a/`` and ``/a`` may be different
resources; redirects are deduplicated by their final URL instead).
"""

from __future__ import annotations

import contextlib
import hashlib
import posixpath
import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = [
    "PAGE_EXTENSIONS",
    "host_key",
    "normalize_url",
    "origin",
    "path_segments_match_prefix",
    "relative_link",
    "same_host",
    "try_normalize_url",
    "url_matches_domain",
    "url_to_relpath",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}

# RFC 3986 character classes, used to re-encode paths consistently.
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PATH_SAFE = _UNRESERVED | frozenset("!$&'()*+,;=:@/")
_HEX = frozenset("0123456789abcdefABCDEF")

# Extensions of the last path segment that mark a page file; they are replaced
# by ``.md`` (``a/b.html`` -> ``a/b.md``). Any other dotted segment (``v1.2``)
# is treated as a directory name, so ``/api/v1.2`` and ``/api/v1.3`` do not
# collide on ``api/v1.md``.
PAGE_EXTENSIONS = frozenset(
    {
        "html",
        "htm",
        "xhtml",
        "shtml",
        "php",
        "asp",
        "aspx",
        "jsp",
        "cfm",
        "cgi",
        "md",
        "markdown",
        "txt",
        "rst",
    }
)

# Unicode whitespace and C0 controls at either end, stripped in one pass: ``str.strip``
# then urlsplit's own C0 stripping could each expose more for the other (not idempotent).
_EDGE_SPACE = re.compile(r"^[\s\x00-\x20]+|[\s\x00-\x20]+$")

_MAX_SEGMENT_BYTES = 100
_UNSAFE_SEGMENT_CHARS = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(1, 10)} | {f"lpt{i}" for i in range(1, 10)}
)


def _normalize_percent(text: str, safe: frozenset[str]) -> str:
    """Re-encode ``text`` so equal resources get equal spelling.

    Escapes get upper-case hex, escapes of unreserved characters are decoded
    (RFC 3986 §6.2.2.2), a ``%`` that starts no escape becomes ``%25``, and
    characters outside ``safe`` are UTF-8 percent-encoded.
    """
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "%":
            if i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
                decoded = chr(int(text[i + 1 : i + 3], 16))
                out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
                i += 3
                continue
            out.append("%25")
        elif ch in safe:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for an absolute path (``/a/./b/../c`` -> ``/a/c``)."""
    if "." not in path:
        return path
    segments = path.split("/")
    out: list[str] = []
    for seg in segments[1:]:
        if seg == ".":
            continue
        if seg == "..":
            if out:
                out.pop()
            continue
        out.append(seg)
    result = "/" + "/".join(out)
    # A path ending in "/." or "/.." names a directory: keep its slash.
    if segments[-1] in (".", "..") and not result.endswith("/"):
        result += "/"
    return result


def _normalize_host(host: str) -> str:
    # "example.com." (fully qualified) and "example.com" are one host.
    host = host.lower().rstrip(".")
    if not host.isascii():
        with contextlib.suppress(UnicodeError):
            host = host.encode("idna").decode("ascii")
    return host


def _netloc(scheme: str, host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        shown += f":{port}"
    return shown


def normalize_url(url: str, keep_query_params: tuple[str, ...] = ()) -> str:
    """Return the canonical spelling of an http(s) URL.

    Lower-cases scheme and host (IDNA for non-ASCII hosts), drops default
    ports, credentials and the fragment, resolves dot segments, normalises
    percent-encoding, turns an empty path into ``/`` and keeps only the query
    parameters named in ``keep_query_params`` (sorted). The trailing slash is
    kept as is. URLs of other schemes only lose their fragment. Raises
    ``ValueError`` for a URL that cannot be parsed (bad port, bad IPv6 literal).
    """
    parts = urlsplit(_EDGE_SPACE.sub("", url))
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return _EDGE_SPACE.sub("", urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, "")))
    host = _normalize_host(parts.hostname or "")
    port = parts.port  # raises ValueError when out of range or not a number
    path = _remove_dot_segments(_normalize_percent(parts.path or "/", _PATH_SAFE))
    if not path.startswith("/"):
        path = "/" + path
    query = ""
    if keep_query_params and parts.query:
        wanted = set(keep_query_params)
        pairs = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k in wanted)
        query = urlencode(pairs)
    return urlunsplit((scheme, _netloc(scheme, host, port), path, query, ""))


def try_normalize_url(url: str, keep_query_params: tuple[str, ...] = ()) -> str | None:
    """Like ``normalize_url`` but return None for a URL that cannot be parsed."""
    try:
        return normalize_url(url, keep_query_params)
    except ValueError:
        return None


def host_key(url: str) -> str:
    """``host`` or ``host:port`` (non-default port) of a URL, lower-cased."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return _netloc(scheme, _normalize_host(parts.hostname or ""), parts.port)


def url_matches_domain(url: str, allowed_domain: str) -> bool:
    """True if the URL's host name equals ``allowed_domain`` (case-insensitive, any port).

    Like the Go original, the port is not part of the domain: a config names
    a host (the loader rejects ``host:port``), and a site may move between ports.
    """
    try:
        host = _normalize_host(urlsplit(url).hostname or "")
    except ValueError:
        return False
    return bool(host) and host == _normalize_host(allowed_domain.strip().lower().rstrip("/"))


def same_host(a: str, b: str) -> bool:
    """True if both URLs name the same host and effective port."""
    try:
        pa, pb = urlsplit(a), urlsplit(b)
        return (_normalize_host(pa.hostname or ""), _effective_port(pa.scheme, pa.port)) == (
            _normalize_host(pb.hostname or ""),
            _effective_port(pb.scheme, pb.port),
        )
    except ValueError:
        return False


def _effective_port(scheme: str, port: int | None) -> int | None:
    return port if port is not None else _DEFAULT_PORTS.get(scheme.lower())


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL; the port is shown only when not the default."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return f"{scheme}://{_netloc(scheme, _normalize_host(parts.hostname or ''), parts.port)}"


def _clean_prefix(prefix: str) -> str:
    prefix = _remove_dot_segments(_normalize_percent(prefix.strip() or "/", _PATH_SAFE))
    if not prefix.startswith("/"):
        prefix = "/" + prefix
    return prefix.rstrip("/") or "/"


def path_segments_match_prefix(path: str, prefix: str) -> bool:
    """True if ``path`` lies under ``prefix`` segment-wise.

    ``/docs`` (or ``/docs/``) matches ``/docs``, ``/docs/`` and ``/docs/x``,
    but not ``/docsearch``.
    """
    prefix = _clean_prefix(prefix)
    if prefix == "/":
        return True
    return path == prefix or path.startswith(prefix + "/")


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _cut_utf8(text: str, limit: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def _sanitize_segment(raw: str, *, reserve: int = 0) -> str:
    """One path segment as a safe file or directory name (never empty, never dots)."""
    seg = unquote(raw, errors="replace")
    # Lone surrogates cannot be written to a file system: "?" then "_".
    seg = seg.encode("utf-8", "replace").decode("utf-8")
    seg = _UNSAFE_SEGMENT_CHARS.sub("_", seg)
    if not seg.strip(". "):
        return "untitled"
    if seg.split(".", 1)[0].lower() in _WINDOWS_RESERVED:
        seg = "_" + seg
    limit = _MAX_SEGMENT_BYTES - reserve
    if len(seg.encode("utf-8", "surrogatepass")) > limit:
        # A hash of the full name keeps long names that share a head apart.
        seg = _cut_utf8(seg, limit - 9) + "-" + _short_hash(seg)
    return seg


def url_to_relpath(url: str, allowed_domain: str, path_prefix: str) -> str | None:
    """Map a page URL to its Markdown file, relative to the site folder.

    Pass the normalised URL. Returns None for non-http(s) URLs, other hosts
    and paths outside ``path_prefix``. The path below the prefix becomes the
    file path: empty -> ``index.md``; a last segment with a page extension
    (``PAGE_EXTENSIONS``) -> ``<name>.md``; anything else -> directories +
    ``index.md`` (``a/b`` and ``a/b/`` -> ``a/b/index.md``). Segments are
    percent-decoded, then sanitised, so the result is a relative POSIX path
    that never leaves the site folder. A query string (kept parameters) adds
    ``-q<hash>`` to the file name. Known collisions: ``a.html`` vs ``a.htm``;
    ``/x/`` vs ``/x/index.html``; names that differ only in characters the
    sanitiser replaces with ``_``.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not url_matches_domain(url, allowed_domain):
        return None
    path = parts.path or "/"
    if not path_segments_match_prefix(path, path_prefix):
        return None
    prefix = _clean_prefix(path_prefix)
    rest = path[len(prefix) :] if prefix != "/" else path
    segments = [s for s in rest.split("/") if s]
    suffix = "-q" + _short_hash(parts.query) if parts.query else ""
    reserve = len(suffix) + len(".md")
    stem = "index"
    if segments and not rest.endswith("/"):
        last = segments[-1]
        name, dot, ext = last.rpartition(".")
        if dot and name and ext.lower() in PAGE_EXTENSIONS:
            segments.pop()
            stem = _sanitize_segment(name, reserve=reserve)
    dirs = [_sanitize_segment(s) for s in segments]
    return posixpath.join(*dirs, stem + suffix + ".md")


def relative_link(from_relpath: str, to_relpath: str, fragment: str = "") -> str:
    """Link text from one output file to another: a POSIX relative path plus ``#fragment``."""
    fragment = fragment.lstrip("#")
    if from_relpath == to_relpath and fragment:
        return "#" + fragment
    rel = posixpath.relpath(to_relpath, posixpath.dirname(from_relpath) or ".")
    return rel + ("#" + fragment if fragment else "")
