import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings.production")
application = get_wsgi_application()

# Everything imported so far lives as long as the worker: keep it out of the cyclic GC's full passes.
from governance.runtime import freeze_startup_objects  # noqa: E402

freeze_startup_objects()
