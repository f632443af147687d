"""Walk the audit hash chain and name the first row that does not hold (exit status 1 if one is found)."""

from django.core.management.base import BaseCommand, CommandError

from governance.services.audit import audit_verify_chain


class Command(BaseCommand):
    help = "Verify the audit log's hash chain; name the first bad row."

    def handle(self, *args, **options):
        report = audit_verify_chain()
        if report.ok:
            self.stdout.write(f"audit chain OK: {report.checked} events verified")
            return
        raise CommandError(
            f"audit chain BROKEN at event id {report.first_bad_id}: {report.problem} "
            f"({report.checked} events before it verified)"
        )
