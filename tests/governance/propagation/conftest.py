import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def clean_cache_keys():
    """Each test starts with no cache keys in its Redis database (Celery's own keys are left alone), so a
    scan of hot sets or cached packets sees only what the test made."""
    client = cache._cache.get_client(write=True)
    keys = list(client.scan_iter(match=cache.make_key("*"), count=1000))
    if keys:
        client.delete(*keys)
    yield
