package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSchemaMatchesTypes keeps fence.schema.json and the Config types in
// step: the same keys at every level, the same JSON types, no extra keys
// allowed anywhere.
func TestSchemaMatchesTypes(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(Schema, &schema); err != nil {
		t.Fatalf("fence.schema.json is not JSON: %v", err)
	}
	for _, problem := range compareSchema("", schema, reflect.TypeFor[Config]()) {
		t.Error(problem)
	}
}

func compareSchema(key string, s map[string]any, typ reflect.Type) []string {
	where := key
	if where == "" {
		where = "(top level)"
	}
	wantType := schemaType(typ)
	if got := fmt.Sprint(s["type"]); got != wantType {
		return []string{fmt.Sprintf("%s: schema type %s, Go type %s wants %s", where, got, typ, wantType)}
	}
	switch typ.Kind() {
	case reflect.Slice:
		items, _ := s["items"].(map[string]any)
		return compareSchema(key+"[]", items, typ.Elem())
	case reflect.Struct:
		return compareObject(key, where, s, typ)
	}
	return nil
}

func compareObject(key, where string, s map[string]any, typ reflect.Type) []string {
	var problems []string
	if s["additionalProperties"] != false {
		problems = append(problems, where+": schema allows unknown keys")
	}
	props, _ := s["properties"].(map[string]any)
	fields := jsonFields(typ)
	for name := range props {
		if _, ok := fields[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s: schema has %q, Go type %s does not", where, name, typ))
		}
	}
	for _, name := range sortedKeys(fields) {
		sub, ok := props[name].(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: Go type %s has %q, schema does not", where, typ, name))
			continue
		}
		problems = append(problems, compareSchema(joinKey(key, name), sub, typ.Field(fields[name]).Type)...)
	}
	return problems
}

func schemaType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int:
		return "integer"
	case reflect.Slice:
		return "array"
	case reflect.Struct:
		return "object"
	case reflect.Pointer:
		return fmt.Sprint([]any{schemaType(t.Elem()), "null"})
	}
	return "unknown " + t.String()
}

// TestSchemaEnumsMatch keeps the enum of devices.mode in step with the loader.
func TestSchemaEnumsMatch(t *testing.T) {
	var s struct {
		Properties struct {
			Devices struct {
				Properties struct {
					Mode struct{ Enum []string }
				}
			}
		}
	}
	if err := json.Unmarshal(Schema, &s); err != nil {
		t.Fatal(err)
	}
	if got := s.Properties.Devices.Properties.Mode.Enum; !slices.Equal(got, DeviceModes) {
		t.Errorf("schema devices.mode enum = %v, loader accepts %v", got, DeviceModes)
	}
	if !strings.Contains(string(Schema), `"$schema": "https://json-schema.org/draft/2020-12/schema"`) {
		t.Error("schema does not declare its draft")
	}
}
