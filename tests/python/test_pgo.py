"""The profile-guided build's flags (pgo/pgo.sh, issue 52): the checked-in profile is used only
by a rustc whose LLVM wrote its format, through a path named by its content (so a new profile
rebuilds); any other rustc gets the plain build and one line saying why."""

import gzip
import shutil
import subprocess
from pathlib import Path

from conftest import ROOT


def flags(root):
    r = subprocess.run(["sh", str(root / "pgo/pgo.sh"), "flags"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip(), r.stderr.strip()


def copy(tmp_path, major=None):
    (tmp_path / "pgo").mkdir()
    for f in ("pgo.sh", "eventpath.profdata.gz", "llvm-major"):
        shutil.copy(ROOT / "pgo" / f, tmp_path / "pgo" / f)
    if major is not None:
        (tmp_path / "pgo/llvm-major").write_text(major + "\n")
    return tmp_path


def test_a_matching_llvm_uses_the_profile_by_its_content(tmp_path):
    root = copy(tmp_path, subprocess.run(["sh", "-c", "rustc -vV | sed -n 's/^LLVM version: \\([0-9]*\\).*/\\1/p'"],
                                         capture_output=True, text=True).stdout.strip())
    out, err = flags(root)
    assert out.startswith("-Cprofile-use=" + str(root / "target/pgo/use-")) and err == ""
    used = out.split("=", 1)[1]
    assert Path(used).read_bytes() == gzip.decompress((root / "pgo/eventpath.profdata.gz").read_bytes())
    # Another profile, another path: cargo sees new RUSTFLAGS and rebuilds.
    gz = root / "pgo/eventpath.profdata.gz"
    gz.write_bytes(gzip.compress(gzip.decompress(gz.read_bytes()) + b"\0"))
    again = flags(root)[0]
    assert again != out and again.startswith("-Cprofile-use=")
    # A profile that does not decompress: the plain build, one line.
    gz.write_bytes(b"not gzip")
    assert flags(root) == ("", "pgo: pgo/eventpath.profdata.gz does not decompress; plain build")


def test_another_llvm_gets_the_plain_build_and_one_line(tmp_path):
    out, err = flags(copy(tmp_path, "1"))
    assert out == "" and len(err.splitlines()) == 1 and "LLVM 1," in err and "plain build" in err
    (tmp_path / "pgo/eventpath.profdata.gz").unlink()
    out, err = flags(tmp_path)
    assert out == "" and "no profile" in err
