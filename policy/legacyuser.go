package policy

import (
	"path/filepath"
	"slices"
)

// LegacyUserConfigPaths are where older fences kept the user config,
// ~/.fence.jsonc then ~/.fence.json. Discovery tries them last, after the
// user config dir, so that a user who switches keeps the policy; they
// count as the user config does (for @base, for trust, and as paths no
// sandbox may write).
func (o Options) LegacyUserConfigPaths() []string {
	if o.Home == "" {
		return nil
	}
	return LegacyUserConfigs(o.Home)
}

// LegacyUserConfigs are the legacy user config files in home.
func LegacyUserConfigs(home string) []string {
	return []string{filepath.Join(home, ".fence.jsonc"), filepath.Join(home, ".fence.json")}
}

// userConfigFallbacks are the files tried for the user config, in order:
// the user config dir's, then the legacy ones.
func (o Options) userConfigFallbacks() []string {
	return append(o.UserConfigPaths(), o.LegacyUserConfigPaths()...)
}

// LegacyUserConfig is the legacy user config file the chain read (as
// its root, through @base or through extends), "" when it read none: fence
// says where the file belongs now.
func (r *Resolved) LegacyUserConfig(opts Options) string {
	for _, f := range r.Files {
		if slices.Contains(opts.LegacyUserConfigPaths(), f) {
			return f
		}
	}
	return ""
}
