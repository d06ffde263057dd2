"""The typed parameters (ros/common/parameter_types.py) are what the nodes' tables give: the file is
generated, and a table changed without running the generator fails here."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy")

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "generate_parameter_types.py"


def test_the_file_is_what_the_tables_give():
    run = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def _generator():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import generate_parameter_types
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return generate_parameter_types


def test_every_parameter_is_a_typed_field_of_its_node_class():
    generator = _generator()
    from charmie_dynamics.ros.common import parameter_types
    for class_name, (module, _) in generator.TABLES.items():
        fields = {f.name: f.type for f in dataclasses.fields(getattr(parameter_types, class_name))}
        assert fields == {name: spec.type_name() for name, spec in module.PARAMETERS.items()}


def test_a_file_behind_its_table_fails_the_check(tmp_path, monkeypatch, capsys):
    """The file as it would be had a parameter been added to the simulator's table and the
    generator not run: one field short."""
    generator = _generator()
    current = generator.TARGET.read_text(encoding="utf-8")
    behind = current.replace("    kp: float\n", "", 1)
    assert behind != current
    stale = tmp_path / "parameter_types.py"
    stale.write_text(behind, encoding="utf-8")
    monkeypatch.setattr(generator, "TARGET", stale)
    assert generator.main(["--check"]) == 1
    assert "+    kp: float" in capsys.readouterr().out
    monkeypatch.setattr(generator, "TARGET", tmp_path / "written.py")
    assert generator.main([]) == 0 and generator.main(["--check"]) == 0
