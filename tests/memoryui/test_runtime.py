"""The web process freezes what it imported at start-up out of the cyclic GC's full passes."""

import gc
import importlib


def test_loading_the_wsgi_application_freezes_the_startup_objects(monkeypatch):
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "memoryui.settings.test")
    try:
        import memoryui.wsgi as wsgi

        importlib.reload(wsgi)
        assert gc.get_freeze_count() > 10_000
        assert callable(wsgi.application)
    finally:
        gc.unfreeze()  # the test process keeps its normal collector
