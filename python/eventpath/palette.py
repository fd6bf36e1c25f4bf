"""One colour per configuration and per exit reason, the same in every figure (issue 29 item 3).

A reader who learnt on one figure that ELVIS is red and an EOI exit green finds them so on
every other: the reproductions, ``eventpath run``'s exits, the calibration report, compare's
figures and the report site all take their colours from here and nowhere else.

Configurations are named as the experiments name them (``reproduce/*.py``). Across papers the
stock set-up (ES2's "noPI", ELVIS's "Baseline", DID's "KVM" and "PV") is grey and the paper's
own proposal (the full ES2, ELVIS, DID) red; they never share a figure. A name not listed gets
a colour from a stable hash of it, so that it too keeps its colour from figure to figure.
"""

from __future__ import annotations

import zlib

GREY, BLUE, ORANGE, GREEN, RED = "#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"
PURPLE, BROWN, PINK, OLIVE, CYAN = "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"

#: Configurations of the reproductions (reproduce/es2*.py, elvis.py, did.py).
CONFIGS: dict[str, str] = {
    # ES2 §6.2-6.3
    "noPI": GREY, "PI": BLUE, "PI+H(P)": ORANGE, "PI+H(O)": GREEN, "PI+R": PURPLE,
    "PI+H(P)+R": RED, "PI+H(O)+R": PINK,
    # ELVIS §4.2
    "Baseline": GREY, "Baseline with affinity": BLUE, "Fine-grained only": ORANGE, "No interposition": GREEN,
    "ELVIS": RED,
    # DID §5
    "KVM": GREY, "APICv": BLUE, "VT-d-PI": PURPLE, "DID": RED, "bare-metal": "#222222",
    "PV": GREY, "PV-DID": "#ff9896", "SRIOV": CYAN, "SRIOV-DID": RED, "SRIOV-NAPI-8": OLIVE,
    "SRIOV-NAPI-4": BROWN, "SRIOV-dynamic-ITR": "#aec7e8",
    # A sensitivity study's unchanged run (es2-table1-sensitivity)
    "default": GREY,
}

#: Exit reasons, in the simulator's order (``eventpath._eventpath.exit_reasons()``): darker and
#: paler shades than the configurations' so that a figure with both (ES2 Fig. 4: exits by reason
#: beside EHT per configuration) never reads one as the other.
EXIT_REASONS: dict[str, str] = {
    "io_instruction": "#393b79", "interrupt_delivery": "#e7ba52", "eoi": "#637939",
    "external_interrupt": "#ad494a", "timer": "#a55194", "hlt": "#8c6d31", "ept_violation": "#de9ed6",
    "interrupt_window": "#9c9ede", "ipi": "#cedb9c", "other": "#525252",
}

#: Colours for names not listed (configurations only), hashed into: neither a listed
#: configuration's nor an exit reason's.
_SPARE = ("#ffbb78", "#98df8a", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5", "#08519c",
          "#54278f", "#f16913", "#6baed6", "#fd8d3c")

#: Roles that are not a configuration.
SIMULATED = BLUE            # a simulated value with no configuration to name
PUBLISHED_EDGE = "black"    # a published value's marker edge and its tolerance band's whiskers
TOLERANCE = "#2ca02c"       # the "within tolerance" band of a miss-in-tolerances axis
PRIOR = "#bbbbbb"           # a value before a fit
FRONTIER = BLUE             # compare's Pareto frontier
OTHER_POINT = "#b0b0b0"     # a result not on the frontier
BASELINE_MARK = RED         # the scenario as given
VERDICT_OK, VERDICT_MISS, NO_VERDICT = GREEN, RED, "#999999"   # a compared row within / outside its tolerance


def config_color(name: str) -> str:
    """The colour of configuration ``name``: its own, that of a listed name it is a variant of
    (``SRIOV@45.8K`` is SRIOV's, ``netperf+apache ELVIS`` ELVIS's), or a stable hashed one."""
    if name in CONFIGS:
        return CONFIGS[name]
    base = name.split("@", 1)[0]
    if base in CONFIGS:
        return CONFIGS[base]
    for known in sorted(CONFIGS, key=len, reverse=True):
        if name.endswith(" " + known):
            return CONFIGS[known]
    return _SPARE[zlib.crc32(name.encode()) % len(_SPARE)]


def exit_color(reason: str) -> str:
    """The colour of exit reason ``reason`` (a name the simulator does not have: "other"'s)."""
    return EXIT_REASONS.get(reason, EXIT_REASONS["other"])
