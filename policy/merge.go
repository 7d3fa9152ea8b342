package policy

import (
	"reflect"
	"strings"
)

// Merge returns child layered over parent, the way `extends` combines
// configs: lists append and drop later duplicates, booleans OR, nullable
// booleans and strings take the child's value when it is set, and integers
// take the child's value when it is non-zero. The result never carries
// extends or $schema, and a list that ends up empty is nil.
func Merge(parent, child Config) Config {
	out := reflect.New(reflect.TypeFor[Config]()).Elem()
	mergeInto(out, reflect.ValueOf(parent))
	mergeInto(out, reflect.ValueOf(child))
	cfg := out.Interface().(Config)
	cfg.Extends, cfg.Schema = "", ""
	if cfg.Filesystem.StrictDenyRead {
		cfg.Filesystem.DefaultDenyRead = true
	}
	return cfg
}

func mergeInto(dst, src reflect.Value) {
	switch dst.Kind() {
	case reflect.Struct:
		for i := range dst.NumField() {
			mergeInto(dst.Field(i), src.Field(i))
		}
	case reflect.Slice:
		switch d := dst.Addr().Interface().(type) {
		case *[]string:
			*d = appendUnique(*d, src.Interface().([]string))
		case *[]int:
			*d = appendUnique(*d, src.Interface().([]int))
		default:
			panic("policy: BUG: Merge does not handle " + dst.Type().String())
		}
	case reflect.Bool:
		dst.SetBool(dst.Bool() || src.Bool())
	case reflect.Pointer:
		if !src.IsNil() {
			v := reflect.New(src.Type().Elem())
			v.Elem().Set(src.Elem())
			dst.Set(v)
		}
	case reflect.String:
		if src.String() != "" {
			dst.SetString(src.String())
		}
	case reflect.Int:
		if src.Int() != 0 {
			dst.SetInt(src.Int())
		}
	default:
		panic("policy: BUG: Merge does not handle " + dst.Kind().String())
	}
}

// appendUnique returns a followed by the elements of b, without repeats,
// in a new slice; nil when there are none.
func appendUnique[T comparable](a, b []T) []T {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]T, 0, len(a)+len(b))
	seen := make(map[T]bool, len(a)+len(b))
	for _, s := range [][]T{a, b} {
		for _, e := range s {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// forEachList calls fn with the key and entries of every string list in
// cfg, such as "filesystem.allowWrite".
func forEachList(cfg *Config, fn func(key string, values []string)) {
	walkLists(reflect.ValueOf(cfg).Elem(), "", fn)
}

func walkLists(v reflect.Value, key string, fn func(string, []string)) {
	switch {
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			walkLists(v.Field(i), joinKey(key, name), fn)
		}
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		fn(key, v.Interface().([]string))
	}
}
