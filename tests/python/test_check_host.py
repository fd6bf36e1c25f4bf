"""`eventpath check-host`: a host's `perf kvm stat report` / `kvm_stat -1` held against a scenario.

The sample report (examples/host/perf-kvm-stat-report.txt) is laid out as tools/perf/
builtin-kvm.c's print_result writes it; its counts are made up.
"""

import csv
import json

import pytest

from conftest import ROOT
from eventpath import perf_kvm_stat as pks
from eventpath._eventpath import InputError

SAMPLE = (ROOT / "examples/host/perf-kvm-stat-report.txt").read_text()


def test_the_report_reads_as_counts_and_times_per_reason():
    h = pks.parse_perf_kvm_stat(SAMPLE, 10.0)
    assert h.count["MSR_WRITE"] == 412310 and h.count["IO_INSTRUCTION"] == 31
    assert h.avg_us["HLT"] == 96.40 and h.scope == "all VMs, all VCPUs"
    assert sum(h.count.values()) == 801174, "the report's Total Samples"
    g = h.groups()
    # EPT_MISCONFIG (fast MMIO kicks) and IO_INSTRUCTION (PIO kicks) are both kicks.
    assert g["io"][0] == pytest.approx((98412 + 31) / 10.0)
    assert g["io"][1] == pytest.approx((98412 * 2.61 + 31 * 9.10) / (98412 + 31))
    assert g["apic"][0] == pytest.approx(41231.0) and g["hlt"][0] == pytest.approx(12187.7)
    # PAUSE, MSR_READ and CPUID are none of the model's named reasons.
    assert g["other"][0] == pytest.approx((5120 + 1210 + 96) / 10.0)
    assert sum(v for v, _ in g.values()) == pytest.approx(80117.4)


def test_svm_reasons_with_spaces_and_both_interrupt_window_spellings_read():
    text = ("\nAnalyze events for pid(s) 4242, all VCPUs:\n\n"
            "             VM-EXIT    Samples  Samples%     Time%    Min Time    Max Time         Avg time\n\n"
            "                 npf        900    60.00%    50.00%      1.00us      9.00us      2.00us ( +-   1.00% )\n"
            "             DB excp        100     6.67%     1.00%      0.50us      1.00us      0.60us ( +-   2.00% )\n"
            "               vintr        500    33.33%    49.00%      0.40us      3.00us      1.00us ( +-   1.00% )\n"
            "\nTotal Samples:1500, Total events handled time:2360.00us.\n")
    h = pks.parse_perf_kvm_stat(text, 1.0)
    assert h.scope == "pid(s) 4242, all VCPUs"
    assert h.count == {"npf": 900, "DB excp": 100, "vintr": 500}
    assert [pks.group_of(r) for r in ("npf", "DB excp", "vintr", "PENDING_INTERRUPT", "INTERRUPT_WINDOW")] == \
        ["ept_violation", "other", "interrupt_window", "interrupt_window", "interrupt_window"]


@pytest.mark.parametrize("text, seconds, says", [
    ("hello\n", 10, "no `VM-EXIT  Samples ...` header"),
    ("\n      IO Port Access    Samples  Samples%\n", 10, "`IO Port Access` or `MMIO Access` table"),
    (SAMPLE.replace("     412310 ", "     41x310 "), 10, "line 7 'MSR_WRITE     41x310"),
    (SAMPLE.replace("Total Samples:801174", "Total Samples:801175"), 10, "the rows add up to 801174 samples"),
    (SAMPLE.replace("             CPUID ", "               HLT "), 10, "reason HLT appears twice"),
    (SAMPLE, 0, "0 seconds is not allowed"),
    ("\n             VM-EXIT    Samples  Samples%\n\nTotal Samples:0, Total events handled time:0.00us.\n", 5,
     "the VM-EXIT table has no rows"),
])
def test_a_report_that_does_not_read_is_refused_in_one_line(text, seconds, says):
    with pytest.raises(InputError) as e:
        pks.parse_perf_kvm_stat(text, seconds, "r.txt")
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_kvm_stat_batch_lines_give_one_seconds_counts():
    text = ("kvm_entry                                 9000      4500\n"
            "kvm_exit                                  9000      4500\n"
            "kvm_exit(EXTERNAL_INTERRUPT)              3000      1500\n"
            "kvm_exit(HLT)                             6000      3000\n")
    h = pks.parse_kvm_stat(text)
    assert h.count == {"EXTERNAL_INTERRUPT": 1500, "HLT": 3000} and h.seconds == 1.0 and not h.avg_us
    assert h.groups()["hlt"] == (3000.0, None)
    with pytest.raises(InputError, match="no `kvm_exit\\(REASON\\)"):
        pks.parse_kvm_stat("kvm_exit   9000   4500\n")


def test_verdicts_take_kvm_compares_rate_tolerance_and_leave_small_groups_unjudged():
    host = pks.HostExits("h", 1.0, {"IO_INSTRUCTION": 1000, "HLT": 1000, "MSR_WRITE": 1000, "CPUID": 5}, {})
    rows = {r.group.key: r for r in pks.compare(host, {"io": 1200.0, "hlt": 1300.0, "apic": 0.0, "other": 4.0},
                                                     {})}
    assert rows["io"].verdict == "agrees"  # +20 %
    assert rows["hlt"].verdict == "differs: scenario 1.3x host"  # +30 %
    assert rows["apic"].verdict == "scenario has none"
    assert rows["other"].verdict == "both small" and rows["ept_violation"].verdict == "both small"


def test_check_host_sums_the_scenarios_exits_into_the_groups_and_writes_its_table(cli, tmp_path):
    r = cli("check-host", "examples/memcached.toml", "--perf-kvm-stat", "examples/host/perf-kvm-stat-report.txt",
            "--seconds", "10", "--duration", "0.05", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "against examples/host/perf-kvm-stat-report.txt (10 s, all VMs, all VCPUs)" in r.stdout
    assert "groups agree within ±25 %" in r.stdout
    d = json.loads((tmp_path / "check-host.json").read_text())
    groups = {g["group"]: g for g in d["groups"]}
    assert set(groups) == {g.key for g in pks.GROUPS}
    assert groups["io"]["host_exits_per_s"] == pytest.approx(9844.3)
    # The scenario's side is its own summary's exits, summed as the groups say.
    assert cli("run", "examples/memcached.toml", "--duration", "0.05", "--out", str(tmp_path / "run"),
               "--no-plots").returncode == 0
    s = json.loads((tmp_path / "run/summary.json").read_text())
    ex = s["vms"][0]["exits_per_s"]
    for g in pks.GROUPS:
        assert groups[g.key]["scenario_exits_per_s"] == pytest.approx(sum(ex[k] for k in g.model)), g.key
    assert groups["io"]["scenario_exits_per_s"] > 0, "memcached's VM kicks"
    with open(tmp_path / "check-host.csv") as f:
        assert [row["group"] for row in csv.DictReader(f)] == [g.key for g in pks.GROUPS]


@pytest.mark.parametrize("args, says", [
    ((), "give one of --perf-kvm-stat FILE"),
    (("--perf-kvm-stat", "examples/host/perf-kvm-stat-report.txt"), "--perf-kvm-stat needs --seconds"),
    (("--kvm-stat", "x.txt", "--seconds", "3"), "--seconds is for --perf-kvm-stat"),
    (("--kvm-stat", "no/such/file.txt"), "no/such/file.txt: cannot read it"),
    (("--perf-kvm-stat", "examples/host/perf-kvm-stat-report.txt", "--seconds", "10", "--vm", "vm9",
      "--duration", "0.01"), "--vm vm9: no such VM"),
])
def test_check_host_refuses_in_one_line(cli, args, says):
    r = cli("check-host", "examples/memcached.toml", *args)
    assert r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1, r.stderr
