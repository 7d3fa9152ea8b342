package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Minimal is the smallest useful config: the builtin template base and
// nothing else (`fence config init --minimal`).
func Minimal(base string) ([]byte, error) {
	t, ok := LookupTemplate(base)
	if !ok {
		return nil, fmt.Errorf("%s", unknownTemplate(base))
	}
	return []byte(fmt.Sprintf("{\n  \"extends\": %q\n}\n", t.Name)), nil
}

// Scaffold is a config that extends base and names every key of the
// schema, in the schema's order, each with its description; every key
// but the sections is commented out, so the file means what Minimal
// does until a line is uncommented (`fence config init --scaffold`).
// It is made from Schema, so a key added there is in it.
func Scaffold(base string) ([]byte, error) {
	t, ok := LookupTemplate(base)
	if !ok {
		return nil, fmt.Errorf("%s", unknownTemplate(base))
	}
	root, err := parseSchemaNode(Schema)
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("// fence policy: every key, commented out. Uncomment what you need;\n")
	b.WriteString("// \"fence config show\" prints what it resolves to. Comments and trailing commas are allowed.\n{\n")
	for _, p := range root.props {
		switch p.name {
		case "$schema":
			continue
		case "extends":
			writeComment(&b, "  ", p.description+" Here: "+t.Summary)
			fmt.Fprintf(&b, "  \"extends\": %q,\n", t.Name)
		default:
			writeScaffoldKey(&b, "  ", p)
		}
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// schemaNode is one property of the schema, its own properties in order.
type schemaNode struct {
	name        string
	types       []string
	description string
	enum        []string
	minimum     *float64
	props       []schemaNode
}

func parseSchemaNode(data []byte) (schemaNode, error) {
	var raw struct {
		Type        json.RawMessage `json:"type"`
		Description string          `json:"description"`
		Enum        []string        `json:"enum"`
		Minimum     *float64        `json:"minimum"`
		Properties  json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return schemaNode{}, err
	}
	n := schemaNode{description: raw.Description, enum: raw.Enum, minimum: raw.Minimum}
	if len(raw.Type) > 0 && json.Unmarshal(raw.Type, &n.types) != nil {
		var one string
		if err := json.Unmarshal(raw.Type, &one); err != nil {
			return schemaNode{}, err
		}
		n.types = []string{one}
	}
	if len(raw.Properties) == 0 {
		return n, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Properties))
	if _, err := dec.Token(); err != nil { // {
		return schemaNode{}, err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return schemaNode{}, err
		}
		var sub json.RawMessage
		if err := dec.Decode(&sub); err != nil {
			return schemaNode{}, err
		}
		child, err := parseSchemaNode(sub)
		if err != nil {
			return schemaNode{}, fmt.Errorf("%v: %w", key, err)
		}
		child.name = fmt.Sprint(key)
		n.props = append(n.props, child)
	}
	return n, nil
}

// writeScaffoldKey writes p: a section as an object holding its keys,
// any other key as a commented-out line with a placeholder value.
func writeScaffoldKey(b *bytes.Buffer, indent string, p schemaNode) {
	writeComment(b, indent, p.description)
	if len(p.props) > 0 {
		fmt.Fprintf(b, "%s%q: {\n", indent, p.name)
		for _, c := range p.props {
			writeScaffoldKey(b, indent+"  ", c)
		}
		fmt.Fprintf(b, "%s},\n", indent)
		return
	}
	if len(p.enum) > 0 {
		writeComment(b, indent, "One of: "+strings.Join(p.enum, ", ")+".")
	}
	fmt.Fprintf(b, "%s// %q: %s,\n", indent, p.name, placeholder(p))
}

// placeholder is a value of p's type to uncomment and edit.
func placeholder(p schemaNode) string {
	switch {
	case len(p.enum) > 0:
		return strconv.Quote(p.enum[0])
	case len(p.types) == 0:
		return "null"
	}
	switch p.types[0] {
	case "array":
		return "[]"
	case "boolean":
		if len(p.types) > 1 {
			return "null"
		}
		return "false"
	case "integer", "number":
		if m := defaultNumber().FindStringSubmatch(p.description); m != nil {
			return m[1]
		}
		if p.minimum != nil {
			return strconv.FormatFloat(*p.minimum, 'f', -1, 64)
		}
		return "0"
	case "object":
		return "{}"
	}
	return `""`
}

// defaultNumber finds "(default 3128)" in a description (compiled on
// first use, not at every fence's start).
var defaultNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(default (\d+)\)`) })

// writeComment writes text as // lines of at most about 80 columns.
func writeComment(b *bytes.Buffer, indent, text string) {
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(indent)+3+len(line)+1+len(w) > 80 {
			fmt.Fprintf(b, "%s// %s\n", indent, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		fmt.Fprintf(b, "%s// %s\n", indent, line)
	}
}
