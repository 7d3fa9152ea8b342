package cmd

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
)

// Every entry is sealed (AES-256-GCM, the entry's name bound in) with a
// key only fence can read (see sealKey), and checked when opened: the
// cache directory may be one the command can write (~/.cache is writable
// under most templates), but a command can neither read an entry, which
// holds the environment of its run, nor make one that opens. An old
// entry put back is harmless: it opens only under its own name, and a hit
// still checks every read it noted against the disk as it is.

// planCacheKeySize is the key's length: AES-256.
const planCacheKeySize = 32

// seal encrypts and authenticates plain for the entry of name.
func seal(key []byte, name string, plain []byte) ([]byte, error) {
	aead, err := entryCipher(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	rand.Read(nonce)
	return aead.Seal(nonce, nonce, plain, []byte(planCacheFormat+name)), nil
}

// unseal is what seal sealed for the entry of name, or an error when
// the bytes were not sealed with key for that entry.
func unseal(key []byte, name string, sealed []byte) ([]byte, error) {
	aead, err := entryCipher(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("cut short")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(planCacheFormat+name))
	if err != nil {
		return nil, errors.New("not sealed with this user's plan cache key")
	}
	return plain, nil
}

func entryCipher(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
