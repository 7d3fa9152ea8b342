package cmd

import (
	"fmt"
	"strconv"
	"strings"
)

// Gemini CLI's web_fetch takes the URLs to fetch from its prompt: a
// release takes each whitespace-separated word a URL parser (WHATWG, as
// browsers) reads as http or https, an older one every run of
// non-spaces after "http://" or "https://". fence takes more than either:
// every "http:" or "https:", in any case, up to the next ASCII control
// character or JavaScript whitespace (what Gemini splits on: U+00A0,
// U+3000, U+2028, U+FEFF and the like too), and it reads the host as a
// WHATWG parser would. A URL whose host it cannot read that way (any
// non-ASCII character before its path, percent-escapes) is refused
// rather than guessed at.

// promptURLs are the URLs a web_fetch prompt may hold, and for a GitHub
// file page the raw.githubusercontent.com address web_fetch fetches
// instead.
func promptURLs(prompt string) []string {
	lower := asciiLower(prompt)
	var urls []string
	for i := 0; i < len(lower); i++ {
		if !strings.HasPrefix(lower[i:], "http:") && !strings.HasPrefix(lower[i:], "https:") {
			continue
		}
		u := prompt[i:urlEnd(prompt, i)]
		urls = append(urls, u)
		if strings.Contains(u, "github.com") && strings.Contains(u, "/blob/") {
			raw := strings.Replace(strings.Replace(u, "github.com", "raw.githubusercontent.com", 1), "/blob/", "/", 1)
			urls = append(urls, raw)
		}
	}
	return urls
}

// urlEnd is where the URL starting at i in prompt ends: at the first
// ASCII control character or rune JavaScript's /\s/ takes for a space
// (Gemini splits the prompt on those, U+00A0, U+3000 and U+FEFF among
// them), or at the end.
func urlEnd(prompt string, i int) int {
	for j, r := range prompt[i:] {
		if r < ' ' || r == 0x7f || jsSpace(r) {
			return i + j
		}
	}
	return len(prompt)
}

// asciiLower lowercases the ASCII letters of s, keeping its length.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// fetchTarget is the scheme, host and port a URL reaches, as a WHATWG
// parser reads them (backslashes as slashes, any number of slashes after
// the scheme, the host after the last @, numeric IPv4 forms; the
// punctuation of prose after the host dropped), written as
// a URL fence check reads the same way; "" for a URL without a host,
// which no parser fetches.
func fetchTarget(raw string) (string, error) {
	scheme, rest, _ := strings.Cut(raw, ":")
	scheme = asciiLower(scheme)
	rest = strings.TrimLeft(strings.ReplaceAll(rest, `\`, "/"), "/")
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if i := strings.IndexFunc(authority, func(r rune) bool { return r >= 0x80 }); i >= 0 {
		// Parsers disagree on where such a rune ends the URL or its
		// userinfo: fence does not guess which host is reached.
		return "", fmt.Errorf("cannot tell which host %q reaches (a non-ASCII character before its path), so the fetch is refused", raw)
	}
	// Prose puts a URL in brackets or ends a sentence with it: what
	// trails the host is no part of a host any resolver finds.
	hostport := strings.TrimRight(authority[strings.LastIndexByte(authority, '@')+1:], `).,;:!?'"}>*`)
	if hostport == "" {
		return "", nil // no host: no parser fetches it
	}
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return "", fmt.Errorf("cannot tell which host %q reaches (%v), so the fetch is refused", raw, err)
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host + "/", nil
}

// splitHostPort splits a URL's host and port, and checks the host is one
// fence reads as Gemini does: ASCII letters, digits, dots, dashes and
// underscores, or an IPv6 literal; a numeric last label makes it IPv4.
func splitHostPort(hostport string) (string, string, error) {
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", "", fmt.Errorf("an IPv6 host without its ]")
		}
		host, port = hostport[:end+1], strings.TrimPrefix(hostport[end+1:], ":")
		if strings.Trim(host[1:end], "0123456789abcdefABCDEF:.") != "" {
			return "", "", fmt.Errorf("an IPv6 host %s fence cannot read", host)
		}
	} else if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		host, port = hostport[:i], hostport[i+1:]
	}
	if strings.Trim(port, "0123456789") != "" {
		return "", "", fmt.Errorf("the port %q is not a number", port)
	}
	if strings.HasPrefix(host, "[") {
		return host, port, nil
	}
	host = strings.TrimRight(asciiLower(host), ".")
	if host == "" || strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "" {
		return "", "", fmt.Errorf("the host %q is not plain ASCII letters, digits, dots and dashes", host)
	}
	if labels := strings.Split(host, "."); numericLabel(labels[len(labels)-1]) {
		ip, err := whatwgIPv4(labels)
		if err != nil {
			return "", "", err
		}
		host = ip
	}
	return host, port, nil
}

// numericLabel reports whether a host's last label makes it an IPv4
// address for a WHATWG parser: all digits, or 0x and hex digits.
func numericLabel(l string) bool {
	if h, ok := strings.CutPrefix(l, "0x"); ok {
		return strings.Trim(h, "0123456789abcdef") == ""
	}
	return l != "" && strings.Trim(l, "0123456789") == ""
}

// whatwgIPv4 reads an IPv4 host as a WHATWG parser does: one to four
// parts, each decimal, octal (leading 0) or hex (0x), the last filling
// the bytes the others leave.
func whatwgIPv4(parts []string) (string, error) {
	if len(parts) > 4 {
		return "", fmt.Errorf("an IPv4 host of %d parts", len(parts))
	}
	var n []uint64
	for _, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		v := uint64(0)
		if digits != "" {
			var err error
			if v, err = strconv.ParseUint(digits, base, 64); err != nil {
				return "", fmt.Errorf("an IPv4 part %q fence cannot read", p)
			}
		}
		n = append(n, v)
	}
	last := n[len(n)-1]
	if last >= 1<<(8*(5-len(n))) {
		return "", fmt.Errorf("an IPv4 host out of range")
	}
	addr := last
	for i, v := range n[:len(n)-1] {
		if v > 255 {
			return "", fmt.Errorf("an IPv4 host out of range")
		}
		addr += v << (8 * (3 - i))
	}
	return fmt.Sprintf("%d.%d.%d.%d", addr>>24, addr>>16&255, addr>>8&255, addr&255), nil
}
