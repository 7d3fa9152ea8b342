package cmd

import (
	"encoding/binary"
	"errors"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// An entry keeps its reads packed: for each observation its operation,
// path and digest, each a uvarint length and the bytes. Unpacked, all
// three are slices of one string, so that a hit's thousand reads cost one
// allocation, not three thousand.

// packReads packs obs.
func packReads(obs []inputs.Observation) []byte {
	var b []byte
	for _, o := range obs {
		for _, s := range []string{o.Op, o.Path, o.Seen} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	return b
}

// unpackReads is what packReads packed.
func unpackReads(b []byte) ([]inputs.Observation, error) {
	all := string(b)
	var obs []inputs.Observation
	for at := 0; at < len(b); {
		var f [3]string
		for i := range f {
			n, w := binary.Uvarint(b[at:])
			if w <= 0 || n > uint64(len(b)-at-w) {
				return nil, errors.New("the entry's reads are cut short")
			}
			at += w
			f[i] = all[at : at+int(n)]
			at += int(n)
		}
		obs = append(obs, inputs.Observation{Op: f[0], Path: f[1], Seen: f[2]})
	}
	return obs, nil
}
