package jars

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notGlobal holds an address of every range that is not global unicast, with the range its refusal
// must name. Edges of ranges are included where a range was easy to get one bit wrong.
var notGlobal = []struct{ addr, names string }{
	// IPv4
	{"0.0.0.0", "0.0.0.0/8"},
	{"0.255.255.255", "0.0.0.0/8"},
	{"10.0.0.1", "10.0.0.0/8"},
	{"100.64.0.0", "100.64.0.0/10"},
	{"100.100.100.200", "100.64.0.0/10"}, // a cloud's metadata service
	{"100.127.255.255", "100.64.0.0/10"},
	{"127.0.0.1", "127.0.0.0/8"},
	{"127.255.255.254", "127.0.0.0/8"},
	{"169.254.169.254", "169.254.0.0/16"},
	{"172.16.0.1", "172.16.0.0/12"},
	{"172.31.255.255", "172.16.0.0/12"},
	{"192.0.0.1", "192.0.0.0/24"},
	{"192.0.0.8", "192.0.0.0/24"},
	{"192.0.0.9", "192.0.0.0/24"},
	{"192.0.0.170", "192.0.0.0/24"},
	{"192.0.2.1", "192.0.2.0/24"},
	{"192.88.99.1", "192.88.99.0/24"},
	{"192.168.1.1", "192.168.0.0/16"},
	{"198.18.0.1", "198.18.0.0/15"},
	{"198.19.255.255", "198.18.0.0/15"},
	{"198.51.100.7", "198.51.100.0/24"},
	{"203.0.113.7", "203.0.113.0/24"},
	{"224.0.0.1", "224.0.0.0/4"},
	{"239.255.255.250", "224.0.0.0/4"},
	{"240.0.0.1", "240.0.0.0/4"},
	{"255.255.255.255", "255.255.255.255/32"},
	// IPv6
	{"::", "::/128"},
	{"::1", "::1/128"},
	{"::a00:1", "::/96"},                // IPv4-compatible 10.0.0.1
	{"::ffff:127.0.0.1", "127.0.0.0/8"}, // IPv4-mapped
	{"::ffff:169.254.169.254", "169.254.0.0/16"},
	{"::ffff:100.64.0.1", "100.64.0.0/10"},
	{"64:ff9b::a00:1", "10.0.0.0/8"}, // NAT64 of 10.0.0.1
	{"64:ff9b::7f00:1", "127.0.0.0/8"},
	{"64:ff9b::a9fe:a9fe", "169.254.0.0/16"},
	{"64:ff9b::6440:1", "100.64.0.0/10"},
	{"64:ff9b::c612:1", "198.18.0.0/15"},
	{"64:ff9b:1::1", "64:ff9b:1::/48"},
	{"64:ff9b:1:ffff::808:808", "64:ff9b:1::/48"}, // local-use NAT64 is refused whatever it carries
	{"100::1", "100::/64"},
	{"100:0:0:1::1", "100:0:0:1::/64"},
	{"2001:1::1", "2001::/23"},
	{"2001:100::1", "2001::/23"},
	{"2001:1ff:ffff::1", "2001::/23"},
	{"2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.0/8"},     // Teredo, client 10.0.0.1
	{"2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.0/8"},    // Teredo, client 127.0.0.1
	{"2001:0:4136:e378:8000:63bf:5601:5601", "169.254.0.0/16"}, // Teredo, client 169.254.169.254
	{"2001:2::1", "2001:2::/48"},
	{"2001:10::1", "2001:10::/28"},
	{"2001:20::1", "2001:20::/28"},
	{"2001:30::1", "2001:30::/28"},
	{"2001:db8::1", "2001:db8::/32"},
	{"2002:a00:1::1", "10.0.0.0/8"}, // 6to4 behind 10.0.0.1
	{"2002:7f00:1::1", "127.0.0.0/8"},
	{"2002:a9fe:a9fe::1", "169.254.0.0/16"},
	{"2002:6440:1::1", "100.64.0.0/10"},
	{"3fff::1", "3fff::/20"},
	{"5f00::1", "5f00::/16"},
	{"fc00::1", "fc00::/7"},
	{"fd00:ec2::254", "fc00::/7"}, // a cloud's metadata service over IPv6
	{"fe80::1", "fe80::/10"},
	{"fe80::1%eth0", "fe80::/10"},
	{"fec0::1", "fec0::/10"},
	{"ff02::1", "ff00::/8"},
	{"ff0e::1", "ff00::/8"},
	{"4000::1", "::/0"}, // reserved by the IETF
}

// global are addresses that must pass, among them edges just outside refused ranges and addresses
// that carry a global IPv4 address.
var global = []string{
	"8.8.8.8",
	"1.1.1.1",
	"100.63.255.255",
	"100.128.0.0",
	"172.32.0.1",
	"192.0.1.1",
	"192.31.196.1", // AS112
	"192.52.193.1", // AMT
	"198.20.0.1",
	"223.255.255.255",
	"2606:4700:4700::1111",
	"2a00:1450:4001:82a::200e",
	"::ffff:8.8.8.8",
	"64:ff9b::808:808",                     // NAT64 of 8.8.8.8
	"2002:808:808::1",                      // 6to4 behind 8.8.8.8
	"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8
	"2001:3::1",                            // AMT
	"2001:4:112::1",                        // AS112-v6
	"2001:200::1",
	"2c0f:fb50:4003::1",
}

func dialed(addr string) string { return net.JoinHostPort(addr, "443") }

// Every address that is not global unicast is refused where the fetcher dials, with nothing but
// the default policy.
func TestEveryNonGlobalAddressIsRefused(t *testing.T) {
	f := fetcher(t, DefaultPolicy())
	for _, c := range notGlobal {
		err := f.checkAddress("tcp", dialed(c.addr), nil)
		var refused *refusedAddress
		assert.True(t, errors.As(err, &refused), "%s was admitted (err %v)", c.addr, err)
	}
	for _, addr := range global {
		assert.NoError(t, f.checkAddress("tcp", dialed(addr), nil), addr)
	}
}

// A refusal names the range that refused the address, and for an address that carries an IPv4
// address, that address.
func TestARefusalNamesTheRange(t *testing.T) {
	f := fetcher(t, DefaultPolicy())
	for _, c := range notGlobal {
		err := f.checkAddress("tcp", dialed(c.addr), nil)
		if assert.Error(t, err, c.addr) {
			assert.Contains(t, err.Error(), " "+c.names+",", c.addr)
		}
	}
	err := f.checkAddress("tcp", dialed("64:ff9b::a9fe:a9fe"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "carries the IPv4 address 169.254.169.254 (NAT64 well-known prefix (RFC 6052), 64:ff9b::/96)")
	err = f.checkAddress("tcp", dialed("2001:0:4136:e378:8000:63bf:f5ff:fffe"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "carries the IPv4 address 10.0.0.1 (Teredo")
}

// jars.allowedNetworks still admits a range on purpose: by the address dialed, and for an
// IPv4-mapped or NAT64 address by the IPv4 address it reaches. It admits nothing beside its range.
func TestAllowedNetworksAdmitARangeOnPurpose(t *testing.T) {
	f := fetcher(t, Policy{AllowedNetworks: []string{"100.64.0.0/10", "10.1.0.0/16", "fd00::/8", "64:ff9b:1::/48"}})
	for _, addr := range []string{"100.64.0.1", "::ffff:100.64.0.1", "10.1.2.3", "64:ff9b::a01:203", "fd00:ec2::254", "64:ff9b:1::a01:203"} {
		assert.NoError(t, f.checkAddress("tcp", dialed(addr), nil), addr)
	}
	for _, addr := range []string{"10.2.0.1", "64:ff9b::a02:1", "169.254.169.254", "fc00::1", "2002:a01:203::1"} {
		assert.Error(t, f.checkAddress("tcp", dialed(addr), nil), addr)
	}
}

// The check holds where the fetcher connects: a URL naming a refused address, and a redirect from
// an admitted server to one, are refused before any packet is sent, and stay refused. (Before,
// these were dialed: whatever answered there was fetched, and a timeout read as retryable.)
func TestARefusedAddressIsRefusedWhenDialedAndOnARedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://100.100.100.200/latest/meta-data/a.jar", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	f := fetcher(t, Policy{AllowHTTP: true, AllowedNetworks: []string{"127.0.0.1/32"}, Timeout: 3 * time.Second})
	for _, uri := range []string{
		"http://100.64.0.1/a.jar",
		"http://[64:ff9b::a9fe:a9fe]/latest/a.jar",
		"http://[2002:a00:1::1]/a.jar",
		srv.URL + "/redirect.jar",
	} {
		start := time.Now()
		_, err := f.Fetch(context.Background(), uri, "")
		require.Error(t, err, uri)
		assert.False(t, IsRetryable(err), "%s: %v", uri, err)
		assert.True(t, strings.Contains(err.Error(), "jar policy admits only global unicast"), "%s: %v", uri, err)
		assert.Less(t, time.Since(start), 2*time.Second, "%s was refused before dialing", uri)
	}
}
