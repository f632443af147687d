"""The dashboard's routes for the accessibility sweep (tests/browser/test_dashboard_sweep.py): each GET page
with the URLs the sweep opens it at, and every other route with the reason it is no page to sweep.
tests/memoryui/test_every_route_swept.py holds the two lists to memoryui/views/urls.py, so a new route is
either swept or allow-listed with its reason."""

from __future__ import annotations

# Route name -> the URLs the sweep visits, built from the sweep's demo world `w` (a dict).
PAGES = {
    "overview": lambda w: ["/"],
    "memories": lambda w: ["/memories/?scope=demo", "/memories/?scope=demo&mode=meaning&q=export+format"],
    "memory": lambda w: [
        f"/memories/{w['fact'].pk}/",
        f"/memories/{w['old'].pk}/",
        f"/memories/{w['gone'].pk}/",
    ],
    "timeline": lambda w: ["/timeline/?scope=demo", f"/timeline/?m={w['fact'].pk}&m={w['old'].pk}"],
    "graph": lambda w: ["/graph/?scope=demo", f"/graph/?memory={w['fact'].pk}"],
    "turns": lambda w: ["/turns/", "/turns/?q=quarterly"],
    "turn": lambda w: [f"/turns/{w['turn'].pk}/"],
    "turn-why-not": lambda w: [
        f"/turns/{w['turn'].pk}/why-not/?memory={w['unused'].pk}",
        f"/turns/{w['turn'].pk}/why-not/?q=deck",
    ],
    "review": lambda w: ["/review/"],
    "governance-index": lambda w: ["/governance/"],
    "governance": lambda w: ["/governance/grants/"],
    "governance-audit": lambda w: ["/governance/audit/"],
    "governance-propagation": lambda w: ["/governance/propagation/"],
    "grant-revoke": lambda w: [f"/governance/grants/revoke/?grant={w['grant'].pk}"],
    "token-revoke": lambda w: [f"/governance/tokens/revoke/?token={w['token'].pk}"],
    "portability": lambda w: ["/portability/"],
    "evaluation": lambda w: ["/evaluation/"],
    "evaluation-run": lambda w: [f"/evaluation/runs/{w['run'].pk}/"],
    "workspaces": lambda w: ["/workspaces/"],
    "members": lambda w: ["/workspaces/demo/members/"],
    "scope-settings": lambda w: [f"/scopes/{w['slides'].pk}/settings/"],
    "invite": lambda w: [f"/invite/{w['invite']}/"],
    "webhooks": lambda w: ["/webhooks/"],
    "glossary": lambda w: ["/glossary/"],
}

# What a person's action brings onto a page: the sweep does the action and reads the page it shows.
ACTIONS = {
    "memory-bulk": "POST: the bulk result page (one line per memory)",
    "turn-try": "POST: the packet of a query tried on the turns page (an htmx answer into that page)",
    "memory-link-choices": "GET fragment: the link picker's choices, typed for on a memory's page",
}

# Fragments a page loads into itself as it opens (hx-trigger="load"): swept inside that page, which the
# sweep waits for until its requests have settled.
FRAGMENTS = {
    "activation-histogram-chart": "the overview's histogram (SVG drawn on the server), inside /",
    "memory-activation-chart": "a memory's activation curve, inside /memories/<id>/",
    "audit-verify": "the hash chain's state, inside /governance/audit/",
}

JSON = "a JSON feed for a chart or a script, read by the page that draws it (swept there)"
POST = "POST only (GET answers 405): a form's action that redirects to, or swaps into, a swept page"
NOT_PAGES = {
    "activation-histogram": JSON,
    "scope-options": JSON,
    "memory-activation": JSON,
    "timeline-data": JSON,
    "graph-data": JSON,
    "review-similar": JSON,
    "evaluation-data": JSON,
    "scope-export": "a file download (JSON attachment), no page",
    "memory-act": POST,
    "memory-link": POST,
    "memory-unlink": POST,
    "memory-promote": POST,
    "summary-rebuild": POST,
    "turn-try-why-not": POST,
    "turn-replay": POST,
    "review-act": POST,
    "review-dispute": POST,
    "review-decide": POST,
    "grant-add": POST,
    "scope-import": POST,
    "workspace-new": POST,
    "workspace-rename": POST,
    "member-add": POST,
    "invitation-new": POST,
    "invitation-withdraw": POST,
    "team-new": POST,
    "team-member-add": POST,
    "team-member-remove": POST,
    "scope-new": POST,
    "scope-settings-change": POST,
    "evaluation-upload": POST,
    "webhook-create": POST,
    "webhook-act": POST,
    "webhook-redeliver": POST,
    "theme": POST,
}
