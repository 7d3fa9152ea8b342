package policy

// KeyConfigPath is the rule kind of a path where config discovery looks.
const KeyConfigPath = "mandatory.configPath"

// Quarantined says whether a protected path of kind key that the command
// creates (it did not exist at start, so no mount covered it) is moved
// aside after the run, rather than only reported: a config where fence
// looks for one, or a file git would read or run.
func Quarantined(key string) bool {
	return key == KeyGitConfig || key == KeyGitControl || key == KeyConfigPath
}
