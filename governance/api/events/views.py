"""Events: an agent records one interaction (its turns); the service keeps an episodic memory per turn
and extracts candidates."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.events.serializers import EventInput, EventOutput
from governance.api.memories.serializers import MemoryOutput
from governance.api.schema import ERROR_RESPONSES
from governance.api.validation import valid
from governance.selectors.memory import scope_visible
from governance.services.events import EXTRACTED_BY, event_ingest


class EventsView(APIView):
    @extend_schema(
        operation_id="events_create",
        request=EventInput,
        responses={201: EventOutput, **ERROR_RESPONSES},
        summary="Record one interaction: episodic memories per turn plus extracted candidates.",
    )
    def post(self, request: Request) -> Response:
        principal = request_principal(request)
        data = valid(EventInput, request.data)
        scope = scope_visible(principal, data["scope"])
        created = event_ingest(
            scope=scope,
            session=data["session"],
            at=data.get("at"),
            turns=[dict(t) for t in data["turns"]],
            actor=principal,
        )
        # The answer lists the episodes (what was sent); the extracted candidates wait in the review queue
        # (GET /review, GET /memories?status=candidate). A forgotten text said again is extracted like any
        # other (services/events.py), so neither tells which text was forgotten.
        episodes = [m for m in created if EXTRACTED_BY not in (m.meta or {})]
        return Response({"created": MemoryOutput(episodes, many=True).data}, status=status.HTTP_201_CREATED)
