package policy

import (
	"bytes"
	"testing"
)

// FuzzParse feeds the loader arbitrary bytes. It must never panic, and any
// config it accepts must survive a round trip through `config show` JSON:
// what fence prints, fence reads back as the same policy.
func FuzzParse(f *testing.F) {
	for _, t := range Templates() {
		f.Add(t.Source)
	}
	f.Add([]byte(``))
	f.Add([]byte(`// c`))
	f.Add([]byte(`{"network": {"allowLocalOutboundPorts": [1, 65535], "allowLocalOutbound": null}}`))
	f.Add([]byte(`{"filesystem": {"allowRead": ["~/x", "[a-z]/**"]}, "macos": {"mach": {"lookup": ["com.*"]}}}`))
	f.Add([]byte(`{"devices": {"mode": "host", "allow": ["/dev/kvm"]}, "command": {"useDefaults": false}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := parseValid("fuzz", src)
		if err != nil {
			if _, ok := err.(*FileError); !ok {
				t.Fatalf("error is not a *FileError: %T %v", err, err)
			}
			return
		}
		once := Merge(Config{}, p.cfg).JSON()
		again, err := parseValid("shown", once)
		if err != nil {
			t.Fatalf("shown config does not load: %v\n%s", err, once)
		}
		if twice := Merge(Config{}, again.cfg).JSON(); !bytes.Equal(once, twice) {
			t.Fatalf("round trip changed the config:\n%s\nthen\n%s", once, twice)
		}
	})
}
