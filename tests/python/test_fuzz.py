"""A fuzzer of the scenario and profile parsers (issue 9): seeded mutations of every
examples/*.toml and of profiles/*.toml (loaded through a scenario's `profile = "path"`) — keys
deleted, renamed, retyped, set to huge, negative, zero, NaN and infinite values, duplicated;
files truncated, lines dropped or repeated, binary garbage. Each case runs through
`eventpath.run` and must either succeed or raise InputError with one line; a sample also runs
through the CLI, which must exit 0, or 2 with exactly one line on stderr.

Bounded by default (EVENTPATH_FUZZ_CASES=300 cases); set EVENTPATH_FUZZ_CASES=5000 (and
EVENTPATH_FUZZ_SEED) for a long run. Every failure found is kept below as a named regression.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import eventpath
import fuzzlib
from conftest import ROOT

CASES = int(os.environ.get("EVENTPATH_FUZZ_CASES", "300"))
SEED = int(os.environ.get("EVENTPATH_FUZZ_SEED", "9"))
CLI_SAMPLE = 15


def run_in_child(cases, tmp_path):
    """Run the cases in a child process; returns {id: result}. A hang or a crash of the process
    is reported with the case that caused it."""
    cases_file, results = tmp_path / "cases.json", tmp_path / "results.jsonl"
    cases_file.write_text(json.dumps(cases))
    child = subprocess.Popen([sys.executable, str(Path(fuzzlib.__file__)), str(cases_file), str(results)], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = child.communicate(timeout=120 + 2 * len(cases))  # a hang guard, not a speed test
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        err = "timed out"
    lines = [json.loads(x) for x in results.read_text().splitlines()] if results.exists() else []
    done = {r["id"]: r for r in lines if "outcome" in r}
    started = [r["start"] for r in lines if "start" in r]
    if child.returncode != 0 or len(done) != len(cases):
        stuck = next((c for c in cases if c["id"] == started[-1]), None) if started else None
        pytest.fail(f"the fuzz child stopped ({err.strip()[-300:]}) in case {stuck and stuck['id']}: "
                    f"{stuck and stuck['what']}\n{stuck and Path(stuck['scenario']).read_bytes()[:2000]!r}")
    return done


def test_fuzzed_scenarios_and_profiles_succeed_or_fail_with_one_line(tmp_path):
    cases = fuzzlib.make_cases(CASES, SEED, tmp_path)
    results = run_in_child(cases, tmp_path)
    bad = []
    for c in cases:
        r = results[c["id"]]
        if r["outcome"] == "exception":
            bad.append(f"case {c['id']} ({c['what']}): {r['message'][:300]}")
        elif r["outcome"] == "input_error" and ("\n" in r["message"] or not r["message"].strip()):
            bad.append(f"case {c['id']} ({c['what']}): not one line: {r['message']!r}")
    assert not bad, "\n".join(bad)
    outcomes = [r["outcome"] for r in results.values()]
    # The mutations reach both sides of the checks.
    assert outcomes.count("ok") >= CASES // 20 and outcomes.count("input_error") >= CASES // 2, outcomes


def test_fuzzed_cases_through_the_cli_exit_0_or_2_with_one_line(cli, tmp_path):
    # Every other case (every fourth drew only refusals once the examples grew: the sample must
    # hold runs that succeed as well).
    cases = fuzzlib.make_cases(CLI_SAMPLE * 4, SEED + 1, tmp_path)[::2]
    codes = []
    for c in cases:
        args = ["run", c["scenario"], "--out", str(tmp_path / f"o{c['id']}")]
        if c["duration"]:
            args += ["--duration", str(c["duration"])]
        r = cli(*args)
        codes.append(r.returncode)
        where = f"case {c['id']} ({c['what']})"
        assert r.returncode in (0, 2), (where, r.returncode, r.stderr[-2000:])
        assert "Traceback" not in r.stderr and "panicked" not in r.stderr, (where, r.stderr[-2000:])
        if r.returncode == 2:
            lines = r.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith("eventpath: error: "), (where, r.stderr)
        else:
            assert (tmp_path / f"o{c['id']}" / "summary.json").exists(), where
    assert 0 in codes and 2 in codes, codes


def test_the_toml_writer_round_trips_every_example_and_profile():
    for p in fuzzlib.examples() + fuzzlib.profiles():
        import tomllib

        doc = tomllib.loads(p.read_text())
        assert tomllib.loads(fuzzlib.dumps(doc)) == doc, p


# --- Regressions: what the fuzzer found, each as a named case ---
# Run against the code before issue 9's fixes (8ea9660), the default seeds found these: each hung
# (a run of simulated days, a 0 ns tick, billions of vCPUs) where the check now says why.

def scenario_text(example: str, *subs: tuple[str, str]) -> str:
    text = (ROOT / "examples" / example).read_text()
    for old, new in subs:
        assert old in text, (example, old)
        text = text.replace(old, new, 1)
    return text


def profile_text(profile: str, section: str, key: str, value: str) -> str:
    """The profile with `[section] key`'s value replaced."""
    text = (ROOT / "profiles" / profile).read_text()
    start = text.index(f"\n[{section}]\n")
    m = re.compile(rf"(?m)^{key} = {{ value = [^,]+,").search(text, start)
    assert m, (profile, section, key)
    return text[:m.start()] + f"{key} = {{ value = {value}," + text[m.end():]


def on_profile(example: str, profile: str) -> str:
    """The example, on the profile file the regression writes beside it."""
    return scenario_text(example, (f'profile = "{profile}"', 'profile = "{tmp}/p.toml"'))


# name: (scenario text, profile text or None, a needle of the one-line InputError)
REGRESSIONS: dict[str, tuple[str, str | None, str]] = {
    "warmup_2147483648_memcached": (scenario_text("memcached.toml", ("warmup_s = 0.05", "warmup_s = 2147483648")),
                                    None, "key `warmup_s`: 2147483648 is not allowed"),
    "warmup_1e6_tcp_recv": (scenario_text("tcp-recv.toml", ("warmup_s = 0.05", "warmup_s = 1000000.0")),
                            None, "0..=3600"),
    "duration_4294967296_ping": (scenario_text("ping.toml", ("duration_s = 1.0", "duration_s = 4294967296")),
                                 None, "key `duration_s`: 4294967296 is not allowed"),
    "duration_1e6_udp_recv": (scenario_text("udp-recv.toml", ("duration_s = 0.5", "duration_s = 1000000.0")),
                              None, "1e-6..=86400"),
    "warmup_tiny_duration_huge_udp_rr": (scenario_text("udp-rr.toml", ("warmup_s = 0.05", "warmup_s = 1e-09"),
                                                       ("duration_s = 0.5", "duration_s = 4294967296")),
                                         None, "key `duration_s`"),
    "vcpus_2147483648_tcp_recv": (scenario_text("tcp-recv.toml", ("vcpus = 1", "vcpus = 2147483648")),
                                  None, "key `vm[0].vcpus`: 2147483648 is not allowed; expected 1..=288"),
    "guest_tick_hz_4294967296_es2": (on_profile("udp-recv.toml", "es2"),
                                     profile_text("es2.toml", "guest", "tick_hz", "4294967296"),
                                     "key `guest.tick_hz`: value 4294967296 is not allowed"),
    "sched_tick_hz_2pow53_elvis": (on_profile("elvis-7vm-baseline.toml", "elvis"),
                                   profile_text("elvis.toml", "sched", "tick_hz", "9007199254740993"),
                                   "key `sched.tick_hz`"),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_fuzz_regression(tmp_path, name):
    text, profile, needle = REGRESSIONS[name]
    if profile is not None:
        (tmp_path / "p.toml").write_text(profile)
    p = tmp_path / "s.toml"
    p.write_text(text.replace("{tmp}", str(tmp_path)))
    with pytest.raises(eventpath.InputError) as e:
        eventpath.run(p)  # the file's own duration: these are rejected before anything runs
    assert "\n" not in str(e.value) and needle in str(e.value), str(e.value)
