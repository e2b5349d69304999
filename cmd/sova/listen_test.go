package main

import (
	"net"
	"strings"
	"testing"
)

func TestListenScope(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		exposed bool
		says    string
	}{
		{"127.0.0.1", false, "this machine only"},
		{"127.0.0.2", false, "this machine only"},
		{"::1", false, "this machine only"},
		{"0.0.0.0", true, "all interfaces"},
		{"::", true, "all interfaces"},
		{"192.168.1.5", true, "listening on 192.168.1.5 without authentication"},
		{"fd00::5", true, "listening on fd00::5 without authentication"},
	} {
		exposed, msg := listenScope(&net.TCPAddr{IP: net.ParseIP(tc.ip), Port: 8080})
		if exposed != tc.exposed || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: %v %q, want %v and %q", tc.ip, exposed, msg, tc.exposed, tc.says)
		}
	}
}
