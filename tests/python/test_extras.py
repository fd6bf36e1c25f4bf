"""Optional dependencies are extras named when missing (eventpath/extras.py)."""

import pytest

from eventpath import InputError
from eventpath.extras import need


def test_a_missing_extra_is_one_line_naming_what_to_install():
    with pytest.raises(InputError) as e:
        need("no_such_module_for_eventpath", "bench", "eventpath bench's SimPy model")
    m = str(e.value)
    assert "\n" not in m and "pip install 'eventpath[bench]'" in m and "no_such_module_for_eventpath" in m, m


def test_an_installed_one_is_the_module():
    assert need("json", "frames", "x").dumps([1]) == "[1]"


def test_the_commands_that_need_one_ask_for_it_by_its_extra(monkeypatch):
    import importlib

    from eventpath import cli

    real = importlib.import_module

    def without_simpy(name, *a, **k):
        if name == "simpy":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", without_simpy)
    assert cli.main(["bench", "--seconds", "0.001", "--simpy-seconds", "0.001", "--model-seconds", "0"]) == 2
