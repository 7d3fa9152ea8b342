package policy

import _ "embed"

// Schema is the JSON Schema of fence.jsonc. Editors can use it for
// completion; fence itself validates with the stricter loader.
//
//go:embed fence.schema.json
var Schema []byte
