from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Memory governance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import request_started

        # Derived stores whose update is a service register their handler from the service's module
        # (governance.propagation.stores.handler / repair): import them in every process that may run one.
        # Unkeyed contradictions are proposed after each embedding (governance.propagation.after_embedding).
        # Evaluation runs whose message was lost are queued again by the reconciler (a repair).
        from governance.evaluation import runs  # noqa: F401
        from governance.recall import disputes  # noqa: F401
        from governance.runtime.replica import begin_request
        from governance.services import summary  # noqa: F401

        # Read replicas: each request starts unpinned (it has written nothing yet).
        request_started.connect(begin_request, dispatch_uid="governance.runtime.replica.begin_request")
