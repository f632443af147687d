"""gunicorn's own log lines without secrets: its access log ("GET /invite/<token>/ ..." and the Referer a
page under such a path sends) and its error log do not pass through Django's LOGGING, so the same
redaction (memoryui.ops.logs.SecretFilter) is put on gunicorn's loggers here. Every gunicorn this
project starts passes LOGGER_CLASS_ARG (devtools runstack and topology; docs/operations.md for
production)."""

from __future__ import annotations

from gunicorn.glogging import Logger

from memoryui.ops.logs import SecretFilter

LOGGER_CLASS_ARG = "--logger-class=memoryui.ops.gunicorn_logging.RedactingLogger"


class RedactingLogger(Logger):
    """gunicorn's logger whose access and error lines have invitation and password-reset tokens replaced
    before any handler writes them (a filter on the logger: it sees every record, whatever the handler)."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for log in (self.access_log, self.error_log):
            if not any(isinstance(f, SecretFilter) for f in log.filters):
                log.addFilter(SecretFilter())
