"""Dense and hybrid search on python-3.11: embedding time, quality, cutoff, latency, size.

Start from an index built by bench_search.py (lexical only), copy it, embed it:

    .venv/bin/python benchmarks/bench_search.py build --state /tmp/bench-search
    PY=/path/to/python-with-the-semantic-extra
    $PY benchmarks/bench_semantic.py embed --src /tmp/bench-search --state /tmp/bench-sem --runtime torch-int8
    $PY benchmarks/bench_semantic.py eval --state /tmp/bench-sem --mode hybrid      # in-process metrics
    $PY benchmarks/bench_semantic.py offtopic --state /tmp/bench-sem                # cutoff check
    $PY benchmarks/bench_semantic.py latency --state /tmp/bench-sem --mode hybrid
    # the shared harness, one process per query:
    python3 /work/shared/tools/search_eval.py /work/shared/eval/search-python.jsonl \\
        --cmd "$PY benchmarks/bench_semantic.py query --state /tmp/bench-sem --mode hybrid \\
               -limit {limit} {query}" \\
        --strip-prefix /python-3.11/

Times are wall clock and CPU seconds of the whole process (all threads): the
machine is shared, CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import apsw  # noqa: E402
from search_metrics import percentile, score_query  # noqa: E402

from doc_scraper.index import embed, hybrid, vectors  # noqa: E402
from doc_scraper.index.db import open_connection  # noqa: E402

EVAL = Path("/work/shared/eval/search-python.jsonl")
BASE_URL = "http://127.0.0.1:8000/python-3.11/"

# Questions the python-3.11 docs do not answer: the cutoff must return nothing for them.
OFF_TOPIC = (
    "how long should I boil an egg for a soft yolk",
    "best recipe for sourdough bread starter",
    "how to make a creamy carbonara without cream",
    "what temperature to roast a whole chicken",
    "how many minutes to cook basmati rice",
    "vegan substitute for eggs in pancakes",
    "who won the football world cup in 2014",
    "offside rule in football explained",
    "how many players are on a soccer team",
    "premier league top scorers this season",
    "best formation for a football team 4-3-3",
    "how to train a puppy to stop biting",
    "symptoms of the common cold in children",
    "cheap flights from london to barcelona",
    "how to grow tomatoes on a balcony",
    "what is the capital of australia",
    "how to knit a scarf for beginners",
    "best hiking trails in the alps",
    "how to change a flat tyre on a bicycle",
    "guitar chords for a beginner song",
    "how to remove a red wine stain from carpet",
    "what wine goes well with salmon",
    "marathon training plan for beginners",
    "how to paint a bedroom wall",
    "tips for a job interview in marketing",
)

# Written after the cutoff was calibrated on OFF_TOPIC, never used to tune it: a check that it generalises.
OFF_TOPIC_HOLDOUT = (
    "how do I descale an espresso machine",
    "what is a good beginner workout routine at the gym",
    "recommend a fantasy novel like the lord of the rings",
    "how to fold a fitted sheet",
    "when is the best time to plant tulip bulbs",
    "how much should I tip a waiter in new york",
    "why do cats purr",
    "what causes the northern lights",
    "how to negotiate a higher salary",
    "best way to learn to play the piano as an adult",
    "who painted the mona lisa",
    "how to make cold brew coffee at home",
)


def _load_config_yaml(state: Path) -> None:
    src_cfg = state / "config.yaml"
    if src_cfg.exists():
        text = src_cfg.read_text(encoding="utf-8")
        lines = [ln for ln in text.splitlines() if not ln.startswith(("state_dir:", "output_base_dir:"))]
        header = f"state_dir: {state}\noutput_base_dir: {state / 'out'}\n"
        src_cfg.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")


def cmd_embed(args: argparse.Namespace) -> None:
    state: Path = args.state
    db = state / "index.db"
    if args.src:
        state.mkdir(parents=True, exist_ok=True)
        src_db = args.src / "index.db"
        conn = apsw.Connection(str(src_db))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        shutil.copyfile(src_db, db)
        shutil.copyfile(args.src / "config.yaml", state / "config.yaml")
        _load_config_yaml(state)
    size0 = db.stat().st_size
    w0, c0 = time.perf_counter(), time.process_time()
    embedder = embed.load_embedder(args.model, args.runtime)
    load_wall = time.perf_counter() - w0
    stats = embed.embed_pending_sync(db, embedder)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    conn = open_connection(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    done, total = vectors.coverage(conn)
    conn.close()
    print(
        json.dumps(
            {
                "runtime": args.runtime,
                "model": stats.model_id,
                "embedded": stats.embedded,
                "reused": stats.reused,
                "live_sections_with_vectors": f"{done}/{total}",
                "model_load_s": round(load_wall, 1),
                "wall_s": round(wall, 1),
                "cpu_s": round(cpu, 1),
                "sections_per_s": round(stats.embedded / max(stats.seconds, 1e-9), 1),
                "db_mb_before": round(size0 / 1e6, 1),
                "db_mb_after": round(db.stat().st_size / 1e6, 1),
                "load_avg_1m": round(os.getloadavg()[0], 2),
            }
        )
    )


class _Searcher:
    def __init__(self, state: Path, runtime: str | None) -> None:
        self.db = state / "index.db"
        self.conn = open_connection(self.db, readonly=True)
        model = vectors.stored_model(self.conn)
        self.embedder = embed.load_embedder(None, runtime or _runtime_of(model)) if model else None

    def search(self, query: str, mode: str, limit: int, cutoff: float = hybrid.CUTOFF) -> list:  # type: ignore[type-arg]
        return hybrid.search(
            self.conn,
            query,
            embedder=self.embedder,
            mode=mode,
            db_key=str(self.db),
            limit=limit,
            cutoff=cutoff,
        )


def _runtime_of(model_id: str | None) -> str:
    return hybrid.runtime_for(model_id or "")


def _rows() -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]


def cmd_eval(args: argparse.Namespace) -> None:
    s = _Searcher(args.state, args.runtime)
    if args.rrf_k:
        hybrid.RRF_K = args.rrf_k
    if args.w_dense is not None:
        hybrid.W_DENSE = args.w_dense
    if args.w_cos is not None:
        hybrid.W_COS = args.w_cos
    if args.fusion:
        hybrid.FUSION = args.fusion
    mrr = r5 = sec1 = sec10 = ndcg = 0.0
    n_sec = empty = 0
    rows = _rows()
    for q in rows:
        results = s.search(q["query"], args.mode, 10, args.cutoff)
        empty += not results
        keys = [r.url.removeprefix(BASE_URL) for r in results]
        score = score_query(q, keys, [r.anchor for r in results])
        rank = score.rank
        mrr += 1 / rank if rank else 0
        r5 += 1 if rank and rank <= 5 else 0
        ndcg += score.ndcg
        if score.has_sections:
            n_sec += 1
            sec10 += score.sec10
            sec1 += score.sec1
        if args.verbose and (not rank or rank > 1):
            gold = list(dict.fromkeys(r["path"] for r in q["relevant"]))
            print(f"  rank={rank} {q['id']} {q['query']!r}: gold {gold[:2]} got {keys[:3]}")
    n = len(rows)
    print(
        json.dumps(
            {
                "mode": args.mode,
                "n": n,
                "mrr10": round(mrr / n, 3),
                "r5": round(r5 / n, 3),
                "ndcg10": round(ndcg / n, 3),
                "sec1": round(sec1 / max(n_sec, 1), 3),
                "sec10": round(sec10 / max(n_sec, 1), 3),
                "empty": empty,
                "rrf_k": hybrid.RRF_K,
                "w_dense": hybrid.W_DENSE,
                "fusion": hybrid.FUSION,
                "w_cos": hybrid.W_COS,
                "cutoff": args.cutoff,
            }
        )
    )


def cmd_offtopic(args: argparse.Namespace) -> None:
    s = _Searcher(args.state, args.runtime)
    assert s.embedder is not None, "this index has no embeddings"
    matrix = vectors.load_matrix(s.conn, str(s.db))

    def best(q: str) -> float:
        hits = matrix.search(s.embedder.embed([q])[0], 1)  # type: ignore[union-attr]
        return hits[0][1] if hits else 0.0

    on = sorted((best(q["query"]), q["query"]) for q in _rows())
    off = sorted(((best(q), q) for q in OFF_TOPIC), reverse=True)
    returned_off = [q for q in OFF_TOPIC if s.search(q, args.mode, 10, args.cutoff)]
    returned_holdout = [q for q in OFF_TOPIC_HOLDOUT if s.search(q, args.mode, 10, args.cutoff)]
    empty_on = [q["query"] for q in _rows() if not s.search(q["query"], args.mode, 10, args.cutoff)]
    print(
        json.dumps(
            {
                "mode": args.mode,
                "cutoff": args.cutoff,
                "on_topic_lowest_best_cosine": [(round(c, 3), q) for c, q in on[:5]],
                "off_topic_highest_best_cosine": [(round(c, 3), q) for c, q in off[:5]],
                "off_topic_with_results": f"{len(returned_off)}/{len(OFF_TOPIC)}",
                "off_topic_returned": returned_off,
                "holdout_off_topic_with_results": f"{len(returned_holdout)}/{len(OFF_TOPIC_HOLDOUT)}",
                "holdout_returned": returned_holdout,
                "on_topic_empty": empty_on,
            },
            indent=1,
        )
    )


def cmd_latency(args: argparse.Namespace) -> None:
    s = _Searcher(args.state, args.runtime)
    queries = [q["query"] for q in _rows()]
    for q in queries:
        s.search(q, args.mode, 10)
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(args.rounds):
        for q in queries:
            w0, c0 = time.perf_counter(), time.process_time()
            s.search(q, args.mode, 10)
            cpu.append((time.process_time() - c0) * 1000)
            wall.append((time.perf_counter() - w0) * 1000)

    print(
        json.dumps(
            {
                "mode": args.mode,
                "queries": len(wall),
                "wall_p50_ms": percentile(wall, 0.5),
                "wall_p95_ms": percentile(wall, 0.95),
                "cpu_p50_ms": percentile(cpu, 0.5),
                "cpu_p95_ms": percentile(cpu, 0.95),
                "load_avg_1m": round(os.getloadavg()[0], 2),
            }
        )
    )


def cmd_query(args: argparse.Namespace) -> None:
    s = _Searcher(args.state, args.runtime)
    results = s.search(" ".join(args.words), args.mode, args.limit)
    out = [
        {"url": r.url, "anchor": r.anchor, "title": r.title, "score": r.score, "snippet": r.snippet}
        for r in results
    ]
    print(json.dumps(out, ensure_ascii=False))


def cmd_speed(args: argparse.Namespace) -> None:
    """Sections embedded per CPU-second on 400 random sections of --src, per --tokens budget."""
    import random

    src = args.src or Path("/tmp/bench-search")
    conn = open_connection(src / "index.db", readonly=True)
    rows = [(str(h), str(t)) for h, t in conn.execute("SELECT heading_text, text FROM sections")]
    conn.close()
    random.seed(1)
    texts = [vectors.embed_text(h, t) for h, t in random.sample(rows, min(400, len(rows)))]
    runtime = args.runtime or embed.DEFAULT_RUNTIME
    path = embed.find_model(args.model)
    for tokens in (int(t) for t in args.tokens.split(",")):
        embedder: Any
        if runtime.startswith("onnx"):
            embedder = embed.OnnxEmbedder(path, quantize=runtime == "onnx", max_tokens=tokens)
        elif runtime.startswith("torch"):
            embedder = embed.TorchEmbedder(path, quantize=runtime == "torch-int8", max_tokens=tokens)
        else:
            embedder = embed.StaticEmbedder(path)
        embedder.embed(texts[:32])  # warm up
        c0, w0 = time.process_time(), time.perf_counter()
        embedder.embed(texts)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        print(
            json.dumps(
                {
                    "model": embedder.model_id,
                    "tokens": tokens,
                    "sections_per_cpu_s": round(len(texts) / cpu, 1),
                    "sections_per_s": round(len(texts) / wall, 1),
                    "load_avg_1m": round(os.getloadavg()[0], 2),
                }
            )
        )


def cmd_all(args: argparse.Namespace) -> None:
    """`make bench`: embed a copy of bench_search's index; quality, cutoff and latency per mode."""
    import contextlib
    import io

    src = args.src or Path("/tmp/bench-search-worker")
    if not (src / "index.db").is_file():
        sys.exit(f"{src}/index.db missing: run `bench_search.py build --state {src}` first (make bench does)")
    if not embed.semantic_available():
        sys.exit("the semantic extra is not installed: pip install -e '.[semantic]'")
    lexical_mb = (src / "index.db").stat().st_size / 1e6

    def run(fn: Any, **over: Any) -> dict[str, Any]:
        ns = argparse.Namespace(**{**vars(args), **over})
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            fn(ns)
        return json.loads(buf.getvalue())

    emb = run(cmd_embed, src=src, runtime=args.runtime or embed.DEFAULT_RUNTIME)
    print(json.dumps({"embed": emb}))
    rows = []
    for mode in hybrid.MODES:
        quality = run(cmd_eval, mode=mode, src=None)
        latency = run(cmd_latency, mode=mode, src=None)
        rows.append((mode, quality, latency))
    off = run(cmd_offtopic, mode="hybrid", src=None)
    print()
    print(f"python-3.11 index: lexical {lexical_mb:.1f} MB; with vectors {emb['db_mb_after']:.1f} MB")
    print(
        f"embedding ({emb['model']}): {emb['embedded']} sections in {emb['wall_s']} s wall,"
        f" {emb['cpu_s']} CPU-s (load {emb['load_avg_1m']})"
    )
    head = ("MRR@10", "R@5", "nDCG", "Sec@1", "Sec@10", "p50 ms", "p95 ms")
    print(f"{'mode':8} " + " ".join(f"{h:>7}" for h in head))
    for mode, q, lat in rows:
        print(
            f"{mode:8} {q['mrr10']:7.3f} {q['r5']:6.3f} {q['ndcg10']:6.3f} {q['sec1']:6.3f} {q['sec10']:6.3f}"
            f" {lat['wall_p50_ms']:7.1f} {lat['wall_p95_ms']:7.1f}"
        )
    print("baseline (BASELINES.md) hybrid RRF: MRR 0.860, R@5 0.983, Sec@1 0.45; dense build 541 s")
    print(
        f"off-topic with results (hybrid): {off['off_topic_with_results']} calibration,"
        f" {off['holdout_off_topic_with_results']} held out;"
        f" on-topic without results: {len(off['on_topic_empty'])}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "command",
        nargs="?",
        default="all",
        choices=["all", "embed", "eval", "offtopic", "latency", "query", "speed"],
    )
    ap.add_argument("--state", type=Path, default=Path("/tmp/bench-sem"))
    ap.add_argument(
        "--src", type=Path, help="copy index.db and config.yaml from this bench_search state first"
    )
    ap.add_argument("--runtime", choices=embed.RUNTIMES, default=None)
    ap.add_argument("--model", default=None, help="model folder (default: found offline)")
    ap.add_argument("--mode", choices=hybrid.MODES, default="hybrid")
    ap.add_argument("--cutoff", type=float, default=hybrid.CUTOFF)
    ap.add_argument("--rrf-k", type=int, default=0)
    ap.add_argument("--w-dense", type=float, default=None)
    ap.add_argument("--w-cos", type=float, default=None)
    ap.add_argument("--fusion", choices=["rrf", "linear"], default=None)
    ap.add_argument("--tokens", default="32,64,128", help="speed: word-piece budgets to time")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-limit", "--limit", type=int, default=10)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("words", nargs="*")
    args = ap.parse_intermixed_args()
    if args.command == "embed" and args.runtime is None:
        args.runtime = embed.DEFAULT_RUNTIME
    {
        "all": cmd_all,
        "speed": cmd_speed,
        "embed": cmd_embed,
        "eval": cmd_eval,
        "offtopic": cmd_offtopic,
        "latency": cmd_latency,
        "query": cmd_query,
    }[args.command](args)


if __name__ == "__main__":
    main()
