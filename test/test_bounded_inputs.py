"""Issue 22: every input's cost bounded before the expensive work, and names and numbers that
every node and tool accepts. The large inputs load in a subprocess with a generous timeout
(a regression then fails instead of hanging the suite); the assertions are on work done
(counted calls), never on wall-clock time."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FIVE_BAR = ROOT / "config" / "examples" / "five_bar.yaml"
TIMEOUT_S = 60


def run_counted(script: str, tmp_path: Path) -> dict:
    """Run ``script`` (Python, this worktree's package first) in a subprocess and return
    the JSON object it prints last."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-2000:]
    print(proc.stdout)                                  # the measured time, for the record
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- mimic chains ------------------------------------------------------------------------------

def mimic_chain(n: int) -> str:
    """A URDF chain of n revolute joints, each mimicking the one before it."""
    parts = ['<robot name="mimics">', '<link name="l0"/>']
    for k in range(1, n + 1):
        mimic = f'<mimic joint="j{k - 1}" multiplier="1.0" offset="0.01"/>' if k > 1 else ""
        parts.append(f'<link name="l{k}"/><joint name="j{k}" type="revolute"><parent '
                     f'link="l{k - 1}"/><child link="l{k}"/><axis xyz="0 0 1"/><limit '
                     f'lower="-1" upper="1" effort="1" velocity="1"/>{mimic}</joint>')
    parts.append("</robot>")
    return "\n".join(parts)


def test_mimic_chain_of_4000_joints_loads_in_linear_work(tmp_path):
    """Each joint's <mimic> is read once: the numbers read (multiplier, offset, the four
    limits) grow as n; resolving each joint's chain anew read n^2 of them."""
    n = 4000
    path = tmp_path / "chain.urdf"
    path.write_text(mimic_chain(n))
    out = run_counted(f"""
        import json, time
        from charmie_dynamics.model import urdf
        calls = 0
        number = urdf._Urdf.number
        def counted(*args, **kwargs):
            global calls
            calls += 1
            return number(*args, **kwargs)
        urdf._Urdf.number = counted
        start = time.perf_counter()
        model = urdf.model_from_urdf(open("chain.urdf").read(), "chain.urdf")
        print(f"{n}-joint mimic chain loaded in {{time.perf_counter() - start:.3f}} s")
        last = model.bodies[-1]
        print(json.dumps({{"calls": calls, "coordinates": model.n_coordinates,
                          "coordinate": last.coordinate, "offset": last.offset}}))
    """, tmp_path)
    assert out["calls"] <= 6 * n
    assert out["coordinates"] == 1 and out["coordinate"] == "j1"
    assert abs(out["offset"] - 0.01 * (n - 1)) < 1e-9


def test_mimic_cycle_is_named():
    text = mimic_chain(3).replace('<limit lower="-1" upper="1" effort="1" velocity="1"/>'
                                  "</joint>", '<limit lower="-1" upper="1" effort="1" '
                                  'velocity="1"/><mimic joint="j3"/></joint>', 1)
    from charmie_dynamics.model import ModelError
    from charmie_dynamics.model.urdf import model_from_urdf
    try:
        model_from_urdf(text, "cycle.urdf")
    except ModelError as exc:
        assert "cycle.urdf: joint 'j2' <mimic> joint: mimic cycle j1 -> j3 -> j2 -> j1" \
            in str(exc), exc
    else:
        raise AssertionError("a mimic cycle loaded")


def test_joint_count_checked_before_the_joints_are_read(tmp_path):
    from charmie_dynamics.model import ModelError
    from charmie_dynamics.model.urdf import model_from_urdf
    text = "<robot name='r'>" + "<joint/>" * 10_001 + "<link name='a'/></robot>"
    try:
        model_from_urdf(text, "many.urdf")
    except ModelError as exc:
        assert str(exc) == ("many.urdf: <robot>: got 10001 <joint> elements, expected at "
                            "most 10000 (the model's limit of 10000 bodies)")
    else:
        raise AssertionError("10,001 joints loaded")


# --- loop cuts ---------------------------------------------------------------------------------

def test_10000_identical_cuts_refused_before_any_cut_is_read(tmp_path):
    doc = yaml.safe_load(FIVE_BAR.read_text())
    cut = doc["loops"]["cuts"][0]
    doc["loops"]["cuts"] = [{**cut, "name": f"cut_{k}"} for k in range(10_000)]
    (tmp_path / "cuts.yaml").write_text(yaml.safe_dump(doc))
    out = run_counted("""
        import json, time
        from charmie_dynamics.model import ModelError, loader, load_model
        calls = 0
        cut = loader._cut
        def counted(*args):
            global calls
            calls += 1
            return cut(*args)
        loader._cut = counted
        start = time.perf_counter()
        try:
            load_model("cuts.yaml")
            error = None
        except ModelError as exc:
            error = str(exc)
        print(f"10,000 cuts: load_model returned in {time.perf_counter() - start:.3f} s")
        print(json.dumps({"calls": calls, "error": error}))
    """, tmp_path)
    assert out["error"] == ("cuts.yaml: loops.cuts: got 10000 cut joints, expected 1 to 4 (at "
                            "most one per body of the tree)")
    assert out["calls"] == 0


def test_loop_groups_join_cuts_through_shared_coordinates():
    """The grouping, without comparing pairs: cuts 0 and 2 share a coordinate, 1 and 2 too,
    so 0, 1, 2 are one group; cut 3 has its own."""
    import numpy as np

    from charmie_dynamics.model.cut_joints import CutJoint, loop_groups
    parent = np.array([-1, -1, -1, -1, -1, -1])         # six bodies on the world, one each
    zero, eye = np.zeros(3), np.eye(3)

    def cut(a: int, b: int) -> CutJoint:
        return CutJoint(f"c{a}{b}", "S", a, zero, b, zero, eye, eye, zero, zero)

    groups = loop_groups(np.arange(6), parent, (cut(0, 1), cut(2, 3), cut(1, 2), cut(4, 5)),
                         {0, 4})
    assert [g.cuts for g in groups] == [(0, 1, 2), (3,)]
    assert [g.coordinates for g in groups] == [(0, 1, 2, 3), (4, 5)]
    assert [g.independent for g in groups] == [(0,), (4,)]


# --- names that every node accepts -------------------------------------------------------------

def five_bar_with_body_name(name: str) -> dict:
    doc = yaml.safe_load(FIVE_BAR.read_text())
    old = doc["bodies"][0]["name"]
    doc["bodies"][0]["name"] = name
    doc["bodies"][1]["parent"] = name
    doc["loops"]["cuts"][0]["predecessor"] = doc["loops"]["cuts"][0]["predecessor"].replace(
        old, name)
    return doc


def test_longest_name_loads_and_a_longer_one_is_refused():
    """A body name becomes the topic joint_wrenches/<body>: 231 characters made creating its
    publisher fail and the node exit, although the model validated."""
    from charmie_dynamics.model import ModelError, model_from_dict
    from charmie_dynamics.model.validation import MAX_NAME
    assert MAX_NAME == 128
    assert model_from_dict(five_bar_with_body_name("b" * 128), "five.yaml").body_names[0] \
        == "b" * 128
    for name in ("b" * 129, "b" * 231):
        with pytest.raises(ModelError) as info:
            model_from_dict(five_bar_with_body_name(name), "five.yaml")
        assert str(info.value).startswith(f"five.yaml: bodies[0].name: got a name of "
                                          f"{len(name)} characters ('bbbb")
        assert str(info.value).endswith("expected at most 128 (names become topic names and "
                                        "TF frame ids)")


def test_long_urdf_link_name_is_refused():
    from charmie_dynamics.model import ModelError
    from charmie_dynamics.model.urdf import model_from_urdf
    name = "l" * 100_000
    text = urdf(TWO_LINKS.replace('"arm"', f'"{name}"'))
    with pytest.raises(ModelError, match=r"^big.urdf: bodies\[1\]\.name: got a name of 100000 "
                                         r"characters \('l{4}.*expected at most 128") as info:
        model_from_urdf(text, "big.urdf")
    assert len(str(info.value)) <= 600


def test_bundled_and_example_names_fit():
    """The bundled models load under the cap (the URDFs of example-robot-data: their longest
    link or joint name has 56 characters; test_urdf_import loads them)."""
    from charmie_dynamics import load_model
    for path in [ROOT / "config" / "charmie.yaml", *sorted((ROOT / "config" / "examples")
                                                           .glob("*.yaml"))]:
        model = load_model(path)
        assert max(map(len, model.body_names + model.coordinate_names)) <= 128


# --- URDF numbers as xs:double -----------------------------------------------------------------

TWO_LINKS = """
<link name="base"><inertial><mass value="2"/>
  <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="arm"><inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="1"/>
  <inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
  <origin xyz="0 0 0.5" rpy="0 0 0"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="5" velocity="3"/></joint>
"""


def urdf(body: str) -> str:
    return f'<?xml version="1.0"?>\n<robot name="r">\n{body}\n</robot>\n'


@pytest.mark.parametrize("value", [
    "1_0",                       # float(): 10
    "\u0661\u0660",              # Arabic-Indic digits: float() reads 10
    "\uff11",                    # a fullwidth digit
    "infinity", "-Infinity", "inf", "NaN",
    "0x10", "1e", "1.0f", ""])
def test_urdf_numbers_are_xs_double(value):
    from charmie_dynamics.model import ModelError
    from charmie_dynamics.model.urdf import model_from_urdf
    text = urdf(TWO_LINKS.replace('<mass value="1"/>', f'<mass value="{value}"/>'))
    with pytest.raises(ModelError) as info:
        model_from_urdf(text, "n.urdf")
    assert str(info.value).startswith("n.urdf: link 'arm' <inertial> <mass value>: got ")
    assert str(info.value).endswith("expected 1 finite number(s) written as xs:double (ASCII "
                                    "digits, '.', an exponent; no '_')")


def test_urdf_vector_split_at_xml_whitespace_only():
    """A no-break space is no XML whitespace: '0\u00a00 0.5' is two tokens to urdfdom."""
    from charmie_dynamics.model import ModelError
    from charmie_dynamics.model.urdf import model_from_urdf
    text = urdf(TWO_LINKS.replace('xyz="0 0 0.5"', 'xyz="0\u00a00 0.5"'))
    with pytest.raises(ModelError, match=r"joint 'shoulder' <origin xyz>: got '0\\xa00 0\.5', "
                                         "expected 3 finite number"):
        model_from_urdf(text, "n.urdf")


@pytest.mark.parametrize("value,expected", [
    (" 2 ", 2.0), ("\t2.\n", 2.0), (".5", 0.5), ("+5E-1", 0.5), ("-0", 0.0), ("2e0", 2.0)])
def test_urdf_numbers_xs_double_accepts(value, expected):
    from charmie_dynamics.model.urdf import model_from_urdf
    text = urdf(TWO_LINKS.replace('<mass value="1"/>', f'<mass value="{value}"/>'))
    assert model_from_urdf(text, "n.urdf").bodies[1].mass == expected


# --- URDF limits -------------------------------------------------------------------------------

@pytest.mark.parametrize("limit,where,message", [
    ('lower="1" upper="-1" effort="5" velocity="3"', "<limit lower upper>",
     "got lower 1 > upper -1, expected lower <= upper"),
    ('lower="-1" upper="1" effort="-5" velocity="3"', "<limit effort>",
     "got -5, expected a number >= 0 (0: unknown)"),
    ('lower="-1" upper="1" effort="5" velocity="-3"', "<limit velocity>",
     "got -3, expected a number >= 0 (0: unknown)"),
])
def test_urdf_inverted_and_negative_limits_refused(limit, where, message):
    """They became "no limit" without a word; no URDF of example-robot-data has one."""
    from charmie_dynamics.model import ModelError
    from charmie_dynamics.model.urdf import model_from_urdf
    text = urdf(TWO_LINKS.replace('lower="-1" upper="1" effort="5" velocity="3"', limit))
    with pytest.raises(ModelError) as info:
        model_from_urdf(text, "lim.urdf")
    assert str(info.value) == f"lim.urdf: joint 'shoulder' {where}: {message}"


def test_urdf_continuous_joint_ignores_lower_and_upper():
    from charmie_dynamics.model.urdf import model_from_urdf
    text = urdf(TWO_LINKS.replace('type="revolute"', 'type="continuous"')
                .replace('lower="-1" upper="1"', 'lower="1" upper="-1"'))
    arm = model_from_urdf(text, "c.urdf").bodies[1]
    assert arm.limits.lower is None and arm.limits.effort == 5
