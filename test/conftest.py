"""Shared fixtures: the bundled models, loaded once per test session."""
from pathlib import Path

import pytest

from charmie_dynamics import load_model

ROOT = Path(__file__).resolve().parent.parent
CHARMIE = ROOT / "config" / "charmie.yaml"
EXAMPLES = {"puma": ROOT / "config" / "examples" / "puma.yaml",
            "stanford_arm": ROOT / "config" / "examples" / "stanford_arm.yaml"}
ALL_MODELS = {"charmie": CHARMIE, **EXAMPLES}


@pytest.fixture(scope="session")
def charmie():
    return load_model(CHARMIE)


@pytest.fixture(scope="session", params=sorted(ALL_MODELS))
def any_model(request):
    return load_model(ALL_MODELS[request.param])
