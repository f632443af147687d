"""The webhooks page's input: which workspace and which deliveries the page shows, a new subscription, an
action on one (pause, resume, rotate the secret, delete) and a redelivery. The URL, the event types and the
description are checked by the webhook service, for the API and the page alike."""

from __future__ import annotations

from django import forms

from governance.models import WebhookDelivery
from memoryui.forms.inputs import TextListField, text

BAD_ACTION = "The action is one of pause, resume, rotate or delete."
BAD_STATE = "state is one of " + ", ".join(WebhookDelivery.State.values) + " (or empty for every delivery)."
SLUG_TOO_LONG = "A workspace's short name is at most 63 characters."
URL_TOO_LONG = "A webhook URL is at most 2000 characters."
STATES = [("", "every delivery"), *WebhookDelivery.State.choices]


def _workspace() -> forms.CharField:
    return text(limit=63, message=SLUG_TOO_LONG)


def _state() -> forms.ChoiceField:
    return forms.ChoiceField(choices=STATES, required=False, error_messages={"invalid_choice": BAD_STATE})


class WebhookPageForm(forms.Form):
    workspace = _workspace()
    state = _state()


class WebhookCreateForm(forms.Form):
    workspace = _workspace()
    url = text(limit=2000, message=URL_TOO_LONG)
    event_types = TextListField(required=False)
    description = forms.CharField(required=False)  # its length is the service's rule (200)


class WebhookActForm(forms.Form):
    action = forms.ChoiceField(
        choices=[(a, a) for a in ("pause", "resume", "rotate", "delete")],
        error_messages={"required": BAD_ACTION, "invalid_choice": BAD_ACTION},
    )


class WebhookRedeliverForm(forms.Form):
    """The delivery log's filter, kept on the page the redelivery goes back to."""

    state = _state()
