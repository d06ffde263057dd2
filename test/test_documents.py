"""The one input guard (charmie_dynamics/documents.py): hostile files and texts end as the
caller's error, quickly, and nothing else escapes (issue 10)."""
import os
import re
import subprocess
import sys
import threading

import pytest
import yaml

from charmie_dynamics import bundled_model, documents
from charmie_dynamics.documents import DocumentError, check_size, parse_json, parse_yaml, read_text


def merge_bomb(levels: int) -> str:
    """A few hundred bytes whose merge keys (<<) expand to 10**levels entries."""
    lines = ["a0: &a0 {x: 1}"]
    lines += [f"a{k}: &a{k} {{<<: [{', '.join([f'*a{k - 1}'] * 10)}]}}" for k in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


HOSTILE_YAML = {
    "impossible date": "name: 2001-02-30",
    "5,000-digit integer": "x: " + "9" * 5000,
    "1,000 nested [": "[" * 1000 + "]" * 1000,
    "100,000 nested [ (crashes libyaml's own composer)": "[" * 100_000 + "]" * 100_000,
    "nested flow mappings": "{a: " * 5000 + "1" + "}" * 5000,
    "nested block sequences": "".join(" " * i + "- \n" for i in range(2000)),
    "NUL bytes": "\0\0\0",
    "merge-key bomb, 8 levels": merge_bomb(8),
    "python object tag": "!!python/object/apply:os.system ['true']",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_YAML))
def test_hostile_yaml_is_the_callers_error(name):
    class Mine(ValueError):
        pass

    with pytest.raises(Mine, match=r"^src: not (valid|usable) YAML: ") as info:
        parse_yaml(HOSTILE_YAML[name], "src", error=Mine)
    assert len(str(info.value)) <= 400 and "\n" not in str(info.value)


def test_yaml_without_libyaml_refuses_the_same():
    """The pure-Python loader (PyYAML built without libyaml) is guarded alike."""
    code = ("import sys; sys.modules['yaml._yaml'] = None\n"
            "from charmie_dynamics import documents as d\n"
            "assert d.CParser is None\n"
            f"for text in {[HOSTILE_YAML[k] for k in ('impossible date', 'merge-key bomb, 8 levels')]!r}:\n"
            "    try: d.parse_yaml(text, 's')\n"
            "    except d.DocumentError: pass\n"
            "    else: raise SystemExit('accepted')\n"
            "print(d.parse_yaml('a: &x [1]\\nb: *x', 's'))\n")
    assert python_lines(code) == ["{'a': [1], 'b': [1]}"]


def python_lines(code: str) -> list[str]:
    """The lines ``code`` prints in a new Python process, which must end with status 0 (a
    crash of the parser shows as a failure here, not of the test run)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_plain_yaml_and_aliases_still_load():
    assert parse_yaml("a: &x {b: 1}\nc: *x\nd: [1, 2.5, text]\n", "s") == \
        {"a": {"b": 1}, "c": {"b": 1}, "d": [1, 2.5, "text"]}
    assert documents.SafeLoader is not yaml.SafeLoader


def test_an_alias_bomb_is_refused_at_the_parse():
    """Issue 34's S3: nine levels of ten aliases each (370 bytes) are 10^10 entries to
    whoever walks the document (a study's parameters ran over 60 s at 585 MB): refused,
    naming the source, before anything is built."""
    levels = [f"l{k}: &l{k} [{', '.join([f'*l{k - 1}'] * 10)}]" for k in range(1, 10)]
    bomb = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + "\n".join(levels) + "\n"
    with pytest.raises(DocumentError, match=r"^study\.yaml: not usable YAML: aliases repeat "
                                            r"collections into more than 10000000 entries"):
        parse_yaml(bomb, "study.yaml")
    # six levels (a million entries walked) still load, shared
    six = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + "\n".join(levels[:5]) + "\n"
    loaded = parse_yaml(six, "s")
    assert loaded["l5"][0] is loaded["l5"][1] and len(loaded["l5"]) == 10


@pytest.mark.parametrize("text", ["9" * 5000, "[" * 100_000, "{\"a\": NaN, ", "\0"])
def test_hostile_json_is_the_callers_error(text):
    with pytest.raises(DocumentError, match=r"^s: not (valid|usable) JSON: "):
        parse_json(text, "s")


def test_size_cap_before_parsing():
    check_size("x" * 1024, "s", max_bytes=1024)
    with pytest.raises(DocumentError, match="expected at most 1024 bytes"):
        check_size("x" * 1025, "s", max_bytes=1024)
    with pytest.raises(DocumentError):                 # 600 characters, 1,200 bytes
        check_size("\u00e9" * 600, "s", max_bytes=1024)


def run_with_timeout(fn, seconds=30):
    """``fn()`` in a thread: a reader that blocks (a FIFO) must not hang the test."""
    result = {}

    def target():
        try:
            result["value"] = fn()
        except Exception as exc:               # noqa: BLE001 - handed to the test
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the reader blocked"
    return result


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory", "missing", "too_large",
                                  "not_utf8"])
def test_files_read_only_when_regular_small_and_utf8(tmp_path, kind):
    path = tmp_path / "f"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "too_large":
        path.write_bytes(b"x" * 2049)
    elif kind == "not_utf8":
        path.write_bytes(b"name: \xff\xfe")
    result = run_with_timeout(lambda: read_text(path, "model file", max_bytes=2048))
    assert isinstance(result.get("error"), DocumentError), result
    assert str(result["error"]).startswith(f"{path}: ")


def test_a_regular_file_is_read(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("name: r\u00e9\n", encoding="utf-8")
    assert read_text(path, max_bytes=64) == "name: r\u00e9\n"


# ---- routing: plain data straight from libyaml's events; any other document to the all-C
# loader (libyaml's composer) under a bound on the nesting, else to the Python composer
PLAIN_AND_NOT = {                                          # text: built from the events
    "a: &x {b: 1, c: [1, 2.5, -3, .inf, null, true, 0x1f, '7', text]}\nd: *x\n": False,
    "- - - - deep: [[{a: [1]}]]\n": True,
    "a: &a [1, *a]\n": False,                              # recursive: PyYAML's own way
    "when: 2001-02-03\nbytes: !!binary aGVsbG8=\n=: value\nset: !!set {a, b}\n": False,
    "? [1, 2]\n: unhashable key\n": False,
    "a: [1, 2.5, -3, .inf, .nan, null, ~, true, Off, 0x1f, 010, '7', \"8\", text, ! 9]\n": True,
    "a: !!str 1\n": False,
    "--- 1\n--- 2\n": False,                               # two documents: refused below
    "# only a comment\n": True,
    "---\n...\n": True,
    "{? a, b: }\n": True,
    "a: [7, '7', \"7\", 7, ! 7, ! '7']\n": True,            # quoted: a string, whatever came first
    "a: &x 1\nb: &x 2\n": False,                            # duplicate anchor: the composer's error
    "a: &x 1\nb: 2\n": False,
}


def pyyaml_reference(text):
    """PyYAML's pure-Python safe loader, the construction every route must reproduce."""
    return yaml.load(text, Loader=yaml.SafeLoader)


@pytest.mark.skipif(documents.CSafeLoader is None, reason="PyYAML without libyaml")
@pytest.mark.parametrize("text", sorted(PLAIN_AND_NOT))
def test_every_route_constructs_as_pyyaml(text, monkeypatch):
    calls = []
    real = documents._load_on_own_stack
    monkeypatch.setattr(documents, "_load_on_own_stack",
                        lambda *a: calls.append(a[1]) or real(*a))
    stack = max(documents.C_STACK_MIN, documents.nesting_bound(text) * documents.C_STACK_PER_LEVEL)
    try:
        expected = repr(pyyaml_reference(text))
    except yaml.YAMLError:
        with pytest.raises(yaml.YAMLError) as before:
            real(text, stack)                                              # all C, own stack
        with pytest.raises(DocumentError) as now:
            parse_yaml(text, "s")
        assert str(now.value) == f"s: not valid YAML: {documents.bounded(before.value)}"
        assert calls == [stack] and not PLAIN_AND_NOT[text]
        return
    assert repr(parse_yaml(text, "s")) == expected
    if PLAIN_AND_NOT[text]:
        assert repr(documents._plain_document(text)) == expected and calls == []
    else:
        with pytest.raises(documents._NotPlain):
            documents._plain_document(text)
        assert calls == [stack]                                           # all C, own stack
    assert repr(real(text, stack)) == expected                            # all C, own stack
    assert repr(yaml.load(text, Loader=documents.SafeLoader)) == expected   # Python composer


def random_document(rng, depth=0):
    """Plain data of every kind a model holds, and the scalars that need a constructor."""
    roll = rng.random()
    if depth < 4 and roll < 0.25:
        return {random_scalar(rng): random_document(rng, depth + 1) for _ in range(rng.randrange(4))}
    if depth < 4 and roll < 0.45:
        return [random_document(rng, depth + 1) for _ in range(rng.randrange(4))]
    return random_scalar(rng)


def random_scalar(rng):
    return rng.choice([rng.uniform(-1e3, 1e3), rng.randrange(-10**6, 10**6), rng.random() < 0.5,
                       None, "b%d" % rng.randrange(50), "", "0.5", "yes", "a: b", "-", "x\ny",
                       "\u00e9\t", float("inf"), 1e300, -0.0, 2 ** 70, rng.choice(SCALARS)])


def mutated(rng, text):
    """``text`` with a few characters deleted, doubled or replaced by YAML indicators."""
    chars = list(text)
    for _ in range(rng.randrange(1, 4)):
        if not chars:
            break
        k = rng.randrange(len(chars))
        op = rng.randrange(3)
        if op == 0:
            del chars[k]
        elif op == 1:
            chars.insert(k, chars[k])
        else:
            chars[k] = rng.choice("[]{}:,-?&*!|>'\"#%@` \n\t")
    return "".join(chars)


def outcome(text):
    try:
        return "value", repr(parse_yaml(text, "s"))
    except DocumentError as exc:
        return "error", str(exc)


@pytest.mark.skipif(documents.CSafeLoader is None, reason="PyYAML without libyaml")
def test_the_events_route_changes_no_value_and_no_error(monkeypatch):
    """3,000 random documents (every flow style) and broken variants of each: parse_yaml's
    value or error message is the same as with the events route switched off (the loaders
    before it), and a value PyYAML's pure-Python safe loader gives alike."""
    import random
    rng = random.Random(14)
    texts = []
    for k in range(1000):
        doc = random_document(rng)
        text = yaml.safe_dump(doc, default_flow_style=(None, True, False)[k % 3],
                              allow_unicode=k % 2 == 0)
        texts += [text, mutated(rng, text), mutated(rng, text)]
    new = [outcome(t) for t in texts]

    def off(text):
        raise documents._NotPlain
    monkeypatch.setattr(documents, "_plain_document", off)
    assert new == [outcome(t) for t in texts]
    for text, (kind, value) in zip(texts[::3], new[::3]):
        assert kind == "value" and value == repr(pyyaml_reference(text)), text
    assert sum(kind == "error" for kind, _ in new) > 300          # the broken ones are tried


def test_the_model_file_loads_alike_on_both_routes():
    text = read_text(bundled_model())
    assert documents.nesting_bound(text) <= documents.C_MAX_NESTING
    assert parse_yaml(text, "s") == yaml.load(text, Loader=documents.SafeLoader) \
        == pyyaml_reference(text)


@pytest.mark.parametrize("text, depth", [
    ("[" * 40 + "]" * 40, 40),
    ("{a: " * 30 + "1" + "}" * 30, 30),
    ("".join(" " * i + "- \n" for i in range(50)), 50),
    ("".join(" " * i + "a:\n" for i in range(50)), 50),
    ("- - - - - [[x]]\n", 7),
    ("a:\n- b:\n  - c:\n    - [d]\n", 7),
])
def test_nesting_bound_is_above_the_depth(text, depth):
    def nesting(value):
        children = value.values() if isinstance(value, dict) else \
            value if isinstance(value, list) else ()
        return 1 + max(map(nesting, children), default=0) if isinstance(value, (dict, list)) else 0
    assert nesting(pyyaml_reference(text)) == depth
    assert documents.nesting_bound(text) >= depth


def test_deep_documents_are_refused_without_a_crash_on_either_route():
    """In a subprocess, so that a crash of libyaml's composer would show as one: 5,000 levels
    (bound 15,002: the all-C route, on a 30 MB stack) and 60,000 (bound past C_MAX_NESTING:
    the Python composer, RecursionError), both refused; 256 levels load."""
    code = ("from charmie_dynamics import documents as d\n"
            "for n in (5000, 60000, 257):\n"
            "    try: d.parse_yaml('[' * n + ']' * n, 's')\n"
            "    except d.DocumentError as e: print(n, d.nesting_bound('[' * n + ']' * n) "
            "<= d.C_MAX_NESTING, e)\n"
            "    else: print(n, 'accepted')\n"
            "print(d.parse_yaml('[' * 256 + ']' * 256, 's') is not None)\n")
    lines = python_lines(code)
    too_deep = f"s: not usable YAML: {documents.TOO_DEEP}"
    assert lines == [f"5000 True {too_deep}", f"60000 False {too_deep}",
                     f"257 True {too_deep}", "True"], lines


@pytest.mark.parametrize("layer", ["libyaml_flow", "libyaml_block", "recursion", "json"])
def test_too_deep_is_one_reason_whichever_layer_stops_it(monkeypatch, layer):
    """The package's contract, on every PyYAML: a depth limit met by any layer (libyaml's
    scanner in PyYAML 6.0.4's wheels says "exceeded maximum nesting depth" in a syntax
    error; the Python composer and json raise RecursionError) is reported as
    ``TOO_DEEP``, never as invalid text. The parsers are replaced by ones raising what each
    layer raises, so the test does not depend on the installed PyYAML's limits."""
    mark = yaml.Mark("s", 1000, 0, 1000, None, None)
    raised = {"libyaml_flow": yaml.scanner.ScannerError(
                  "while increasing flow level", mark, "exceeded maximum nesting depth", mark),
              "libyaml_block": yaml.scanner.ScannerError(
                  "while increasing block level", mark, "exceeded maximum nesting depth", mark),
              "recursion": RecursionError("maximum recursion depth exceeded"),
              "json": RecursionError("maximum recursion depth exceeded while decoding")}[layer]

    def deep(*args, **kwargs):
        raise raised
    if layer == "json":
        monkeypatch.setattr(documents.json, "loads", deep)
        parse, kind = parse_json, "JSON"
    else:
        monkeypatch.setattr(documents, "_safe_load", deep)
        parse, kind = parse_yaml, "YAML"
    with pytest.raises(DocumentError) as caught:
        parse("[[]]", "topic /x")
    assert str(caught.value) == f"topic /x: not usable {kind}: {documents.TOO_DEEP}"


def test_a_syntax_error_that_is_not_a_depth_limit_stays_a_syntax_error():
    with pytest.raises(DocumentError, match=r"^s: not valid YAML: .*flow sequence") as caught:
        parse_yaml("[1, 2", "s")
    assert documents.TOO_DEEP not in str(caught.value)


def test_no_thread_for_the_stack_falls_back_to_the_python_composer(monkeypatch):
    def refuse(size=0):
        raise ValueError("size not valid")
    monkeypatch.setattr(documents.threading, "stack_size", refuse)
    assert parse_yaml("a: &x [1]\nb: *x\n", "s") == {"a": [1], "b": [1]}
    with pytest.raises(DocumentError, match="merge keys"):
        parse_yaml(merge_bomb(2), "s")


#: scalars that the plain construction reads with ``float`` or ``int`` and those it leaves to
#: PyYAML's constructors (YAML 1.1's octal, base 60, .inf, underscores, signs, explicit tags)
SCALARS = ["0", "7", "010", "0o7", "0x1f", "0b101", "-3", "+4", "1_000", "190:20:30", "00",
           "0.0", "-0.0", "+1.5", ".5", "-.5", "1.", "1e5", "1.0e+5", "6.02e-23", "1_000.5",
           "1__0.5", ".inf", "-.Inf", "+.INF", ".nan", "190:20:30.15", "1.7976931348623157e308",
           "1e999", "!!float 1", "!!float '-1_5.0'", "!!float ' 2.5'", "!!float inf",
           "!!float -nan", "!!int '12'", "!!float '١٢'", "x1.5", "null", "~", "yes", "Off",
           "'3.5'", "=", "1" * 5000]


@pytest.mark.skipif(documents.CSafeLoader is None, reason="PyYAML without libyaml")
def test_scalars_construct_as_pyyaml():
    for scalar in SCALARS:
        text = f"value: {scalar}\nlist: [{scalar}, {scalar}]\n{scalar}: key\n"
        try:
            expected = pyyaml_reference(text)
        except (ValueError, yaml.YAMLError) as exc:   # '=' as a value; 5,000 digits
            with pytest.raises(DocumentError, match=re.escape(" ".join(str(exc).split())[:40])):
                parse_yaml(text, "s")
            continue
        got = parse_yaml(text, "s")
        assert repr(got) == repr(expected), scalar
        assert [type(v) for v in got["list"]] == [type(v) for v in expected["list"]], scalar


@pytest.mark.parametrize("text", ["a: 1\na: 2\n", "x: {b: 1, b: 2}\n", "a: &x {k: 1}\nb: *x\nb: 3\n"])
def test_a_key_given_twice_is_refused(text):
    """Issue 34's J1: PyYAML keeps a repeated key's last value without a word (a joint map's
    `scale: {act4: 0.001, act4: 1000}` read as 1000); every document read is refused,
    naming the key, whichever loader builds it."""
    with pytest.raises(DocumentError, match=r"^m\.yaml: not valid YAML: .*found the key '[abx]' "
                                            r"twice, expected each key once"):
        parse_yaml(text, "m.yaml")
