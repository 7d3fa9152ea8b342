package sandbox

import (
	"slices"
	"testing"
)

func TestPinAncestors(t *testing.T) {
	tests := []struct {
		name   string
		mounts Mounts
		want   []string // the writable binds after pinning, in order
	}{
		{"mask deep in a writable tree",
			Mounts{Binds: []Bind{{Path: "/w", Write: true}}, Masks: []Mask{{Path: "/w/a/b/secret"}}},
			[]string{"/w", "/w/a", "/w/a/b"}},
		{"read-only bind in a writable tree",
			Mounts{Binds: []Bind{{Path: "/w", Write: true}, {Path: "/w/.git/hooks"}}},
			[]string{"/w", "/w/.git"}},
		{"direct child of the writable root needs no pin",
			Mounts{Binds: []Bind{{Path: "/w", Write: true}, {Path: "/w/.vscode"}}},
			[]string{"/w"}},
		{"inside a read-only bind nothing moves",
			Mounts{Binds: []Bind{{Path: "/w", Write: true}, {Path: "/w/ro"}}, Masks: []Mask{{Path: "/w/ro/x/secret"}}},
			[]string{"/w"}},
		{"outside every writable bind nothing moves",
			Mounts{Binds: []Bind{{Path: "/w", Write: true}}, Masks: []Mask{{Path: "/home/u/.ssh"}}},
			[]string{"/w"}},
		{"the nearest writable bind bounds the pins",
			Mounts{Binds: []Bind{{Path: "/w", Write: true}, {Path: "/w/a/b", Write: true}}, Masks: []Mask{{Path: "/w/a/b/c/secret"}}},
			[]string{"/w", "/w/a/b", "/w/a/b/c"}},
		{"shared ancestors are pinned once",
			Mounts{Binds: []Bind{{Path: "/w", Write: true}}, Masks: []Mask{{Path: "/w/a/x"}, {Path: "/w/a/y"}}},
			[]string{"/w", "/w/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.mounts
			pinAncestors(&m, nil, nil)
			var got []string
			for _, b := range m.Binds {
				if b.Write {
					got = append(got, b.Path)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("writable binds = %q, want %q", got, tt.want)
			}
		})
	}
}
