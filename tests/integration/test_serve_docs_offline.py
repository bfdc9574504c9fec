"""/docs and /redoc work with no network: the pages name only this server's URLs, and every
script, stylesheet, icon and schema they name is served by it (issue #28, case 5)."""

from __future__ import annotations

import re

import pytest

from tests.fixtures_serve import Served

pytestmark = pytest.mark.integration

# Where a docs page names something the browser loads: src/href attributes, ReDoc's spec-url,
# and the `url: '...'` Swagger UI reads its schema from.
_REFERENCE = re.compile(
    r"""(?:\bsrc|\bhref|\bspec-url)\s*=\s*["']([^"']+)["']|\burl:\s*'([^']+)'"""
)
_ABSOLUTE = re.compile(r"""(?:https?:)?//[^\s"'<>)]+""")


def _references(html: str) -> list[str]:
    return [a or b for a, b in _REFERENCE.findall(html)]


@pytest.mark.parametrize(
    ("page", "kinds"),
    [("/docs", ("swagger-ui-bundle.js", "swagger-ui.css")), ("/redoc", ("redoc.standalone.js",))],
)
def test_docs_page_names_only_local_assets_and_each_is_served(
    rest_server: Served, page: str, kinds: tuple[str, ...]
) -> None:
    reply = rest_server.http.get(page)
    assert reply.status_code == 200
    html = reply.text
    foreign = [u for u in _ABSOLUTE.findall(html) if not u.startswith(rest_server.url)]
    assert foreign == [], f"{page} names another host: {foreign}"

    refs = _references(html)
    for kind in kinds:
        assert any(r.endswith(kind) for r in refs), f"{page} does not load {kind}: {refs}"
    assert any(r.endswith("openapi.json") for r in refs)
    for ref in refs:
        assert ref.startswith("/"), f"{page} names {ref!r}, not a path on this server"
        asset = rest_server.http.get(ref)
        assert asset.status_code == 200, f"{ref}: {asset.status_code}"
        assert len(asset.content) > 1000, f"{ref} is served nearly empty"
        if ref.endswith(".js"):
            assert "javascript" in asset.headers["content-type"]
        if ref.endswith(".css"):
            assert asset.headers["content-type"].startswith("text/css")
