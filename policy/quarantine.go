package policy

import "strings"

// KeyConfigPath is the rule kind of a path where config discovery looks.
const KeyConfigPath = "mandatory.configPath"

// Quarantined says whether a protected path of kind key that the command
// creates (it did not exist at start, so no mount covered it) is moved
// aside after the run, rather than only reported: every file fence
// always protects runs code or sets policy when something outside the
// sandbox reads it (a config where fence looks for one, git's control
// files, shell startup files, agent hooks...), so one the command made
// must not stay where it would be read. The audit log is the exception:
// fence itself creates it, outside the sandbox.
func Quarantined(key string) bool {
	return strings.HasPrefix(key, "mandatory.") && key != "mandatory.auditLog"
}
