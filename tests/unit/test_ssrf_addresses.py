"""The SSRF guard's address verdicts: one table of addresses, both families, and whether a metadata
document fetch may connect to each.

The verdicts come from the tables written in `cimd.py`, not from `ipaddress`'s `is_private` and
`is_global`, so this table has to pass on every Python version."""

from __future__ import annotations

import pytest

from lambda_mcp.facade.cimd import blocked_address

BLOCKED, ALLOWED = True, False

ROWS: list[tuple[str, bool, bool]] = [  # address, allow_loopback, blocked
    # IPv4 special-purpose networks, with their edges
    ("0.0.0.0", False, BLOCKED),
    ("0.1.2.3", False, BLOCKED),
    ("10.0.0.1", False, BLOCKED),
    ("10.255.255.255", False, BLOCKED),
    ("100.64.0.1", False, BLOCKED),  # shared address space (CGNAT)
    ("100.127.255.254", False, BLOCKED),
    ("100.63.255.255", False, ALLOWED),
    ("100.128.0.0", False, ALLOWED),
    ("169.254.169.254", False, BLOCKED),  # the cloud metadata service
    ("172.16.0.1", False, BLOCKED),
    ("172.31.255.255", False, BLOCKED),
    ("172.15.255.255", False, ALLOWED),
    ("172.32.0.0", False, ALLOWED),
    ("192.0.0.8", False, BLOCKED),  # IETF protocol assignments
    ("192.0.0.9", False, BLOCKED),  # PCP anycast: global in the registry, still no document host
    ("192.0.0.170", False, BLOCKED),
    ("192.0.2.1", False, BLOCKED),  # TEST-NET-1
    ("192.88.99.1", False, BLOCKED),  # 6to4 relay anycast
    ("192.168.1.1", False, BLOCKED),
    ("198.18.0.1", False, BLOCKED),  # benchmarking
    ("198.19.255.255", False, BLOCKED),
    ("198.20.0.0", False, ALLOWED),
    ("198.51.100.7", False, BLOCKED),  # TEST-NET-2
    ("203.0.113.9", False, BLOCKED),  # TEST-NET-3
    ("224.0.0.1", False, BLOCKED),
    ("239.255.255.250", False, BLOCKED),
    ("240.0.0.1", False, BLOCKED),
    ("255.255.255.255", False, BLOCKED),
    ("8.8.8.8", False, ALLOWED),
    ("1.1.1.1", False, ALLOWED),
    ("223.255.255.255", False, ALLOWED),
    # loopback: allowed only for local work and tests, nothing else is
    ("127.0.0.1", False, BLOCKED),
    ("127.0.0.1", True, ALLOWED),
    ("127.1.2.3", False, BLOCKED),
    ("::1", False, BLOCKED),
    ("::1", True, ALLOWED),
    ("::ffff:127.0.0.1", False, BLOCKED),
    ("::ffff:127.0.0.1", True, ALLOWED),
    ("10.0.0.1", True, BLOCKED),
    ("169.254.169.254", True, BLOCKED),
    ("fe80::1", True, BLOCKED),
    ("64:ff9b::7f00:1", True, BLOCKED),  # a NAT64 translator's loopback is not ours
    # IPv6 special-purpose networks
    ("::", False, BLOCKED),
    ("::10.0.0.1", False, BLOCKED),  # IPv4-compatible (deprecated): blocked whatever it carries
    ("::8.8.8.8", False, BLOCKED),
    ("100::1", False, BLOCKED),  # discard-only
    ("2001::1", False, BLOCKED),  # IETF protocol assignments (2001::/23)
    ("2001:2::1", False, BLOCKED),  # benchmarking
    ("2001:1ff:ffff::1", False, BLOCKED),
    ("2001:200::1", False, ALLOWED),  # just past 2001::/23
    ("2001:db8::1", False, BLOCKED),  # documentation
    ("3fff::1", False, BLOCKED),  # documentation (2024)
    ("fc00::1", False, BLOCKED),  # unique local
    ("fd00:ec2::254", False, BLOCKED),  # the cloud metadata service over IPv6
    ("fe80::1", False, BLOCKED),  # link-local
    ("febf::1", False, BLOCKED),
    ("fec0::1", False, BLOCKED),  # site-local (deprecated)
    ("feff::1", False, BLOCKED),
    ("ff02::1", False, BLOCKED),  # multicast
    ("ff05::1:3", False, BLOCKED),
    ("4000::1", False, BLOCKED),  # outside 2000::/3: no global unicast there
    ("5f00::1", False, BLOCKED),
    ("2606:4700::1111", False, ALLOWED),
    ("2001:4860:4860::8888", False, ALLOWED),
    ("2a00:1450:4001::1", False, ALLOWED),
    # IPv6 forms that carry an IPv4 address
    ("::ffff:10.0.0.1", False, BLOCKED),  # IPv4-mapped: judged as the IPv4 address
    ("::ffff:169.254.169.254", False, BLOCKED),
    ("::ffff:100.64.0.1", False, BLOCKED),
    ("::ffff:0.0.0.0", False, BLOCKED),
    ("::ffff:8.8.8.8", False, ALLOWED),
    ("64:ff9b::a00:1", False, BLOCKED),  # NAT64 well-known prefix: judged as the IPv4 address
    ("64:ff9b::a9fe:a9fe", False, BLOCKED),
    ("64:ff9b::c0a8:101", False, BLOCKED),
    ("64:ff9b::808:808", False, ALLOWED),
    ("64:ff9b:1::808:808", False, BLOCKED),  # local-use NAT64 prefix: blocked outright
    ("2002:0a00:0001::", False, BLOCKED),  # 6to4, blocked outright: 10.0.0.1 ...
    ("2002:a9fe:a9fe::1", False, BLOCKED),  # ... 169.254.169.254 ...
    ("2002:808:808::1", False, BLOCKED),  # ... and a public 8.8.8.8 alike
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False, BLOCKED),  # Teredo (RFC 4380's example), blocked outright
    ("2001:0:808:808:0:ffff:f5ff:fffe", False, BLOCKED),  # Teredo, public server, client 10.0.0.1 obfuscated
    ("2001:0:808:808:0:ffff:f7f7:f7f7", False, BLOCKED),  # Teredo, public server, public client 8.8.8.8
    # zone ids, as getaddrinfo writes link-local answers
    ("fe80::1%eth0", False, BLOCKED),
    ("fe80::1%2", True, BLOCKED),
    ("fec0::1%eth0", False, BLOCKED),
    ("ff02::1%lo", False, BLOCKED),
    ("2606:4700::1111%eth0", False, ALLOWED),
    # not an address at all: never connected to
    ("", False, BLOCKED),
    ("example.com", False, BLOCKED),
    ("10.0.0.256", False, BLOCKED),
]


@pytest.mark.parametrize(("address", "allow_loopback", "blocked"), ROWS)
def test_each_address_has_the_same_verdict_on_every_python(address: str, allow_loopback: bool, blocked: bool) -> None:
    assert blocked_address(address, allow_loopback) is blocked
