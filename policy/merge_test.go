package policy

import (
	"fmt"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestMerge(t *testing.T) {
	tests := []struct {
		name          string
		parent, child Config
		want          Config
	}{
		{"lists append and de-duplicate in order",
			Config{Filesystem: Filesystem{DenyRead: []string{"a", "b"}}},
			Config{Filesystem: Filesystem{DenyRead: []string{"c", "a", "c"}}},
			Config{Filesystem: Filesystem{DenyRead: []string{"a", "b", "c"}}}},
		{"int lists too",
			Config{Network: Network{AllowLocalOutboundPorts: []int{80, 443}}},
			Config{Network: Network{AllowLocalOutboundPorts: []int{443, 8080}}},
			Config{Network: Network{AllowLocalOutboundPorts: []int{80, 443, 8080}}}},
		{"empty lists become nil",
			Config{Filesystem: Filesystem{AllowRead: []string{}}},
			Config{},
			Config{}},
		{"booleans OR: child cannot turn off",
			Config{AllowPty: true, Network: Network{AllowLocalBinding: ptr(true)}},
			Config{},
			Config{AllowPty: true, Network: Network{AllowLocalBinding: ptr(true)}}},
		{"booleans OR: child can turn on",
			Config{},
			Config{SSH: SSH{InheritDeny: true}},
			Config{SSH: SSH{InheritDeny: true}}},
		{"nullable: child wins when set",
			Config{Command: Command{UseDefaults: ptr(true)}},
			Config{Command: Command{UseDefaults: ptr(false)}},
			Config{Command: Command{UseDefaults: ptr(false)}}},
		{"nullable: unset child keeps parent",
			Config{Network: Network{AllowLocalOutbound: ptr(false)}},
			Config{},
			Config{Network: Network{AllowLocalOutbound: ptr(false)}}},
		{"strings: child wins when set",
			Config{Devices: Devices{Mode: "host"}},
			Config{Devices: Devices{Mode: "minimal"}},
			Config{Devices: Devices{Mode: "minimal"}}},
		{"strings: empty child keeps parent",
			Config{Devices: Devices{Mode: "host"}},
			Config{},
			Config{Devices: Devices{Mode: "host"}}},
		{"ints: child wins when non-zero",
			Config{Network: Network{HTTPProxyPort: 3128, SocksProxyPort: 1080}},
			Config{Network: Network{HTTPProxyPort: 8080}},
			Config{Network: Network{HTTPProxyPort: 8080, SocksProxyPort: 1080}}},
		{"extends and $schema never survive",
			Config{Extends: "code", Schema: "s"},
			Config{Extends: "@base", Schema: "t"},
			Config{}},
		{"strictDenyRead implies defaultDenyRead",
			Config{},
			Config{Filesystem: Filesystem{StrictDenyRead: true}},
			Config{Filesystem: Filesystem{StrictDenyRead: true, DefaultDenyRead: true}}},
	}
	for _, tt := range tests {
		got := Merge(tt.parent, tt.child)
		if string(got.JSON()) != string(tt.want.JSON()) {
			t.Errorf("%s: Merge =\n%s\nwant\n%s", tt.name, got.JSON(), tt.want.JSON())
		}
	}
}

// TestMergeDoesNotAlias checks that the result shares no memory with its
// inputs, so that editing a resolved config cannot change a template.
func TestMergeDoesNotAlias(t *testing.T) {
	parent := Config{Filesystem: Filesystem{DenyRead: []string{"a"}}, Command: Command{UseDefaults: ptr(true)}}
	got := Merge(parent, Config{})
	got.Filesystem.DenyRead[0] = "changed"
	*got.Command.UseDefaults = false
	if parent.Filesystem.DenyRead[0] != "a" || !*parent.Command.UseDefaults {
		t.Errorf("Merge result aliases its parent: %+v", parent)
	}
}

func TestConfigJSON(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{}, "{}\n"},
		{Config{Network: Network{AllowLocalOutbound: ptr(false)}}, "{\n  \"network\": {\n    \"allowLocalOutbound\": false\n  }\n}\n"},
		{Config{Filesystem: Filesystem{DenyWrite: []string{"a&b<c>"}}}, "{\n  \"filesystem\": {\n    \"denyWrite\": [\n      \"a&b<c>\"\n    ]\n  }\n}\n"},
		{Config{MacOS: MacOS{Mach: Mach{Lookup: []string{"com.apple.x"}}}}, "{\n  \"macos\": {\n    \"mach\": {\n      \"lookup\": [\n        \"com.apple.x\"\n      ]\n    }\n  }\n}\n"},
	}
	for _, tt := range tests {
		if got := string(tt.cfg.JSON()); got != tt.want {
			t.Errorf("JSON(%s) =\n%q\nwant\n%q", fmt.Sprintf("%+v", tt.cfg), got, tt.want)
		}
	}
}
