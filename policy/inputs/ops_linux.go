package inputs

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"

	"golang.org/x/sys/unix"
)

// OpInodes is a listing read with getdents: names, kinds and inode
// numbers (see Inodes).
const OpInodes = "inodes"

func init() { registerListing(OpInodes, inodesSeen) }

// Inodes digests a directory listing read with getdents, entry by
// entry in the kernel's order: a caller that reads a directory that way
// for speed adds each entry and notes the sum with NoteInodes.
type Inodes struct {
	h     hash.Hash
	stamp string // dirStamp, taken before the listing
}

// NewInodes starts a digest of the listing of dir, about to be read;
// nil when nothing records.
func NewInodes(dir string) *Inodes {
	if !Recording() {
		return nil
	}
	return &Inodes{h: sha256.New(), stamp: dirStamp(dir)}
}

// Add adds an entry: its name, inode number and kind.
func (d *Inodes) Add(name []byte, ino uint64, typ byte) {
	if d == nil {
		return
	}
	var b [9]byte
	binary.LittleEndian.PutUint64(b[:], ino)
	b[8] = typ
	d.h.Write(name)
	d.h.Write([]byte{0})
	d.h.Write(b[:])
}

// NoteInodes notes the listing of dir that d summed.
func NoteInodes(dir string, d *Inodes) {
	if d != nil {
		Note(OpInodes, dir, listingSeen(d.stamp, hex.EncodeToString(d.h.Sum(nil)[:16])))
	}
}

// InodesError is the digest of a listing that could not be read.
func InodesError(err error) string { return listingSeen("", errSeen(err)) }

// inodesSeen lists dir again with getdents, as the caller did.
func inodesSeen(dir string) string {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errSeen(err)
	}
	defer unix.Close(fd)
	d := &Inodes{h: sha256.New()}
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return errSeen(err)
		}
		if n <= 0 {
			return hex.EncodeToString(d.h.Sum(nil)[:16])
		}
		if err := eachDirent(buf[:n], d.Add); err != nil {
			return fmt.Sprint("error ", err)
		}
	}
}

// eachDirent calls add for every entry of a getdents64 buffer.
func eachDirent(buf []byte, add func(name []byte, ino uint64, typ byte)) error {
	for off := 0; off+19 <= len(buf); {
		ino := binary.NativeEndian.Uint64(buf[off:])
		reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
		if reclen == 0 || off+reclen > len(buf) {
			return fmt.Errorf("bad dirent")
		}
		name := buf[off+19 : off+reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		add(name, ino, buf[off+18])
		off += reclen
	}
	return nil
}
