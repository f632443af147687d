from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from governance.services.principal import principal_for_user


@pytest.fixture
def site_admin(db):
    """A Django superuser (the site administrator) with its principal."""
    user = get_user_model().objects.create_superuser(username="sam", password="pw-sam-admin-1")
    return principal_for_user(user)


@pytest.fixture
def anonymous():
    return APIClient()
