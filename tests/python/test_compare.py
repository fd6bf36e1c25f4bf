"""``eventpath compare`` (issue 29, item 1): the matrix comes from what the seams offer, the
table ranks distinct results and judges differences against the seed spread, the output
directory is whole or untouched, and bad input is one line and exit code 2."""

import csv
import json
import re

import pytest

from conftest import ROOT
from eventpath import InputError, executor, tables
from eventpath.compare import execute, figure, matrix, metrics, passes, rank, seams, workloads
from test_input_errors import assert_exit_2_one_line

# Short runs: these tests check behaviour, not numbers a longer run would refine.
FAST = ["--seeds", "1,2", "--duration", "0.004", "--warmup", "0.002"]


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def listed_by_run(cli, tmp_path, key_line: str) -> list[str]:
    """The names `eventpath run` lists for a key it refuses: an independent reading of the seam."""
    sc = tmp_path / "bad.toml"
    sc.write_text('name = "b"\nprofile = "es2"\n[[vm]]\nname = "v"\nvcpus = 2\n' + key_line
                  + '\n[vm.workload]\nkind = "tcp_rr"\nrequest_bytes = 1\nresponse_bytes = 1\n')
    r = cli("run", str(sc), "--out", str(tmp_path / "o"), "--no-plots")
    assert r.returncode == 2, r.stderr
    return re.findall(r"`([a-z_0-9]+)`", r.stderr.split("expected", 1)[1])


# --- The matrix comes from the seams ---

def test_every_delivery_the_checker_accepts_is_ranked_or_refused_with_its_reason(cli, tmp_path):
    names = listed_by_run(cli, tmp_path, 'interrupt_delivery = "bogus"')
    assert len(names) >= 2
    r = cli("compare", "--profile", "es2", "--workloads", "tcp_rr", "--vary", "delivery", "--out",
            str(tmp_path / "c"), *FAST, "--no-plots")
    assert r.returncode == 0, r.stderr
    cells = {c["delivery"]: c for c in read(tmp_path / "c" / "cells.csv") if c["delivery"]}
    assert set(cells) == set(names)
    for name, c in cells.items():
        assert (c["status"] == "ran" and c["rank"]) or (c["status"] == "refused" and c["reason"]), c
        # Every mechanism that ran is on the printed table (its best row, if not in the top).
        if c["status"] == "ran":
            assert re.search(rf"\b{name}\b", r.stdout), name
    assert any(c["status"] == "refused" for c in cells.values())  # e.g. ELI without an assigned device


def test_request_handling_expands_the_sub_choices_only_its_mode_reads():
    base = workloads.scenario("es2", "t", {"kind": "tcp_rr", "request_bytes": 1, "response_bytes": 1}, 0.01, 0.0)
    names = [c.name for c in matrix.handling(base)]
    modes = seams.choices(base, "host.io.handling")
    switches = seams.choices(base, "host.io.switch")
    assert {f"es2/{s}" for s in switches} <= set(names)
    assert "es2" not in names  # expanded, never left at its default switch
    assert "vhost+busy_poll" in names
    for m in modes:
        assert any(n == m or n.startswith(m + "/") for n in names), m
    # Every choice passes the checker on its own (an I/O core is found where a mode needs one).
    for c in matrix.handling(base):
        assert seams.refusal(matrix.variant(base, (c,))) is None, c.name


def test_names_are_read_from_a_refusal_in_either_quoting():
    assert seams.names("key `x`: unknown variant `\x01`, expected one of `a`, `b_c`, `d`") == ["a", "b_c", "d"]
    assert seams.names('kind "\x01" is not allowed; expected one of "none", "fir"') == ["none", "fir"]
    assert seams.names("unknown variant ``, expected `halt` or `poll`") == ["halt", "poll"]
    assert seams.names("missing field `message_bytes`") == []


# --- Runs, groups, ranks ---

def fake_runs(digest_of):
    """A stand-in for the worker pool: cell i on seed s gives ``digest_of(i, s)``; records calls."""
    calls = []

    def run_all(jobs, seeds, duration, ex, what=""):
        out = []
        for w, i, sc in jobs:
            calls.append((i, tuple(seeds)))
            o = execute.Outcome(w, i)
            for s in seeds:
                d = digest_of(i, s)
                o.digests.append(d)
                o.rows.append({"seed": s, "throughput": float(len(d)), "cpu_host": 1.0})
            out.append(o)
        return out

    return run_all, calls


def test_cells_equal_on_the_first_seed_run_the_others_once_when_the_second_agrees(monkeypatch):
    run_all, calls = fake_runs(lambda i, s: f"same-{s}")
    monkeypatch.setattr(passes, "run_all", run_all)
    m = passes.run({"w": [{}, {}, {}, {}]}, [1, 2, 3], None, executor.Executor())
    assert [g.members for g in m.groups["w"]] == [[0, 1, 2, 3]]
    assert [r["seed"] for r in m.groups["w"][0].rows] == [1, 2, 3]
    assert (0, (2, 3)) in calls and (3, (2,)) in calls
    assert not any(i in (1, 2) and seeds != (1,) for i, seeds in calls)


def test_a_group_whose_last_cell_differs_on_the_second_seed_splits(monkeypatch):
    run_all, calls = fake_runs(lambda i, s: "a" if s == 1 or i < 2 else "bb")
    monkeypatch.setattr(passes, "run_all", run_all)
    m = passes.run({"w": [{}, {}, {}, {}]}, [1, 2], None, executor.Executor())
    assert sorted(g.members for g in m.groups["w"]) == [[0, 1], [2, 3]]
    assert all((i, (2,)) in calls for i in range(4))


def group(members, throughputs):
    rows = [{"seed": s, "throughput": t, "throughput_unit": "ops/s", "cpu_host": 1.0, "p99_us": None}
            for s, t in enumerate(throughputs, 1)]
    return passes.Group("w", members, rows, ())


def test_a_difference_is_marked_only_beyond_the_seed_spread():
    groups = [group([0], [100, 110, 90]), group([1], [105, 115, 95]), group([2], [130, 125, 135]),
              group([3], [50, 60, 55])]
    rows = {r.members[0]: r for r in rank.rows("w", groups, ["as given", "a", "b", "c"])}
    assert [r.members[0] for r in sorted(rows.values(), key=lambda r: r.rank)] == [2, 1, 0, 3]
    assert rows[1].vs_base["throughput"][1] is False  # ranges overlap: the seeds could explain it
    assert rows[2].vs_base["throughput"] == (30.0, True)
    assert rows[3].vs_base["throughput"][1] is True and rows[3].vs_base["throughput"][0] < 0
    assert "p99_us" not in rows[2].vs_base  # a workload without latency has no latency difference


def test_names_identical_in_every_cell_are_reported_together():
    fam = [matrix.Choice("f", n) for n in ("a", "b", "c")]
    other = [matrix.Choice("g", n) for n in ("x", "y")]
    cells = {"w": [()] + [(f, g) for f in fam for g in other]}
    # a and b give the same row wherever the rest of the cell is the same; c differs.
    rank_of = {("a", "x"): 1, ("b", "x"): 1, ("c", "x"): 2, ("a", "y"): 3, ("b", "y"): 3, ("c", "y"): 3}
    rows = {}
    for i, (f, g) in enumerate(cells["w"][1:], 1):
        rows.setdefault(rank_of[(f.name, g.name)], []).append(i)
    ranked = {"w": [rank.Row("w", r, m, [], {}, {}, {}, []) for r, m in rows.items()]}
    assert rank.twins(cells, ranked) == [("f", ["a", "b"])]


def test_the_pareto_frontier_keeps_only_cells_no_other_beats_on_both():
    pts = [(1.0, 10.0, "a"), (2.0, 30.0, "b"), (1.5, 5.0, "c"), (3.0, 20.0, "d"), (0.5, 1.0, "e")]
    assert [p[2] for p in figure.frontier(pts, higher_is_better=True)] == ["e", "a", "b"]
    assert [p[2] for p in figure.frontier(pts, higher_is_better=False)] == ["e"]


# --- Host CPU by who burns it ---

def cpu_of(changes: dict):
    from eventpath import api

    sc = workloads.scenario("es2", "t", {"kind": "tcp_rr", "request_bytes": 1, "response_bytes": 1}, 0.01, 0.002)
    for k, v in changes.items():
        seams.set_key(sc, k, v)
    cores = (sc.get("host", {}).get("io", {}) or {}).get("cores", [])
    return metrics.of_run(api.run(sc).summary, cores)


def test_host_cpu_is_split_by_who_burns_it_and_the_parts_add_up():
    # The es2 profile's Linux 4.4 KVM halt-polls by default (host.halt_poll_ns): "plain" is a host
    # with it turned off, "halt" the stock one.
    plain = cpu_of({"vm.*.halt_poll": {"max_halt_poll_ns": 0}})
    halt = cpu_of({})
    pmd = cpu_of({"host.io": {"handling": "pmd", "cores": [7]}, "vm.*.halt_poll": {"max_halt_poll_ns": 0}})
    assert plain["cpu_halt_poll"] < 0.01 < halt["cpu_halt_poll"]  # a halted vCPU's thread polls
    assert plain["cpu_backend"] > 0 and plain["cpu_io_cores"] == 0
    assert pmd["cpu_io_cores"] > 0.9 and pmd["cpu_backend"] == 0  # the PMD spins on its own core
    for m in (plain, halt, pmd):
        parts = sum(m[k] for k in metrics.CPU_PARTS)
        assert parts == pytest.approx(m["cpu_host"], abs=1e-9), m


# --- The command ---

def test_compare_on_named_workloads_writes_table_csvs_figure_and_provenance(cli, tmp_path):
    out = tmp_path / "c"
    r = cli("compare", "--profile", "es2", "--workloads", "tcp_rr,memcached:concurrency=4", "--vary", "handling",
            "--out", str(out), *FAST)
    assert r.returncode == 0, r.stderr
    assert {p.name for p in out.iterdir()} == {"compare.json", "ranked.csv", "cells.csv", "pareto.png"} | (
        {"ranked.parquet"} if tables.parquet_available() else set())
    ranked = read(out / "ranked.csv")
    assert {row["workload"] for row in ranked} == {"tcp_rr", "memcached:concurrency=4"}
    assert sum(row["baseline"] == "True" for row in ranked) == 2
    assert {"exits_eoi_per_s", "cpu_halt_poll", "p999_us", "throughput_beyond_spread"} <= set(ranked[0])
    # Rows that summarise seeds start with scenario and seeds, the list of them.
    assert list(ranked[0])[:2] == ["scenario", "seeds"] and {row["seeds"] for row in ranked} == {"1;2"}
    assert {row["scenario"] for row in ranked} == {"tcp_rr", "memcached_concurrency-4"}
    cells = read(out / "cells.csv")
    assert list(cells[0])[:2] == ["scenario", "seeds"]
    assert {c["seeds"] for c in cells if c["status"] == "ran"} == {"1;2"}
    assert all(c["seeds"] == "" for c in cells if c["status"] != "ran")
    man = json.loads((out / "compare.json").read_text())
    assert man["command"].startswith("eventpath compare --profile es2 --workloads tcp_rr")
    assert man["version"] and man["seeds"] == [1, 2] and "es2" in man["profiles"]
    assert man["scenarios"]["memcached:concurrency=4"]["vm"][0]["workload"]["concurrency"] == 4
    assert man["reproduction_flags"] == "no scorecard"
    for name in man["families"]["tcp_rr"]["handling"]:
        assert name in r.stdout


def test_every_choice_of_every_varied_family_is_on_the_printed_table(cli, tmp_path):
    r = cli("compare", "--profile", "es2", "--workloads", "memcached", "--vary", "moderation", "--vary", "routing",
            "--vary", "halt_poll", "--top", "1", "--out", str(tmp_path / "c"), *FAST, "--no-plots")
    assert r.returncode == 0, r.stderr
    man = json.loads((tmp_path / "c" / "compare.json").read_text())
    fams = man["families"]["memcached"]
    assert set(fams) == {"moderation", "routing", "halt_poll"}
    shown = {fam: set() for fam in fams}
    for line in r.stdout.splitlines():
        label = re.search(r"((?:[\w/+|]+ · )+[\w/+|]+)", line) if re.match(r"\s+\d+ ", line) else None
        for fam, part in zip(fams, label.group(1).split(" · ") if label else []):
            shown[fam] |= set(part.split("|"))
    # v_balance rebinds a Xen PV event channel: on this virtio layout every cell of it is refused,
    # and the table lists it among the refused cells with the checker's reason.
    assert "refused" in r.stdout and "v_balance" in r.stdout
    for fam, names in fams.items():
        assert len(names) >= 2 and set(names) - {"v_balance"} <= shown[fam], (fam, names, shown[fam])


def test_compare_runs_a_scenario_file_as_its_baseline(cli, tmp_path):
    sc = tmp_path / "s.toml"
    text = re.sub(r'(?m)^interrupt_delivery = "emulated".*$', 'interrupt_delivery = "posted"',
                  (ROOT / "examples/tcp-rr.toml").read_text())
    assert 'interrupt_delivery = "posted"' in text
    sc.write_text(text)
    r = cli("compare", str(sc), "--vary", "delivery=posted,emulated", "--out", str(tmp_path / "c"), *FAST)
    assert r.returncode == 0, r.stderr
    # The cell that sets what the scenario already says ran the same simulation as it.
    base = [row for row in read(tmp_path / "c" / "ranked.csv") if row["baseline"] == "True"]
    assert len(base) == 1 and "posted" in base[0]["same_results_as"] and "emulated" not in base[0]["same_results_as"]


@pytest.mark.parametrize("args,needle", [
    (["--profile", "es2", "--workloads", "tcp_rr,bogus"], "unknown workload 'bogus'"),
    (["--profile", "es2", "--workloads", "tcp_rr", "--vary", "routing=bogus"], "routing=bogus: unknown mechanism"),
    (["--profile", "es2", "--workloads", "tcp_rr", "--vary", "bogus"], "unknown mechanism family"),
    (["--profile", "nope", "--workloads", "tcp_rr"], "nope"),
    (["--profile", "es2", "--workloads", "memcached:concurrency=0"], "concurrency"),
    (["--profile", "es2", "--workloads", "tcp_rr:request_bytes"], "not key=value"),
    (["--workloads", "tcp_rr"], "--profile"),
    ([str(ROOT / "examples/tcp-rr.toml"), "--profile", "es2", "--workloads", "tcp_rr"], "not both"),
    ([str(ROOT / "examples/tcp-rr.toml"), "--seeds", "1,1"], "given twice"),
    ([str(ROOT / "examples/tcp-rr.toml"), "--duration", "-1"], "--duration"),
    ([str(ROOT / "examples/tcp-rr.toml"), "--warmup", "nan"], "--warmup nan"),
    (["--profile", "es2", "--workloads", "tcp_rr", "--warmup", "-1"], "--warmup -1: -1 is not allowed"),
])
def test_bad_input_is_one_line_and_nothing_is_written(cli, tmp_path, args, needle):
    out = tmp_path / "c"
    assert_exit_2_one_line(cli("compare", *args, "--out", str(out)), needle)
    assert not out.exists()


def test_an_out_that_is_a_file_or_holds_another_runs_files_is_refused(cli, tmp_path):
    f = tmp_path / "file"
    f.write_text("mine")
    assert_exit_2_one_line(cli("compare", "--profile", "es2", "--workloads", "tcp_rr", "--out", str(f)), "not a directory")
    assert f.read_text() == "mine"
    d = tmp_path / "d"
    d.mkdir()
    (d / "summary.json").write_text("{}")
    assert_exit_2_one_line(cli("compare", "--profile", "es2", "--workloads", "tcp_rr", "--out", str(d)), "summary.json")
    assert [p.name for p in d.iterdir()] == ["summary.json"]


def test_a_failed_comparison_leaves_the_earlier_one_whole(tmp_path, monkeypatch):
    from eventpath import compare

    inputs = workloads.named("es2", ["tcp_rr"], 0.004, 0.002)
    out = tmp_path / "c"
    compare.compare(inputs, out, seeds=[1], vary={"halt_poll": None}, say=lambda s: None)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(*a, **k):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(figure, "pareto", broken)
    with pytest.raises(RuntimeError):
        compare.compare(inputs, out, seeds=[2], vary={"halt_poll": None}, say=lambda s: None)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # A rerun without figures replaces every file: the old figure does not stay beside new tables.
    compare.compare(inputs, out, seeds=[2], vary={"halt_poll": None}, plots=False, say=lambda s: None)
    assert sorted(p.name for p in out.iterdir()) == ["cells.csv", "compare.json", "ranked.csv"] + (
        ["ranked.parquet"] if tables.parquet_available() else [])


def test_an_unknown_workload_from_the_api_names_the_schema_kinds():
    with pytest.raises(InputError, match="tcp_stream"):
        workloads.named("es2", ["nosuch"], 0.01, 0.0)


# --- A run that is not a result is never ranked (issue 45: compare-ranks-stalled-cell.sh) ---

STALL = {"vm": "vm0", "stalled_from_s": 0.003, "detected_s": 0.005, "recovered_s": None, "state": "forced"}


@pytest.mark.parametrize("flows, status", [([STALL], "stalled"), (None, "unjudged")])
def test_a_cell_with_one_seed_that_is_no_result_is_listed_apart_not_ranked(tmp_path, monkeypatch, flows, status):
    """The halt-polling cell's run on seed 2 (of 3) says a flow stalled, or carries no watchdog
    verdict: that cell is not ranked, and the table, compare.json and cells.csv say why."""
    from eventpath import api, compare

    real = api.run

    def run(sc, seed=None, duration=None, **kw):
        r = real(sc, seed=seed, duration=duration, **kw)
        if seed == 2 and "halt_poll" in sc["vm"][0]:
            r.summary["stalled_flows"] = flows
        return r

    monkeypatch.setattr(api, "run", run)
    said = []
    out = tmp_path / "c"
    compare.compare(workloads.named("es2", ["tcp_rr"], 0.004, 0.002), out, seeds=[1, 2, 3], workers=1,
                    vary={"halt_poll": None}, plots=False, say=said.append)
    cells = {c["cell"]: c for c in read(out / "cells.csv")}
    assert cells["on"]["status"] == status and cells["on"]["rank"] == ""
    assert cells["on"]["reason"].startswith("seed 2: ")
    assert cells["off"]["status"] == cells["as given"]["status"] == "ran"
    ranked = read(out / "ranked.csv")
    assert ranked and not any("on" in r["same_results_as"].split(" | ") for r in ranked)
    man = json.loads((out / "compare.json").read_text())
    assert [(c["cell"], c["status"]) for c in man["not_ranked"]["tcp_rr"]] == [("on", status)]
    text = "\n".join(said)
    assert f"1 {status.upper()} (not ranked)" in text and f"{status.upper()}, not ranked: on: seed 2: " in text
    if flows:
        assert "VM vm0 stalled from 0.0030 s, never recovered" in cells["on"]["reason"]
