"""Sending one signed webhook request, safely. A subscriber chooses the URL, so the URL is an attacker's
tool for reaching what only this server can reach (SSRF): only http(s); no user:password in it; every
address the name resolves to must be a public one (unless settings.WEBHOOK_ALLOW_PRIVATE); the connection
goes to the address that was checked (a second DNS answer cannot swap in 127.0.0.1); redirects are never
followed; each request has a total deadline (WEBHOOK_DEADLINE_SECONDS: connect, send and read together,
so a receiver answering one byte at a time is cut at the deadline) and reads at most a few KiB of the
answer. IPv6 addresses that embed an IPv4 one (NAT64, 6to4, Teredo, IPv4-compatible or -mapped) are
judged by the IPv4 address too."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import socket
import ssl
import threading
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
URL_PRIVATE = (
    "This address is loopback, private, link-local or otherwise not public; webhooks are sent only "
    "to public addresses (an operator may allow private ones with WEBHOOK_ALLOW_PRIVATE)."
)
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


# IPv6 prefixes that carry an IPv4 address in their last 32 bits: NAT64's well-known prefix (RFC 6052),
# IPv4-compatible (::a.b.c.d, deprecated), IPv4-mapped (::ffff:a.b.c.d) and IPv4-translated
# (::ffff:0:a.b.c.d, RFC 2765). A packet to one of them reaches the IPv4 address (through a NAT64
# gateway, a dual stack or a translator), so that address is what is judged.
_LAST_32_BITS = tuple(
    ipaddress.ip_network(n) for n in ("64:ff9b::/96", "::/96", "::ffff:0:0/96", "::ffff:0:0:0/96")
)
# NAT64's local-use prefix (RFC 8215) places the IPv4 address where the operator's prefix length says:
# never public, so refused as such.
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address leads to: NAT64, IPv4-compatible, -mapped or -translated (last
    32 bits), 6to4 (2002::/16, bits 16-47) and Teredo (2001::/32: its server and its client)."""
    found = []
    if any(ip in net for net in _LAST_32_BITS):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    return found


# Ranges that are not public but that Python's `is_global` (3.11) passes: documentation (RFC 9637).
# Site-local (fec0::/10, deprecated by RFC 3879) and the reserved ranges (SRv6 SIDs 5f00::/16, the
# unassigned blocks) are asked by name below, as Python flags them.
_NOT_GLOBAL = (ipaddress.ip_network("3fff::/20"),)


def _allowed(ip, *, carrier: bool = False) -> bool:
    """Whether `ip` is public. `carrier`: an IPv6 address that carries an IPv4 one, judged on its own too
    (NAT64's 64:ff9b::/96 sits in the block Python calls reserved, ::/8, so that flag is not asked of it)."""
    if getattr(settings, "WEBHOOK_ALLOW_PRIVATE", False):
        return not ip.is_multicast and not ip.is_unspecified
    if isinstance(ip, ipaddress.IPv6Address) and (ip.is_site_local or any(ip in n for n in _NOT_GLOBAL)):
        return False
    return (
        ip.is_global
        and not ip.is_multicast
        and (carrier or not ip.is_reserved)
        and not ip.is_private
        and not ip.is_link_local
        and not ip.is_loopback
    )


def address_allowed(address: str) -> bool:
    """Whether a webhook may be sent to this address: a public one (any, with WEBHOOK_ALLOW_PRIVATE, but
    never multicast or unspecified). An IPv6 address that embeds an IPv4 one is judged by both
    (`http://[64:ff9b::7f00:1]/` is 127.0.0.1 through NAT64; `http://[2002:7f00:1::]/` is 6to4 for it)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if ip.ipv4_mapped is not None:
            return _allowed(ip.ipv4_mapped)  # ::ffff:127.0.0.1 is loopback
        if ip in _LOCAL_NAT64 and not getattr(settings, "WEBHOOK_ALLOW_PRIVATE", False):
            return False
        if inner:
            return _allowed(ip, carrier=True) and all(_allowed(v4) for v4 in inner)
    return _allowed(ip)


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


class DeadlineExceeded(TimeoutError):
    """The receiver did not answer in full within WEBHOOK_DEADLINE_SECONDS (connect, send, and every
    byte of the answer's head together): the connection was cut at the deadline."""


DEADLINE_EXCEEDED = (
    "The receiver did not answer within the delivery's deadline ({seconds:g} s); the connection was cut."
)


def deadline_seconds() -> float:
    """The total time one delivery may take, whatever the receiver does (a per-read timeout alone lets a
    receiver that sends one byte at a time hold a worker for as long as it likes)."""
    return float(getattr(settings, "WEBHOOK_DEADLINE_SECONDS", 10.0))


def post(url: str, body: bytes, headers: dict[str, str]) -> Answer:
    """POST once, within a total deadline. Raises TargetRefused (not allowed, or a redirect),
    DeadlineExceeded, OSError/HTTPException (network)."""
    target = parse_url(url)
    address = resolve(target)
    deadline = deadline_seconds()
    timeout = min(float(getattr(settings, "WEBHOOK_TIMEOUT_SECONDS", 5.0)), deadline)
    cls = _PinnedHTTPS if target.scheme == "https" else _PinnedHTTP
    connection = cls(target.host, target.port, address, timeout)
    cut = threading.Event()

    def cut_off() -> None:
        # Runs on the timer's thread: shutting the socket down wakes the worker's blocked recv or send.
        cut.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(deadline, cut_off)
    timer.daemon = True
    started = time.monotonic()
    timer.start()
    try:
        connection.request(
            "POST",
            target.path,
            body=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                **headers,
            },
        )
        response = connection.getresponse()
        response.read(ANSWER_READ_LIMIT)  # the answer's body is not used; a little is read, then closed
        status = response.status
    except (OSError, http.client.HTTPException) as exc:
        if cut.is_set():
            raise DeadlineExceeded(DEADLINE_EXCEEDED.format(seconds=deadline)) from exc
        raise
    finally:
        timer.cancel()
        connection.close()
    if cut.is_set():  # the answer's head came in, but the deadline passed while reading it
        raise DeadlineExceeded(DEADLINE_EXCEEDED.format(seconds=deadline))
    elapsed = int((time.monotonic() - started) * 1000)
    if 300 <= status < 400:
        raise RedirectAnswer(status, elapsed)
    return Answer(status, elapsed)


class RedirectAnswer(Exception):
    def __init__(self, status: int, elapsed_ms: int):
        self.status = status
        self.elapsed_ms = elapsed_ms
        super().__init__(REDIRECT_REFUSED)
