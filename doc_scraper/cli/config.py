"""``doc-scraper config validate|list``: check the config file and show its sites."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from doc_scraper.cli._flags import add_config_flag, add_flag
from doc_scraper.config.load import ConfigCheck, SiteCheck, check_config
from doc_scraper.errors import ConfigError

if TYPE_CHECKING:
    import argparse

HELP = "validate the config file or list its sites (config validate | config list)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION", parser_class=type(parser))
    validate = actions.add_parser(
        "validate", help="check every key; exit 0 if valid, 1 if not", description="Check the config file."
    )
    add_config_flag(validate)
    add_flag(validate, "site", metavar="KEY", help="check only this site (and the global keys)")
    add_flag(validate, "json", action="store_true", help="print the report as JSON")
    listing = actions.add_parser(
        "list", help="list the configured sites", description="List the configured sites."
    )
    add_config_flag(listing)
    add_flag(listing, "json", action="store_true", help="print the list as JSON")
    parser.set_defaults(_config_parser=parser)


def run(args: argparse.Namespace) -> int:
    if args.config_action == "validate":
        return _validate(args.config, args.site, json_output=args.json)
    if args.config_action == "list":
        return _list(args.config, json_output=args.json)
    args._config_parser.print_help(sys.stderr)
    return 1


def _validate(path: str, site_key: str | None, *, json_output: bool) -> int:
    check = check_config(path)
    errors = [str(error) for error in check.errors]
    sites = check.sites
    if site_key is not None:
        sites = tuple(site for site in check.sites if site.key == site_key)
        if not sites and check.sites:
            available = ", ".join(site.key for site in check.sites)
            message = f"site '{site_key}' not found in {check.path}; available sites: {available}"
            if not json_output:
                raise ConfigError(message)
            errors.append(message)
    valid = not errors and bool(sites) and all(site.valid for site in sites)
    if json_output:
        report: dict[str, Any] = {
            "config_path": check.path,
            "valid": valid,
            "site_count": len(check.sites),
            "warnings": list(check.warnings),
            "errors": errors,
            "sites": [_site_json(site) for site in sites],
        }
        print(json.dumps(report, indent=2))
    else:
        _print_validation(check, sites, errors, valid)
    return 0 if valid else 1


def _site_json(site: SiteCheck) -> dict[str, Any]:
    out: dict[str, Any] = {"key": site.key, "valid": site.valid}
    if site.warnings:
        out["warnings"] = list(site.warnings)
    if site.errors:
        out["error"] = str(site.errors[0])
        out["errors"] = [str(error) for error in site.errors]
    return out


def _print_validation(
    check: ConfigCheck, sites: tuple[SiteCheck, ...], errors: list[str], valid: bool
) -> None:
    print(f"config: {check.path}")
    width = max((len(site.key) for site in sites), default=0)
    for site in sites:
        if site.valid and site.site is not None:
            count = len(site.site.start_urls)
            detail = (
                f"{site.site.allowed_domain}{site.site.allowed_path_prefix}, {count} start URL{_s(count)}"
            )
            print(f"  ok    {site.key:<{width}}  {detail}")
        else:
            print(f"  FAIL  {site.key}")
            for site_error in site.errors:
                print(f"        {site_error}")
    for message in errors:
        print(f"error: {message}")
    for warning in (*check.warnings, *(w for site in sites for w in site.warnings)):
        print(f"warning: {warning}")
    if valid:
        print(f"valid: {len(sites)} site{_s(len(sites))}")
    else:
        count = len(errors) + sum(len(site.errors) for site in sites)
        print(f"invalid: {count} error{_s(count)}")


def _list(path: str, *, json_output: bool) -> int:
    check = check_config(path)
    rows = [site.site for site in check.sites if site.site is not None]
    errors = [str(error) for error in check.all_errors()]
    if json_output:
        report: dict[str, Any] = {
            "config_path": check.path,
            "count": len(rows),
            "sites": [
                {
                    "key": site.key,
                    "domain": site.allowed_domain,
                    "start_urls_count": len(site.start_urls),
                    "path_prefix": site.allowed_path_prefix,
                }
                for site in rows
            ],
        }
        if errors:
            report["errors"] = errors
        print(json.dumps(report, indent=2))
        return 1 if errors else 0
    if not rows and errors:
        raise ConfigError("; ".join(errors))
    width = max((len(site.key) for site in rows), default=0)
    domain_width = max((len(site.allowed_domain) for site in rows), default=0)
    for site in rows:
        count = len(site.start_urls)
        print(
            f"{site.key:<{width}}  {site.allowed_domain:<{domain_width}}  "
            f"{site.allowed_path_prefix}  ({count} start URL{_s(count)})"
        )
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


def _s(count: int) -> str:
    return "" if count == 1 else "s"
