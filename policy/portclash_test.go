package policy

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadPortClash: a port the init would listen on twice inside the
// sandbox (a proxy's and a relayed local port, or both proxies') is a
// config error at the file, line and column that made the clash, also
// when the two halves come from different files of the chain.
func TestLoadPortClash(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string // "" for no error
	}{
		{"local port on the default HTTP proxy port",
			map[string]string{"work/fence.jsonc": "{\"network\": {\n  \"allowLocalOutbound\": true,\n  \"allowLocalOutboundPorts\": [5432, 3128]}}"},
			`R/work/fence.jsonc:3:37: network.allowLocalOutboundPorts[1]: port 3128 is the HTTP proxy's port inside the sandbox (network.httpProxyPort, 3128 unless set), where a host port cannot be relayed too: set network.httpProxyPort to another port`},
		{"local port on a SOCKS port set in the same file",
			map[string]string{"work/fence.jsonc": `{"network": {"socksProxyPort": 5432, "allowLocalOutboundPorts": [5432]}}`},
			`R/work/fence.jsonc:1:66: network.allowLocalOutboundPorts[0]: port 5432 is the SOCKS5 proxy's port inside the sandbox (network.socksProxyPort, 1080 unless set), where a host port cannot be relayed too: set network.socksProxyPort to another port`},
		{"a child's proxy port on its parent's local port",
			map[string]string{
				"work/fence.jsonc": `{"extends": "./base.jsonc", "network": {"httpProxyPort": 8080}}`,
				"work/base.jsonc":  `{"network": {"allowLocalOutboundPorts": [8080]}}`,
			},
			`R/work/fence.jsonc:1:58: network.httpProxyPort: port 8080 is the HTTP proxy's port inside the sandbox (network.httpProxyPort, 3128 unless set), where a host port cannot be relayed too: set network.httpProxyPort to another port`},
		{"both proxies on one port",
			map[string]string{"work/fence.jsonc": `{"network": {"httpProxyPort": 1080}}`},
			`R/work/fence.jsonc:1:31: network.httpProxyPort: port 1080 is both proxies' port inside the sandbox: give network.httpProxyPort and network.socksProxyPort different ports`},
		{"moved proxy frees its default port",
			map[string]string{"work/fence.jsonc": `{"network": {"httpProxyPort": 8118, "allowLocalOutboundPorts": [3128]}}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tree(t, tt.files)
			_, err := Load(o)
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), filepath.Dir(o.Dir), "R")
			}
			if got != tt.want {
				t.Errorf("Load error =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}
