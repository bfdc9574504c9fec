"""Which addresses a webhook may be POSTed to: public ones, and internal ones only when the
operator says so for that endpoint.

A webhook URL is configuration, but whoever can set it (an environment variable, a config
file, a tenant's settings page) could otherwise make the writer POST to the cloud metadata
service, to a database's HTTP port on the private network, or to itself. So the host is
checked twice: when the endpoint is registered (an address literal, or a `localhost` name,
without any DNS lookup) and before every connection, on every address the name resolves to
(`delivery` connects only to addresses it checked, and follows no redirects).

Two classes of refusal. Never a target, opt-in or not: cloud metadata addresses, the
unspecified address, multicast and reserved IPv4 (no webhook receiver lives there, and
`0.0.0.0` reaches this host). Internal, allowed with the endpoint's `allow_private_targets`:
loopback, link-local, private (RFC 1918, IPv6 unique-local fc00::/7) and every other address
that is not globally routable (shared 100.64/10, documentation ranges). IPv4 addresses inside
IPv6 ones (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4, Teredo) are checked too.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from ipaddress import IPv4Address, IPv6Address, IPv6Network, ip_address

IPAddress = IPv4Address | IPv6Address

# AWS/GCP/Azure/OpenStack (169.254.169.254), AWS ECS task metadata (169.254.170.2), Alibaba
# Cloud (100.100.100.200), AWS over IPv6 (fd00:ec2::254).
METADATA = frozenset(
    ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
_NAT64 = IPv6Network("64:ff9b::/96")
_UNIQUE_LOCAL = IPv6Network("fc00::/7")
OPT_IN = "allow_private_targets"


def _embedded(address: IPAddress) -> Iterator[IPAddress]:
    """The address itself and every IPv4 address carried inside an IPv6 one."""
    if isinstance(address, IPv6Address) and address.scope_id:
        address = IPv6Address(str(address).split("%", 1)[0])
    yield address
    if not isinstance(address, IPv6Address):
        return
    value = int(address)
    if address.ipv4_mapped is not None:
        yield address.ipv4_mapped
    if address in _NAT64 or (value >> 32 == 0 and value > 1):  # NAT64; IPv4-compatible ::a.b.c.d
        yield IPv4Address(value & 0xFFFFFFFF)
    if address.sixtofour is not None:
        yield address.sixtofour
    if address.teredo is not None:
        yield from address.teredo


def _kind(address: IPAddress) -> tuple[bool, str] | None:
    """(never allowed, what it is) for an internal address; None for a public one."""
    if address in METADATA:
        return True, "a cloud metadata address"
    if address.is_unspecified:
        return True, "the unspecified address"
    if address.is_multicast:
        return True, "a multicast address"
    if address.is_loopback:
        return False, "a loopback address"
    if address.is_link_local:
        return False, "a link-local address"
    if isinstance(address, IPv4Address) and address.is_reserved:
        return True, "a reserved address"
    if isinstance(address, IPv6Address) and address in _UNIQUE_LOCAL:
        return False, "a unique-local (private) address"
    if isinstance(address, IPv6Address) and address.is_site_local:
        return False, "a site-local (private) address"
    if address.is_private:
        return False, "a private address"
    if not address.is_global:
        return False, "not a public address"
    return None


def refusal(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why a webhook must not go to `address` (None: it may). An embedded IPv4 address is
    named first: it says more than the IPv6 range around it."""
    kinds = [k for a in reversed(list(_embedded(address))) if (k := _kind(a)) is not None]
    never = [what for is_never, what in kinds if is_never]
    if never:
        return f"{address} is {never[0]}: never a webhook target"
    if kinds and not allow_private:
        return f"{address} is {kinds[0][1]}: set {OPT_IN} on the endpoint to send there"
    return None


def literal(host: str) -> IPAddress | None:
    """The address a URL's host names without a DNS lookup: an IPv4 or IPv6 literal, including
    the forms the C resolver also takes (`127.1`, `0x7f000001`, `2130706433`); None for a name."""
    try:
        return ip_address(host)
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        return None
    return ip_address(infos[0][4][0]) if infos else None


def host_refusal(host: str, *, allow_private: bool) -> str | None:
    """What registration can tell from the host alone: an address literal checked as above,
    and `localhost` names (always loopback, RFC 6761). Other names are checked on delivery,
    after they resolve."""
    address = literal(host)
    if address is not None:
        return refusal(address, allow_private=allow_private)
    name = host.rstrip(".").lower()
    if not allow_private and (name == "localhost" or name.endswith(".localhost")):
        return f"{host} is a loopback name: set {OPT_IN} on the endpoint to send there"
    return None


__all__ = ["METADATA", "OPT_IN", "IPAddress", "host_refusal", "literal", "refusal"]
