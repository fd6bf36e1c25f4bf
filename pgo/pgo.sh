#!/bin/sh
# The profile-guided build of the extension (issue 52). Two commands:
#   pgo.sh flags   the RUSTFLAGS that `make install` builds with: -Cprofile-use of the checked-in
#                  profile where this rustc's LLVM reads it (the same major version as the one
#                  that wrote it), else nothing and one line saying why (the build is then
#                  plain: slower, never different in what it computes).
#   pgo.sh train   regenerate pgo/eventpath.profdata.gz: build the extension instrumented, run
#                  pgo/train.py through it, merge. Needs llvm-profdata of this rustc's LLVM
#                  (`rustup component add llvm-tools`). Run it after changes to the model's
#                  hot code; a stale profile only loses the changed functions' guidance.
set -eu
cd "$(dirname "$0")/.."
llvm_major() { rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p'; }
case "${1:-}" in
flags)
    [ -f pgo/eventpath.profdata.gz ] && [ -f pgo/llvm-major ] || { echo "pgo: no profile checked in; plain build" >&2; exit 0; }
    if [ "$(llvm_major)" != "$(cat pgo/llvm-major)" ]; then
        echo "pgo: the profile was written by LLVM $(cat pgo/llvm-major), this rustc has LLVM $(llvm_major); plain build" >&2
        exit 0
    fi
    # Named by its content: a new profile changes RUSTFLAGS, which makes cargo rebuild.
    use=$(pwd)/target/pgo/use-$(cksum < pgo/eventpath.profdata.gz | cut -d' ' -f1).profdata
    if [ ! -f "$use" ]; then
        mkdir -p target/pgo
        if ! gzip -dc pgo/eventpath.profdata.gz > "$use.tmp" 2>/dev/null; then
            rm -f "$use.tmp"
            echo "pgo: pgo/eventpath.profdata.gz does not decompress; plain build" >&2
            exit 0
        fi
        mv "$use.tmp" "$use"
    fi
    echo "-Cprofile-use=$use"
    ;;
train)
    sysroot=$(rustc --print sysroot)
    profdata=$(ls "$sysroot"/lib/rustlib/*/bin/llvm-profdata 2>/dev/null | head -1)
    [ -n "$profdata" ] || { echo "pgo train: no llvm-profdata in $sysroot; run: rustup component add llvm-tools" >&2; exit 2; }
    raw=$(pwd)/target/pgo/raw
    rm -rf "$raw" && mkdir -p "$raw"
    RUSTFLAGS="-Cprofile-generate=$raw" .venv/bin/pip install -q -e '.[dev]'
    .venv/bin/python pgo/train.py
    "$profdata" merge --sparse -o target/pgo/eventpath.profdata "$raw"
    gzip -9 -n -c target/pgo/eventpath.profdata > pgo/eventpath.profdata.gz
    llvm_major > pgo/llvm-major
    echo "pgo train: wrote pgo/eventpath.profdata.gz ($(wc -c < pgo/eventpath.profdata.gz) bytes); now: make install" >&2
    ;;
*)
    echo "usage: pgo/pgo.sh flags|train" >&2
    exit 2
    ;;
esac
