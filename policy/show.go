package policy

import (
	"bytes"
	"encoding/json"
)

// JSON renders c as `fence config show` prints it: two-space indent, a
// trailing newline, and no empty, false or zero fields.
// An upstreamProxy's credentials print as "***".
func (c Config) JSON() []byte {
	c.Network.UpstreamProxy = RedactProxyURL(c.Network.UpstreamProxy)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		panic("policy: BUG: config does not encode: " + err.Error())
	}
	return b.Bytes()
}
