"""Where the hub may send a webhook: no SSRF into the hub's own network.

A URL is checked twice. When an endpoint is saved: `https://` (plain `http://` only for a
host in MEMORYHUB_WEBHOOK_ALLOWED_HOSTS), no credentials, and an address written in the URL
must be public. When a delivery connects: the name is resolved then, every address it
resolves to must be public (or its host allowed), and the connection goes to the address
that was checked — a name that answers a public address to the check and a private one
to the connection (DNS rebinding) has no second lookup to win. Redirects are never
followed (httpcore follows none), so a public receiver cannot bounce a delivery inward."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import httpcore
from django.conf import settings

# IPv4 addresses wrapped in IPv6 ones: each is judged by the IPv4 address inside.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class AddressRefused(Exception):
    """A webhook URL or address the hub will not send to; the message says why."""


def host_allowed(host: str) -> bool:
    """Whether `host` is listed in MEMORYHUB_WEBHOOK_ALLOWED_HOSTS (a receiver inside the
    hub's network, or plain http, on purpose)."""
    return host.lower().strip("[]") in {allowed.lower().strip("[]") for allowed in settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS}


def address_refusal(address: str) -> str | None:
    """Why a delivery may not go to `address`, or None for a public unicast address.
    Private, loopback, link-local (cloud metadata at 169.254.169.254 among them), shared,
    reserved, unspecified and multicast addresses are refused, in either IP version and in
    IPv6's IPv4-mapped, 6to4, Teredo and NAT64 forms."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is None and ip in NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            return address_refusal(str(inner))
    if ip.is_multicast:
        return f"{ip} is a multicast address"
    if not ip.is_global:
        kind = "loopback" if ip.is_loopback else "link-local" if ip.is_link_local else "private or reserved"
        return f"{ip} is a {kind} address"
    return None


def url_refusal(url: str) -> str | None:
    """Why an endpoint may not be saved with `url`, or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a URL: {exc}"
    host = parts.hostname or ""
    if parts.scheme not in ("https", "http") or not host:
        return "must be an https:// URL"
    if parts.scheme == "http" and not host_allowed(host):
        return "must be https:// (plain http:// only for hosts in MEMORYHUB_WEBHOOK_ALLOWED_HOSTS)"
    if parts.username is not None or parts.password is not None:
        return "must not hold credentials: receivers check the signature instead"
    if port == 0:
        return "port 0 is not a port"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return None  # a name: judged by what it resolves to, at each delivery
    if not host_allowed(host) and (refusal := address_refusal(host)):
        return f"{refusal}, not allowed for webhooks (MEMORYHUB_WEBHOOK_ALLOWED_HOSTS lists exceptions)"
    return None


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's network backend, connecting only to addresses `address_refusal` allows
    (or any, for an allowed host), and to the very address it checked."""

    def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        allowed = host_allowed(host)
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"{host} does not resolve: {exc.strerror}") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
        if not allowed:
            for address in addresses:
                if refusal := address_refusal(address):
                    raise AddressRefused(f"{host} resolves to {refusal}; refused (MEMORYHUB_WEBHOOK_ALLOWED_HOSTS lists exceptions)")
        last: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(address, port, timeout=timeout, local_address=local_address, socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last or httpcore.ConnectError(f"{host} has no address")
