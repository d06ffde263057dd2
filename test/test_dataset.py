"""``charmie-dynamics dataset``: the rows are the core's functions on the same states, the
samples lie within the model's limits, a seed fixes the data, a resumed run writes the same
files as an uninterrupted one, and bad arguments are one error line with exit status 1."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from charmie_dynamics.cli import dataset as dataset_cli
from charmie_dynamics.cli.main import main
from charmie_dynamics.dynamics import Payload, inverse_dynamics, mass_matrix
from charmie_dynamics.kinematics import forward_kinematics, resolve_state
from charmie_dynamics.kinematics.limits import InputLimits
from charmie_dynamics.model import load_model
from charmie_dynamics.resources import bundled_model
from conftest import EXAMPLES, ROOT

PAYLOAD = "body_12a.D12a:1.5"
ALL = "coordinates,efforts,actuator_forces,spring_tensions,mass_matrix,fk_poses"
#: 300 states in chunks of 128: two whole chunks and a partial one
RECIPE = ["--samples", "300", "--chunk-size", "128", "--seed", "7", "--outputs", ALL,
          "--payload", PAYLOAD]


def _run(out: Path, *args: str) -> int:
    return main(["dataset", "--out", str(out), *args])


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def _rows(out: Path) -> dict[str, np.ndarray]:
    manifest = json.loads((out / "dataset.json").read_text())
    chunks = [np.load(out / manifest["chunks"]["name"].format(index=k))
              for k in range(manifest["chunks"]["count"])]
    return {name: np.concatenate([c[name] for c in chunks]) for name in manifest["arrays"]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "data"
    assert _run(out, *RECIPE) == 0
    return out


@pytest.fixture(scope="module")
def charmie_model():
    return load_model(bundled_model())


def test_rows_are_the_cores_functions_on_the_same_states(reference, charmie_model):
    model, rows = charmie_model, _rows(reference)
    assert len(rows["positions"]) == 300
    state = resolve_state(model, rows["positions"], rows["velocities"], rows["accelerations"])
    loads = inverse_dynamics(model, state, payloads=[Payload("body_12a.D12a", 1.5)])
    placements = forward_kinematics(model, state.q)
    expected = {"coordinates": state.q, "efforts": loads.coordinate_effort,
                "actuator_forces": loads.actuator_force, "spring_tensions": loads.spring_tension,
                "mass_matrix": mass_matrix(model, state.q),
                "fk_rotations": placements.rotation_world, "fk_origins": placements.origin_world}
    for name, value in expected.items():
        np.testing.assert_allclose(rows[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    # the payload is in the efforts: without it they differ
    bare = inverse_dynamics(model, state).coordinate_effort
    assert np.abs(bare - rows["efforts"]).max() > 1.0


def test_the_manifest_names_the_model_recipe_and_arrays(reference, charmie_model):
    manifest = json.loads((reference / "dataset.json").read_text())
    text = bundled_model().read_bytes()
    assert manifest["model"]["hash"] == hashlib.sha256(text).hexdigest()[:16]
    assert manifest["complete"] is True
    recipe = manifest["recipe"]
    assert (recipe["samples"], recipe["chunk_size"], recipe["seed"]) == (300, 128, 7)
    assert recipe["payloads"] == [{"point": "body_12a.D12a", "mass": 1.5}]
    assert manifest["chunks"] == {"count": 3, "name": "chunk-{index:05d}.npz"}
    assert [f"chunk-0000{k}.npz" for k in range(3)] + ["dataset.json"] == list(_files(reference))
    arrays = manifest["arrays"]
    assert list(arrays) == list(np.load(reference / "chunk-00000.npz").files)
    assert arrays["efforts"]["axes"] == [list(charmie_model.coordinate_names)]
    assert arrays["efforts"]["units"][:4] == ["N", "N", "N m", "N"]      # d1 d2 theta3 d4
    assert arrays["positions"]["units"][3] == "m"                        # act4
    assert arrays["mass_matrix"]["shape"] == [21, 21]
    for name, spec in arrays.items():
        assert list(np.load(reference / "chunk-00002.npz")[name].shape) == [300 - 256] + \
            spec["shape"], name


def test_samples_lie_within_the_limits(tmp_path, charmie_model):
    model = charmie_model
    out = tmp_path / "data"
    assert _run(out, "--samples", "2000", "--chunk-size", "1000", "--outputs", "efforts",
                "--velocity-scale", "0.5", "--acceleration-scale", "3") == 0
    rows = _rows(out)
    names = list(model.input_names)
    limits = InputLimits.of(model)
    x, xd, xdd = (rows[k].T for k in ("positions", "velocities", "accelerations"))
    assert limits.violation(dict(zip(names, x)), dict(zip(names, xd)), 0.0, 0.0) is None
    for a in model.actuators:
        lo, hi = a.stroke
        k = names.index(a.name)
        assert lo <= x[k].min() and x[k].max() <= hi
        assert x[k].max() - x[k].min() > 0.8 * (hi - lo)          # the stroke is covered
    bounds = json.loads((out / "dataset.json").read_text())["sampling"]["bounds"]
    for k, name in enumerate(names):
        vmax = limits.velocity.get(name)
        if vmax is not None:
            assert np.abs(xd[k]).max() <= 0.5 * vmax
            assert np.abs(xdd[k]).max() <= 3 * vmax
            assert np.abs(xd[k]).max() > 0.4 * vmax
        lo, hi = bounds[name]["position"]
        assert lo <= x[k].min() and x[k].max() <= hi


def test_a_seed_fixes_the_data(tmp_path, reference):
    again, other = tmp_path / "again", tmp_path / "other"
    assert _run(again, *RECIPE) == 0
    assert _files(again) == _files(reference)            # byte for byte
    # runs within the same two seconds would agree whatever the timestamps: they are fixed
    with zipfile.ZipFile(again / "chunk-00000.npz") as archive:
        assert {i.date_time for i in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    assert _run(other, *RECIPE[:5], "8", *RECIPE[6:]) == 0
    a, b = _rows(other), _rows(reference)
    assert not np.any(a["positions"] == b["positions"])


def test_a_resumed_run_writes_the_same_files(tmp_path, reference, monkeypatch):
    out = tmp_path / "data"
    written = []

    def interrupted(path, arrays, write=dataset_cli.write_npz):
        if len(written) == 2:
            raise KeyboardInterrupt
        written.append(path)
        write(path, arrays)

    monkeypatch.setattr(dataset_cli, "write_npz", interrupted)
    assert _run(out, *RECIPE) == 130                 # Ctrl-C: one line, status 130
    monkeypatch.undo()
    assert sorted(p.name for p in out.iterdir()) == ["chunk-00000.npz", "chunk-00001.npz",
                                                     "dataset.json"]   # no partial file
    assert json.loads((out / "dataset.json").read_text())["complete"] is False
    assert _run(out, *RECIPE) == 1                   # not without --resume
    assert _run(out, *RECIPE, "--resume") == 0
    assert _files(out) == _files(reference)
    # a lost chunk is written again, the others kept; a killed run's unfinished file removed
    (out / "chunk-00001.npz").unlink()
    (out / ".chunk-00001.npz.0123abcd.partial").write_bytes(b"PK")
    kept = (out / "chunk-00000.npz").stat().st_mtime_ns
    assert _run(out, *RECIPE, "--resume") == 0
    assert _files(out) == _files(reference)
    assert (out / "chunk-00000.npz").stat().st_mtime_ns == kept


@pytest.mark.parametrize("change, field", [
    (["--seed", "8"], "recipe.seed"),
    (["--chunk-size", "100"], "recipe.chunk_size"),
    (["--outputs", "efforts"], "recipe.outputs"),
    (["--payload", "body_12a.D12a:2"], "recipe.payloads"),
    (["--velocity-scale", "0.9"], "recipe.velocity_scale"),
])
def test_a_resume_of_another_recipe_is_refused(reference, tmp_path, capsys, change, field):
    out = tmp_path / "data"
    shutil.copytree(reference, out)
    args = list(RECIPE)
    if change[0] in args:
        args[args.index(change[0]) + 1] = change[1]
    else:
        args += change
    assert _run(out, *args, "--resume") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: --resume" in err and field in err, err
    assert _files(out) == _files(reference)


def test_a_resume_with_another_model_is_refused(reference, tmp_path, capsys):
    out, model = tmp_path / "data", tmp_path / "heavier.yaml"
    shutil.copytree(reference, out)
    model.write_text(bundled_model().read_text() + "\n# edited\n")
    assert _run(out, *RECIPE, "--model", str(model), "--resume") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "model.hash" in err, err


def test_a_grid_covers_every_corner(tmp_path):
    out = tmp_path / "grid"
    puma = EXAMPLES["puma"]
    assert _run(out, "--model", str(puma), "--sampling", "grid", "--samples", "64",
                "--chunk-size", "10", "--outputs", "efforts,mass_matrix",
                "--velocity-scale", "0", "--acceleration-scale", "0") == 0
    rows = _rows(out)
    x = rows["positions"]
    lo, hi = x.min(axis=0), x.max(axis=0)
    corners = (x == hi).astype(int)
    assert np.all((x == lo) | (x == hi))
    assert len({tuple(c) for c in corners}) == 64
    assert not rows["velocities"].any() and not rows["accelerations"].any()


def _error(capsys, out: Path, *args: str) -> str:
    assert _run(out, *args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("charmie-dynamics: error: "), err
    return err


@pytest.mark.parametrize("args, says", [
    (["--samples", "10", "--outputs", "efforts,torques"], "outputs: got 'efforts,torques'"),
    (["--samples", "0"], "samples: got 0, expected 1 to"),
    (["--samples", "10", "--seed", "-1"], "seed: got -1, expected 0 to 2^63 - 1"),
    (["--samples", "-5"], "samples: got -5"),
    (["--samples", "10", "--chunk-size", "0"], "chunk_size: got 0, expected 1 to 50000"),
    (["--samples", "10", "--chunk-size", "50001"], "chunk_size: got 50001"),
    (["--samples", "1000000", "--chunk-size", "1"], "expected at most 100000"),
    (["--samples", "10", "--velocity-scale", "2"], "velocity_scale: got 2.0, expected 0 to 1"),
    (["--samples", "10", "--sampling", "sobol"], "sampling: got 'sobol'"),
    (["--samples", "1000", "--sampling", "grid"], "a grid over 21 inputs"),
    (["--samples", "10", "--payload", "body_12a.D12a:-1"], "--payload"),
    (["--samples", "10", "--payload", "body_12a.nowhere:1"], "nowhere"),
])
def test_bad_arguments_are_one_error_line(tmp_path, capsys, args, says):
    out = tmp_path / "data"
    assert says in _error(capsys, out, *args)
    assert not out.exists()


def test_an_out_that_is_a_file_is_refused(tmp_path, capsys):
    out = tmp_path / "file"
    out.write_text("x")
    assert "exists and is not a directory" in _error(capsys, out, "--samples", "10")


def test_chunks_without_a_manifest_are_not_resumed(reference, tmp_path, capsys):
    out = tmp_path / "data"
    shutil.copytree(reference, out)
    (out / "dataset.json").unlink()
    assert "holds a dataset already" in _error(capsys, out, *RECIPE, "--resume")


def test_a_model_with_loops_is_refused(tmp_path, capsys):
    five_bar = ROOT / "config" / "examples" / "five_bar.yaml"
    assert "closed loops" in _error(capsys, tmp_path / "d", "--model", str(five_bar),
                                    "--samples", "10")


def test_a_resume_rewrites_damaged_chunks(tmp_path, reference, capsys):
    """Truncated, a flipped bit, another chunk's file, a link to /dev/zero: each rewritten,
    the files those of an uninterrupted run."""
    out = tmp_path / "data"
    shutil.copytree(reference, out)
    chunk = [out / f"chunk-0000{k}.npz" for k in range(3)]
    shutil.copyfile(chunk[0], chunk[1])
    data = bytearray(chunk[0].read_bytes())
    data[len(data) // 2] ^= 0x10
    chunk[0].write_bytes(bytes(data))
    chunk[2].write_bytes(chunk[2].read_bytes()[:-100])
    assert _run(out, *RECIPE, "--resume") == 0
    assert "(3 damaged chunk(s) rewritten" in capsys.readouterr().out
    assert _files(out) == _files(reference)
    chunk[1].unlink()
    chunk[1].symlink_to("/dev/zero")
    assert _run(out, *RECIPE, "--resume") == 0
    assert "(1 damaged chunk(s) rewritten" in capsys.readouterr().out
    assert not chunk[1].is_symlink() and _files(out) == _files(reference)


def test_chunks_that_do_not_fit_on_the_disk_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(dataset_cli.shutil, "disk_usage",
                        lambda path: shutil._ntuple_diskusage(10**9, 10**9 - 10**6, 10**6))
    out = tmp_path / "data"
    err = _error(capsys, out, *RECIPE)
    assert "the chunks need about 0.0021 GB" in err and "has 0.001 GB free" in err, err
    assert not out.exists()


@pytest.mark.parametrize("make", ["dangling", "under_a_file"])
def test_an_out_that_cannot_be_a_directory_is_refused(tmp_path, capsys, make):
    out = tmp_path / "data"
    if make == "dangling":
        out.symlink_to(tmp_path / "missing")
        says = f"{out} is a dangling symbolic link"
    else:
        (tmp_path / "file").write_text("x")
        out = tmp_path / "file" / "data"
        says = f"{tmp_path / 'file'} exists and is not a directory"
    assert says in _error(capsys, out, "--samples", "10")


def test_a_second_run_on_the_same_out_is_refused_while_the_first_writes(tmp_path, capsys):
    """Issue 34, D1: two runs on one empty --out could both write, leaving a manifest of one
    seed over chunks of the other. The run holds a lock on the folder; a second is refused."""
    out = tmp_path / "out"
    out.mkdir()
    first = os.open(out, os.O_RDONLY | os.O_DIRECTORY)      # a run under way holds this lock
    try:
        fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _run(out, *RECIPE) == 1
        assert "another dataset run is writing there" in capsys.readouterr().err
        assert list(out.iterdir()) == []
    finally:
        os.close(first)
    assert _run(out, *RECIPE) == 0                           # once it has ended


def test_a_refused_run_leaves_no_folder_it_made(tmp_path, capsys):
    """The lock's folder (and the missing parents made for it) go again when the run is
    refused (the attack on D1: a refused run left np/a behind)."""
    assert _run(tmp_path / "np" / "a" / "b", "--samples", "10", "--outputs", "bogus") == 1
    assert "outputs: got 'bogus'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
