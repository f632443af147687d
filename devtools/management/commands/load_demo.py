"""`manage.py load_demo`: create the demo workspace (idempotent; see devtools/demo.py)."""

from django.core.management.base import BaseCommand

from devtools import demo


class Command(BaseCommand):
    help = "Load the demo workspace through the services. Running it again changes nothing."

    def handle(self, *args, **opts):
        summary = demo.load_demo()
        turns = demo.store_demo_turns()
        self.stdout.write(
            f"demo workspace: {summary.created} memories created, {summary.existing} already there; "
            f"{turns} example turns stored"
        )
