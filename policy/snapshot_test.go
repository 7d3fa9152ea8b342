package policy

import (
	"fmt"
	"reflect"
	"testing"
)

// TestSnapshotRoundTrip: for every builtin template, with command rules
// (globs among them), ssh rules, case-folded deny rules and origins, the
// policy DecodeSnapshot gives back is the compiled one, its unexported
// indexes and folded patterns included, and decides alike.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, name := range TemplateNames() {
		t.Run(name, func(t *testing.T) {
			r, err := Load(Options{Template: name, Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
			if err != nil {
				t.Fatal(err)
			}
			r.Config.Command.Deny = append(r.Config.Command.Deny, "git push --force", "rm -r*", "curl")
			r.Config.Filesystem.DenyRead = append(r.Config.Filesystem.DenyRead, "~/Secrets/*.PEM")
			r.Config.SSH.AllowedCommands = append(r.Config.SSH.AllowedCommands, "ls *")
			p := Compile(r.Config, Env{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence", Origin: func(k, v string) string { return "test:" + k }})
			b, err := EncodeSnapshot(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeSnapshot(b)
			if err != nil {
				t.Fatal(err)
			}
			if where := differs(reflect.ValueOf(got), reflect.ValueOf(p), "Policy"); where != "" {
				t.Fatalf("the decoded policy differs from the compiled one at %s", where)
			}
			for _, path := range []string{"/h/secrets/x.pem", "/w/a"} {
				if g, w := got.CheckPath("read", path, path), p.CheckPath("read", path, path); !reflect.DeepEqual(g, w) {
					t.Errorf("CheckPath(read, %q) = %+v, want %+v", path, g, w)
				}
			}
		})
	}
}

// differs is the first place where a and b differ, "" when they hold the
// same, unexported fields included; an empty list and none are the same
// (the snapshot's encoding keeps no difference between them, and nothing
// that reads a policy makes one).
func differs(a, b reflect.Value, at string) string {
	if a.Kind() != b.Kind() {
		return at
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return at
			}
			return ""
		}
		return differs(a.Elem(), b.Elem(), at)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := differs(a.Field(i), b.Field(i), at+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return at
		}
		for i := range a.Len() {
			if d := differs(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
	case reflect.Map:
		if a.Len() != b.Len() {
			return at
		}
		for _, k := range a.MapKeys() {
			if d := differs(a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", at, k)); d != "" {
				return d
			}
		}
	case reflect.String:
		if a.String() != b.String() {
			return at
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return at
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return at
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return at
		}
	default:
		return at + " (a " + a.Kind().String() + ", not compared)"
	}
	return ""
}
