"""Sending one signed webhook request, safely. A subscriber chooses the URL, so the URL is an attacker's
tool for reaching what only this server can reach (SSRF): only http(s); no user:password in it; every
address the name resolves to must be a public one (unless settings.WEBHOOK_ALLOW_PRIVATE); the connection
goes to the address that was checked (a second DNS answer cannot swap in 127.0.0.1); redirects are never
followed; each request has a timeout and reads at most a few KiB of the answer."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

URL_TOO_LONG = "A webhook URL has at most 2048 characters."
URL_CHARACTERS = "A webhook URL has no spaces or control characters (percent-encode them)."
URL_SCHEME = "A webhook URL starts with http:// or https://."
URL_HOST = "A webhook URL names a host."
URL_CREDENTIALS = "A webhook URL may not carry a user name or password; the signature authenticates us."
URL_PORT = "The port of a webhook URL is a number from 1 to 65535."
URL_PRIVATE = ("This address is loopback, private, link-local or otherwise not public; webhooks are sent only "
               "to public addresses (an operator may allow private ones with WEBHOOK_ALLOW_PRIVATE).")
URL_UNRESOLVED = "The host of this webhook URL does not resolve."
REDIRECT_REFUSED = "The receiver answered with a redirect; webhooks never follow redirects."

ANSWER_READ_LIMIT = 4096
USER_AGENT = "memory-governance-webhooks/1"


class TargetRefused(Exception):
    """The URL may not be called (bad form, or an address that is not allowed). `message` is a constant."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent in the request line


def parse_url(url: str) -> Target:
    """The URL's parts, or TargetRefused. Checks the form only; `resolve` checks the addresses."""
    url = url.strip()
    if len(url) > 2048:
        raise TargetRefused(URL_TOO_LONG)
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise TargetRefused(URL_CHARACTERS)  # a CR/LF in the request line would forge headers
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise TargetRefused(URL_SCHEME)
    if parts.username is not None or parts.password is not None:
        raise TargetRefused(URL_CREDENTIALS)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise TargetRefused(URL_PORT) from exc
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise TargetRefused(URL_HOST)
    if not 1 <= port <= 65535:
        raise TargetRefused(URL_PORT)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, host, port, path)


def address_allowed(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is loopback
    if getattr(settings, "WEBHOOK_ALLOW_PRIVATE", False):
        return not ip.is_multicast and not ip.is_unspecified
    return ip.is_global and not ip.is_multicast


def resolve(target: Target) -> str:
    """The address to connect to: every address the name has must be allowed (a name with one public and
    one private address is refused, since which one a later lookup returns is the attacker's choice)."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise TargetRefused(URL_UNRESOLVED) from exc
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise TargetRefused(URL_UNRESOLVED)
    if not all(address_allowed(a) for a in addresses):
        raise TargetRefused(URL_PRIVATE)
    return addresses[0]


def check_url(url: str) -> Target:
    """Form and addresses, as a subscription is saved. A name that does not resolve yet is accepted
    (it is checked again before every request)."""
    target = parse_url(url)
    try:
        resolve(target)
    except TargetRefused as exc:
        if exc.message != URL_UNRESOLVED:
            raise
    return target


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """`sha256=` and the hex HMAC-SHA256 of "<timestamp>.<body>" under the subscription's secret."""
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self):
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self):
        sock = socket.create_connection((self._address, self.port), self.timeout)
        # The certificate is checked against the URL's host name, not the address we pinned.
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


@dataclass
class Answer:
    status: int
    elapsed_ms: int


def post(url: str, body: bytes, headers: dict[str, str]) -> Answer:
    """POST once. Raises TargetRefused (not allowed, or a redirect), OSError/HTTPException (network)."""
    target = parse_url(url)
    address = resolve(target)
    timeout = float(getattr(settings, "WEBHOOK_TIMEOUT_SECONDS", 5.0))
    cls = _PinnedHTTPS if target.scheme == "https" else _PinnedHTTP
    connection = cls(target.host, target.port, address, timeout)
    started = time.monotonic()
    try:
        connection.request("POST", target.path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": USER_AGENT, **headers,
        })
        response = connection.getresponse()
        response.read(ANSWER_READ_LIMIT)  # the answer's body is not used; a little is read, then closed
        status = response.status
    finally:
        connection.close()
    elapsed = int((time.monotonic() - started) * 1000)
    if 300 <= status < 400:
        raise RedirectAnswer(status, elapsed)
    return Answer(status, elapsed)


class RedirectAnswer(Exception):
    def __init__(self, status: int, elapsed_ms: int):
        self.status = status
        self.elapsed_ms = elapsed_ms
        super().__init__(REDIRECT_REFUSED)
