//go:build linux && amd64

package startlimit

const sysPrlimit64 = 302
