from rest_framework.authentication import TokenAuthentication as _Base


class TokenAuthentication(_Base):
    pass
