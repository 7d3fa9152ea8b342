package proxy

import (
	"errors"
	"fmt"
)

// The TLS record and handshake framing a ClientHello arrives in (RFC 8446
// sections 4 and 5.1, the same since SSL 3.0).
const (
	recordHeaderLen    = 5
	recordTypeHello    = 0x16 // handshake
	recordTypeFirst    = 20   // change_cipher_spec, the lowest TLS record type
	recordTypeLast     = 24   // heartbeat, the highest
	maxRecordLen       = 1 << 14
	handshakeHeaderLen = 4
	typeClientHello    = 1
	extServerName      = 0
	// maxHelloLen bounds the ClientHello fence reads: today's are 2 KB or
	// less (with post-quantum key shares); 64 KB leaves room for large
	// session tickets and many extensions.
	maxHelloLen = 64 << 10
)

// helloState is how far a helloReader has come.
type helloState int

const (
	helloMore helloState = iota // needs more bytes
	helloNone                   // the stream is not TLS: nothing to inspect
	helloDone                   // the ClientHello is read: names holds its SNI
)

// errHello is a stream that starts as TLS but is not a ClientHello fence
// can read; the tunnel is closed rather than left uninspected.
var errHello = errors.New("starts as a TLS handshake that is not a well-formed ClientHello")

// helloReader reads the first TLS ClientHello of a stream, fed as it
// arrives: across TCP segments and across records, up to maxHelloLen.
// Memory is bounded by maxHelloLen and one record. It keeps nothing the
// caller must pass on: the caller forwards what it fed, unchanged.
type helloReader struct {
	pending []byte // the part of a record header or body not yet complete
	hs      []byte // the handshake message bytes so far
	seen    int    // bytes fed
	names   []string
}

// feed takes the next bytes of the stream and says whether the
// ClientHello is complete, or the stream is not TLS, or (as an error) is
// TLS fence cannot read.
func (h *helloReader) feed(p []byte) (helloState, error) {
	// Any TLS record type (change_cipher_spec 20 to heartbeat 24) begins
	// TLS, and only a handshake record may come first: a server may skip
	// a warning alert sent before the hello (Go's does), which would
	// otherwise carry an uninspected hello behind it.
	if h.seen == 0 && len(p) > 0 && (p[0] < recordTypeFirst || p[0] > recordTypeLast) {
		return helloNone, nil
	}
	h.seen += len(p)
	h.pending = append(h.pending, p...)
	for len(h.pending) >= recordHeaderLen {
		typ, major, n := h.pending[0], h.pending[1], int(h.pending[3])<<8|int(h.pending[4])
		if typ != recordTypeHello || major != 3 || n == 0 || n > maxRecordLen {
			return 0, fmt.Errorf("%w: a record of type %d, version %d.x, length %d", errHello, typ, major, n)
		}
		if len(h.pending) < recordHeaderLen+n {
			return helloMore, nil
		}
		h.hs = append(h.hs, h.pending[recordHeaderLen:recordHeaderLen+n]...)
		h.pending = h.pending[recordHeaderLen+n:]
		if state, err := h.message(); state != helloMore || err != nil {
			return state, err
		}
	}
	return helloMore, nil
}

// message parses the handshake message once it is all there.
func (h *helloReader) message() (helloState, error) {
	if len(h.hs) < handshakeHeaderLen {
		return helloMore, nil
	}
	if h.hs[0] != typeClientHello {
		return 0, fmt.Errorf("%w: handshake message type %d", errHello, h.hs[0])
	}
	n := int(h.hs[1])<<16 | int(h.hs[2])<<8 | int(h.hs[3])
	if n > maxHelloLen {
		return 0, fmt.Errorf("%w: a ClientHello of %d bytes, more than %d", errHello, n, maxHelloLen)
	}
	if len(h.hs) < handshakeHeaderLen+n {
		return helloMore, nil
	}
	if len(h.hs) > handshakeHeaderLen+n {
		return 0, fmt.Errorf("%w: more handshake bytes after the ClientHello", errHello)
	}
	names, err := serverNames(h.hs[handshakeHeaderLen:])
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errHello, err)
	}
	h.names = names
	return helloDone, nil
}

// serverNames reads the host names of the server_name extensions of a
// ClientHello body (RFC 8446 4.1.2, RFC 6066 section 3). The body must be
// well formed to its last byte.
func serverNames(body []byte) ([]string, error) {
	r := reader(body)
	if !r.skip(2+32) || !r.skipVec(1) || !r.skipVec(2) || !r.skipVec(1) {
		return nil, errors.New("truncated before the extensions")
	}
	if len(r) == 0 {
		return nil, nil // no extensions
	}
	exts, ok := r.vec(2)
	if !ok || len(r) != 0 {
		return nil, errors.New("bad extensions length")
	}
	var names []string
	for len(exts) > 0 {
		typ, ok1 := exts.uint16()
		data, ok2 := exts.vec(2)
		if !ok1 || !ok2 {
			return nil, errors.New("truncated extension")
		}
		if typ != extServerName {
			continue
		}
		list, ok := data.vec(2)
		if !ok || len(data) != 0 {
			return nil, errors.New("bad server_name extension")
		}
		for len(list) > 0 {
			kind, ok1 := list.uint8()
			name, ok2 := list.vec(2)
			if !ok1 || !ok2 {
				return nil, errors.New("truncated server name")
			}
			if kind == 0 { // host_name
				names = append(names, string(name))
			}
		}
	}
	return names, nil
}

// reader reads big-endian fields and length-prefixed vectors off the
// front of a byte slice; every read says whether the bytes were there.
type reader []byte

func (r *reader) skip(n int) bool {
	if len(*r) < n {
		return false
	}
	*r = (*r)[n:]
	return true
}

func (r *reader) uint8() (int, bool) {
	if len(*r) < 1 {
		return 0, false
	}
	v := int((*r)[0])
	*r = (*r)[1:]
	return v, true
}

func (r *reader) uint16() (int, bool) {
	if len(*r) < 2 {
		return 0, false
	}
	v := int((*r)[0])<<8 | int((*r)[1])
	*r = (*r)[2:]
	return v, true
}

// vec reads a vector whose length is a prefix of size bytes (1 or 2).
func (r *reader) vec(size int) (reader, bool) {
	var n int
	var ok bool
	if size == 1 {
		n, ok = r.uint8()
	} else {
		n, ok = r.uint16()
	}
	if !ok || len(*r) < n {
		return nil, false
	}
	v := (*r)[:n]
	*r = (*r)[n:]
	return v, true
}

func (r *reader) skipVec(size int) bool {
	_, ok := r.vec(size)
	return ok
}
