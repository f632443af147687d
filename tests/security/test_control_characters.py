"""A NUL byte (or any control character) in a name, path or slug of a request is a 400 with a code, never a
500: PostgreSQL refuses a NUL in a text parameter, so a name that reached the database with one broke the
request whatever the caller's token. The resolvers (governance/permissions/resolve.py) read every such name
through one check."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.test import Client

from governance.permissions.resolve import CONTROL_CHARACTERS
from tests.conftest import token_client

BAD = ["ac\x00me", "te\x00am", "a\x1bb", "line\nbreak", "del\x7f", "c1\x85"]
# (method, path with {bad} in it, body)
REQUESTS = [
    ("get", "/api/v1/workspaces/{bad}", None),
    ("patch", "/api/v1/workspaces/{bad}", {"name": "Renamed"}),
    ("get", "/api/v1/workspaces/{bad}/members", None),
    ("post", "/api/v1/teams/{bad}/members", {"member": "rami"}),
    ("post", "/api/v1/groups/{bad}/members", {"member": "rami"}),
    ("delete", "/api/v1/teams/{bad}/members/rami", None),
    ("delete", "/api/v1/teams/editors/members/{bad}", None),
    ("get", "/api/v1/grants?principal={bad}", None),
]


def _send(client, method: str, path: str, body):
    return (
        getattr(client, method)(path, body, format="json")
        if body is not None
        else getattr(client, method)(path)
    )


@pytest.mark.parametrize("who", ["owner", "agent", "outsider", "nobody"])
@pytest.mark.parametrize("method, path, body", REQUESTS)
def test_a_control_character_in_a_name_of_the_path_is_a_400(request, who, method, path, body):
    client = Client() if who == "nobody" else token_client(request.getfixturevalue(who))
    for bad in BAD:
        url = path.format(bad=quote(bad))  # percent-encoded: the client drops a raw line break
        if hasattr(client, "credentials"):
            answer = _send(client, method, url, body)
        else:
            answer = getattr(client, method)(url, body or {}, content_type="application/json")
        assert answer.status_code < 500, (url, answer.status_code)
        if who != "nobody" and answer.status_code == 400:
            assert answer.json()["error"] == "invalid_input"


@pytest.mark.parametrize("bad", BAD)
def test_the_answer_names_the_field_and_says_why(owner, bad):
    answer = token_client(owner).get(f"/api/v1/workspaces/{quote(bad)}")
    assert answer.status_code == 400
    assert answer.json() == {"error": "invalid_input", "message": CONTROL_CHARACTERS, "field": "workspace"}
