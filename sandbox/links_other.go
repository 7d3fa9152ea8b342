//go:build !unix

package sandbox

import "os"

func hardLinks(os.FileInfo) uint64 { return 1 }

func writableByCaller(string) bool { return false }

func ownedByCaller(os.FileInfo) bool { return false }

func ownerOf(os.FileInfo) string { return "another user" }

func othersMayChange(string) string { return "fence cannot tell who may change it on this system" }
