package proxy

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"testing"
)

// clientHello is the first record crypto/tls sends for serverName (no
// SNI when it is empty or an address), a real ClientHello of today.
func clientHello(tb testing.TB, serverName string) []byte {
	tb.Helper()
	c, s := net.Pipe()
	defer s.Close()
	go func() {
		defer c.Close()
		tls.Client(c, &tls.Config{ServerName: serverName, InsecureSkipVerify: true}).Handshake()
	}()
	hdr := make([]byte, recordHeaderLen)
	if _, err := io.ReadFull(s, hdr); err != nil {
		tb.Fatal(err)
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(s, body); err != nil {
		tb.Fatal(err)
	}
	return append(hdr, body...)
}

// reframe splits the handshake message of the one record rec into
// records of at most size bytes, as a client may.
func reframe(rec []byte, size int) []byte {
	var out []byte
	for msg := rec[recordHeaderLen:]; len(msg) > 0; {
		n := min(size, len(msg))
		out = append(out, recordTypeHello, 3, 1, byte(n>>8), byte(n))
		out, msg = append(out, msg[:n]...), msg[n:]
	}
	return out
}

// buildHello makes a minimal ClientHello record whose server_name
// extension holds names; with raw, the extensions are raw instead.
func buildHello(names []string, raw []byte) []byte {
	u16 := func(n int) []byte { return []byte{byte(n >> 8), byte(n)} }
	exts := raw
	if raw == nil && names != nil {
		var list []byte
		for _, n := range names {
			list = append(append(append(list, 0), u16(len(n))...), n...)
		}
		sni := append(u16(len(list)), list...)
		exts = append(append(u16(extServerName), u16(len(sni))...), sni...)
	}
	body := append([]byte{3, 3}, make([]byte, 32)...)
	body = append(body, 0, 0, 2, 0x13, 0x01, 1, 0) // no session id, one suite, null compression
	if exts != nil {
		body = append(append(body, u16(len(exts))...), exts...)
	}
	msg := append([]byte{typeClientHello, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	return append([]byte{recordTypeHello, 3, 1, byte(len(msg) >> 8), byte(len(msg))}, msg...)
}

// feedAll feeds stream to a new helloReader in pieces of chunk bytes
// (all at once when chunk is 0) and returns where it stopped.
func feedAll(stream []byte, chunk int) (helloState, []string, error) {
	var h helloReader
	if chunk == 0 {
		chunk = max(len(stream), 1)
	}
	for len(stream) > 0 {
		n := min(chunk, len(stream))
		state, err := h.feed(stream[:n])
		if state != helloMore || err != nil {
			return state, h.names, err
		}
		stream = stream[n:]
	}
	return helloMore, h.names, nil
}

func TestHelloReader(t *testing.T) {
	real := clientHello(t, "api.example.com")
	extra := buildHello(nil, nil) // a record one byte longer than its message
	extra[4]++
	extra = append(extra, 0)
	tests := []struct {
		name   string
		stream []byte
		state  helloState
		names  []string
		bad    bool
	}{
		{"crypto/tls hello", real, helloDone, []string{"api.example.com"}, false},
		{"no SNI", clientHello(t, ""), helloDone, nil, false},
		{"address, so no SNI", clientHello(t, "127.0.0.1"), helloDone, nil, false},
		{"split into records of 100 bytes", reframe(real, 100), helloDone, []string{"api.example.com"}, false},
		{"split into records of 1 byte", reframe(real, 1), helloDone, []string{"api.example.com"}, false},
		{"early data after the hello", append(slices.Clone(real), 0x17, 3, 3, 0, 3, 'a', 'b', 'c'), helloDone, []string{"api.example.com"}, false},
		{"two names", buildHello([]string{"a.test", "b.test"}, nil), helloDone, []string{"a.test", "b.test"}, false},
		{"minimal, no extensions", buildHello(nil, nil), helloDone, nil, false},
		{"other name type skipped", buildHello(nil, []byte{0, 0, 0, 7, 0, 5, 1, 0, 2, 'x', 'y'}), helloDone, nil, false},
		{"half a hello", real[:len(real)/2], helloMore, nil, false},
		{"a record header only", real[:3], helloMore, nil, false},
		{"plain HTTP", []byte("GET / HTTP/1.1\r\n\r\n"), helloNone, nil, false},
		{"ssh", []byte("SSH-2.0-OpenSSH_9.6\r\n"), helloNone, nil, false},
		{"alert record first", []byte{0x15, 3, 1, 0, 2, 1, 0x5a}, 0, nil, true}, // a Go server skips it and reads the hello behind
		{"change_cipher_spec first", []byte{0x14, 3, 3, 0, 1, 1}, 0, nil, true},
		{"byte past the TLS types", []byte{0x19, 3, 3, 0, 1, 1}, helloNone, nil, false},
		{"not version 3", []byte{0x16, 4, 1, 0, 5, 1, 0, 0, 1, 0}, 0, nil, true},
		{"empty record", []byte{0x16, 3, 1, 0, 0}, 0, nil, true},
		{"record too long", []byte{0x16, 3, 1, 0x40, 1}, 0, nil, true},
		{"not a ClientHello", []byte{0x16, 3, 1, 0, 4, 2, 0, 0, 0}, 0, nil, true},
		{"hello too long", []byte{0x16, 3, 1, 0, 4, 1, 0x02, 0, 0}, 0, nil, true},
		{"alert inside the hello", append(reframe(real, 100)[:105], 0x15, 3, 3, 0, 2, 2, 40), 0, nil, true},
		{"truncated body", buildHello(nil, []byte{0, 0}), 0, nil, true},
		{"bad server_name list", buildHello(nil, []byte{0, 0, 0, 4, 0, 9, 0, 0}), 0, nil, true},
		{"bytes after the hello's message", extra, 0, nil, true},
	}
	for _, tt := range tests {
		for _, chunk := range []int{0, 1, 7, 1000} {
			state, names, err := feedAll(tt.stream, chunk)
			if tt.bad != (err != nil) || !tt.bad && (state != tt.state || !slices.Equal(names, tt.names)) {
				t.Errorf("%s, fed %d bytes at a time: %v %q %v, want %v %q (error %v)", tt.name, chunk, state, names, err, tt.state, tt.names, tt.bad)
			}
			if err != nil && !errors.Is(err, errHello) {
				t.Errorf("%s: error %v is not errHello", tt.name, err)
			}
		}
	}
}
