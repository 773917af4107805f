"""search_docs latency through the MCP server, idle and while a crawl job runs.

Usage (the site must have been crawled once and its docs server be running):
  .venv/bin/python benchmarks/bench_mcp.py CONFIG SITE_KEY QUERIES.jsonl [ROUNDS]

Starts `python -m doc_scraper mcp-server -config CONFIG` over stdio with the SDK client,
times every query of QUERIES.jsonl through search_docs (limit 10) with no crawl running,
then starts crawl_site(SITE_KEY) (a full re-crawl) and times the same queries again while
the job runs, then cancels the job. Prints p50/p95/max per phase.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


async def timed(client: Client, queries: list[str], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        for q in queries:
            t0 = time.perf_counter()
            result = await client.call_tool("search_docs", {"query": q, "limit": 10})
            out.append((time.perf_counter() - t0) * 1000)
            assert not result.is_error, result.content
    return out


async def main() -> None:
    config, site, qfile = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    queries = [json.loads(line)["query"] for line in open(qfile) if line.strip()]
    env = {**os.environ, "PYTHONPATH": "/work/main"}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "doc_scraper", "mcp-server", "-config", config],
        env=env,
        cwd="/work/main",
    )
    with open("/tmp/mcp_latency_server.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            await timed(client, queries[:5], 1)  # warm up
            idle = await timed(client, queries, rounds)
            job = (await client.call_tool("crawl_site", {"site_key": site})).structured_content
            assert job is not None
            for _ in range(600):  # wait until the crawl is really fetching and parsing pages
                status = (
                    await client.call_tool("get_job_status", {"job_id": job["job_id"]})
                ).structured_content
                assert status is not None
                if status["pages_processed"] >= 20 or status["status"] != "running":
                    break
                await asyncio.sleep(0.1)
            started_at = status["pages_processed"]
            busy = await timed(client, queries, rounds)
            status = (await client.call_tool("get_job_status", {"job_id": job["job_id"]})).structured_content
            assert status is not None
            await client.call_tool("cancel_crawl", {"job_id": job["job_id"]})
    for name, values in (("idle", idle), ("during crawl", busy)):
        print(
            f"{name:13s} n={len(values):4d} p50 {pct(values, 0.5):6.1f} ms  p95 {pct(values, 0.95):6.1f} ms  "
            f"max {max(values):6.1f} ms"
        )
    done = status["pages_processed"] - started_at
    print(f"crawl job was {status['status']}: {done} pages processed while timing")


if __name__ == "__main__":
    asyncio.run(main())
