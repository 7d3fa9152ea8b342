//go:build linux && arm64

package startlimit

const sysPrlimit64 = 261
