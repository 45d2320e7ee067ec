"""Property-based run against the sidecar's own OpenAPI (schemathesis): no request makes a 5xx.

The sidecar runs on a real uvicorn with the default store (embedded Mem0 + MiniLM) and a working
fake writer, so every 5xx would be a bug in the sidecar, not an unavailable dependency.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from mirage_guard.adapters.server import create_app
from mirage_guard.guard import GuardSettings
from tests.server.sidecar_setup import KEYS, A, echo_writer, on_loopback

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings_ = GuardSettings(data_dir=tmp_path_factory.mktemp("fuzz"), api_keys=KEYS)
    app = create_app(
        settings_,
        writer_llm=echo_writer(),
    )
    with on_loopback(app, lifespan="on") as url:
        yield url


# the schema does not need a running app: the routes and models define it
schema = schemathesis.openapi.from_dict(create_app(GuardSettings(api_keys=KEYS)).openapi())


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_request_makes_a_server_error(sidecar: str, case: schemathesis.Case) -> None:
    headers = {**(case.headers or {}), **A}
    response = case.call(base_url=sidecar, headers=headers)
    case.validate_response(response, checks=[not_a_server_error], headers=headers)
