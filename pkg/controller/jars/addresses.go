package jars

import (
	"fmt"
	"net/netip"
)

// What a jar may be fetched from is judged by the address each connection dials, after name
// resolution and on every redirect hop (Fetcher.checkAddress). Only global unicast addresses pass:
// whatever the operator fetches is uploaded to the tenant's own JobManager, so a fetch that
// reaches an address inside the cluster or the cloud is a full-read SSRF, not a blind one.
//
// specialRanges is IANA's IPv4 and IPv6 Special-Purpose Address Registries, with the multicast,
// link-local and reserved blocks of the IPv4 and IPv6 Address Space registries, as of 2025. An
// address is judged by the most specific range that contains it; the catch-alls 0.0.0.0/0 (global)
// and ::/0 (not global unicast: only 2000::/3 is) decide the rest. A few ranges the registries mark
// globally reachable are refused all the same, each saying why: no jar is served from them.
var specialRanges = []special{
	// IPv4. Anything not listed is global unicast.
	{pfx("0.0.0.0/0"), "global unicast", admit},
	{pfx("0.0.0.0/8"), `"this network" (RFC 791): 0.0.0.0 dials the local host on Linux`, refuse},
	{pfx("10.0.0.0/8"), "private-use (RFC 1918)", refuse},
	{pfx("100.64.0.0/10"), "shared address space, carrier-grade NAT (RFC 6598): used for pod and node ranges, and by cloud metadata services (100.100.100.200)", refuse},
	{pfx("127.0.0.0/8"), "loopback (RFC 1122)", refuse},
	{pfx("169.254.0.0/16"), "link-local (RFC 3927): cloud metadata services (169.254.169.254)", refuse},
	{pfx("172.16.0.0/12"), "private-use (RFC 1918)", refuse},
	// The whole block, although its anycast addresses 192.0.0.9 (PCP) and 192.0.0.10 (TURN) are
	// marked globally reachable: they name services, not a host a jar is served from. It holds the
	// DS-Lite service continuity prefix 192.0.0.0/29, the dummy address 192.0.0.8 and the NAT64
	// discovery addresses 192.0.0.170-171.
	{pfx("192.0.0.0/24"), "IETF protocol assignments (RFC 6890)", refuse},
	{pfx("192.0.2.0/24"), "documentation, TEST-NET-1 (RFC 5737)", refuse},
	// Deprecated (RFC 7526); the registry marks it neither global nor local.
	{pfx("192.88.99.0/24"), "6to4 relay anycast, deprecated (RFC 7526)", refuse},
	{pfx("192.168.0.0/16"), "private-use (RFC 1918)", refuse},
	{pfx("198.18.0.0/15"), "benchmarking (RFC 2544)", refuse},
	{pfx("198.51.100.0/24"), "documentation, TEST-NET-2 (RFC 5737)", refuse},
	{pfx("203.0.113.0/24"), "documentation, TEST-NET-3 (RFC 5737)", refuse},
	{pfx("224.0.0.0/4"), "multicast (RFC 5771)", refuse},
	{pfx("240.0.0.0/4"), "reserved (RFC 1112)", refuse},
	{pfx("255.255.255.255/32"), "limited broadcast (RFC 919)", refuse},

	// IPv6. Outside 2000::/3 the address space is reserved by the IETF or local; the ranges
	// listed there only name what an address is, or unwrap the IPv4 address it carries.
	{pfx("::/0"), "not global unicast: outside 2000::/3, IPv6 space is reserved by the IETF (RFC 4291)", refuse},
	{pfx("2000::/3"), "global unicast", admit},
	{pfx("::/128"), "unspecified (RFC 4291): dials the local host", refuse},
	{pfx("::1/128"), "loopback (RFC 4291)", refuse},
	// ::a.b.c.d, deprecated and never dialed on purpose; no IPv4 address is unwrapped from it.
	{pfx("::/96"), "IPv4-compatible, deprecated (RFC 4291)", refuse},
	// The operating system dials ::ffff:a.b.c.d as IPv4 a.b.c.d: that is the address judged.
	{pfx("::ffff:0:0/96"), "IPv4-mapped (RFC 4291)", embedsLast32},
	// The well-known NAT64 prefix: in an IPv6-only cluster, 64:ff9b::a.b.c.d is how a.b.c.d is
	// reached, private addresses included. The IPv4 address in its last 32 bits is judged.
	{pfx("64:ff9b::/96"), "NAT64 well-known prefix (RFC 6052)", embedsLast32},
	// Local-use NAT64 (RFC 8215) is not globally reachable, and where its IPv4 address sits depends
	// on the prefix length the local network chose (RFC 6052 section 2.2), so no embedded address
	// can be read from it reliably: all of it is refused. jars.allowedNetworks admits it by prefix.
	{pfx("64:ff9b:1::/48"), "local-use NAT64 (RFC 8215)", refuse},
	{pfx("100::/64"), "discard-only (RFC 6666)", refuse},
	{pfx("100:0:0:1::/64"), "dummy IPv6 prefix (RFC 9780)", refuse},
	// 2001::/23 is refused whole but for what it lists as globally reachable infrastructure (AMT,
	// AS112) and Teredo, whose client address is unwrapped. Its anycast service addresses
	// 2001:1::1-3 (PCP, TURN, DNS-SD SRP) are refused as 192.0.0.9-10 are.
	{pfx("2001::/23"), "IETF protocol assignments (RFC 2928)", refuse},
	// Teredo (RFC 4380): 2001:0:<server>:<flags>:<port>:<client>, the client's IPv4 address
	// obfuscated by XOR with 0xffffffff. The client address is where packets go: it is judged.
	{pfx("2001::/32"), "Teredo (RFC 4380)", embedsTeredo},
	{pfx("2001:2::/48"), "benchmarking (RFC 5180)", refuse},
	{pfx("2001:3::/32"), "global unicast (AMT, RFC 7450)", admit},
	{pfx("2001:4:112::/48"), "global unicast (AS112-v6, RFC 7535)", admit},
	{pfx("2001:10::/28"), "ORCHID, deprecated (RFC 4843)", refuse},
	// Marked globally reachable, but ORCHIDs are identifiers, not routable locators (RFC 7343).
	{pfx("2001:20::/28"), "ORCHIDv2 (RFC 7343)", refuse},
	// Marked globally reachable, but DETs are identifiers like ORCHIDv2 (RFC 9374).
	{pfx("2001:30::/28"), "drone remote ID entity tags (RFC 9374)", refuse},
	{pfx("2001:db8::/32"), "documentation (RFC 3849)", refuse},
	// 6to4 (RFC 3056): 2002:a.b.c.d::/48 is the site behind the 6to4 router at IPv4 a.b.c.d,
	// which the packets are tunnelled to: that address is judged.
	{pfx("2002::/16"), "6to4 (RFC 3056)", embeds6to4},
	{pfx("3fff::/20"), "documentation (RFC 9637)", refuse},
	{pfx("5f00::/16"), "segment routing SIDs (RFC 9602)", refuse},
	{pfx("fc00::/7"), "unique-local (RFC 4193): cloud metadata services (fd00:ec2::254)", refuse},
	{pfx("fe80::/10"), "link-local (RFC 4291)", refuse},
	{pfx("fec0::/10"), "site-local, deprecated (RFC 3879)", refuse},
	{pfx("ff00::/8"), "multicast (RFC 4291)", refuse},
}

// verdict is what a range says of the addresses in it.
type verdict int

const (
	// admit: a global unicast address.
	admit verdict = iota
	// refuse: not a global unicast address.
	refuse
	// embedsLast32: the address carries an IPv4 address in its last 32 bits (IPv4-mapped, NAT64),
	// which is judged instead.
	embedsLast32
	// embeds6to4: 2002:AABB:CCDD::, the IPv4 address AA.BB.CC.DD is judged.
	embeds6to4
	// embedsTeredo: the last 32 bits are the client's IPv4 address XOR 0xffffffff.
	embedsTeredo
)

// special is one range of the table.
type special struct {
	prefix  netip.Prefix
	name    string
	verdict verdict
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// rangeOf is the most specific range of the table that holds addr; the catch-alls make sure one
// does.
func rangeOf(addr netip.Addr) special {
	best := special{verdict: refuse, name: "not an IP address"}
	bits := -1
	for _, s := range specialRanges {
		if s.prefix.Bits() > bits && s.prefix.Contains(addr) {
			best, bits = s, s.prefix.Bits()
		}
	}
	return best
}

// embedded is the IPv4 address a range of the table says addr carries, and whether it carries one.
func embedded(addr netip.Addr, v verdict) (netip.Addr, bool) {
	b := addr.As16()
	var v4 [4]byte
	switch v {
	case embedsLast32:
		copy(v4[:], b[12:16])
	case embeds6to4:
		copy(v4[:], b[2:6])
	case embedsTeredo:
		for i := range v4 {
			v4[i] = b[12+i] ^ 0xff
		}
	default:
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(v4), true
}

// refusedAddress is a connection the policy refused, by the address a host resolved to.
type refusedAddress struct {
	addr netip.Addr
	// via is the range that made addr carry another address (NAT64, 6to4, Teredo, IPv4-mapped),
	// and inner that address; via is empty when addr itself was judged.
	via   special
	inner netip.Addr
	// in is the range that refused the address judged.
	in special
}

func (r *refusedAddress) Error() string {
	what := fmt.Sprintf("address %s is in %s, %s", r.addr, r.in.prefix, r.in.name)
	if r.inner.IsValid() {
		what = fmt.Sprintf("address %s carries the IPv4 address %s (%s, %s), which is in %s, %s",
			r.addr, r.inner, r.via.name, r.via.prefix, r.in.prefix, r.in.name)
	}
	return what + ": the operator's jar policy admits only global unicast addresses (jars.allowedNetworks admits a range on purpose)"
}

// judge returns nil for a global unicast address, and otherwise why it is refused. An address that
// carries an IPv4 address is judged by that IPv4 address.
func judge(addr netip.Addr) *refusedAddress {
	addr = addr.WithZone("")
	r := rangeOf(addr)
	switch r.verdict {
	case admit:
		return nil
	case refuse:
		return &refusedAddress{addr: addr, in: r}
	}
	inner, _ := embedded(addr, r.verdict)
	if refused := judge(inner); refused != nil {
		return &refusedAddress{addr: addr, via: r, inner: inner, in: refused.in}
	}
	return nil
}

// destinations are the addresses a connection to addr reaches, for jars.allowedNetworks: addr
// itself and, for an IPv4-mapped or NAT64 address, the IPv4 address it is translated to. (The
// IPv4 address of 6to4 and Teredo is a tunnel's end, not the host dialed, so it is not one.)
func destinations(addr netip.Addr) []netip.Addr {
	addr = addr.WithZone("")
	out := []netip.Addr{addr}
	if r := rangeOf(addr); r.verdict == embedsLast32 {
		inner, _ := embedded(addr, r.verdict)
		out = append(out, inner)
	}
	return out
}
