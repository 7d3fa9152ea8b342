//go:build !linux

package cmd

import (
	"io"

	"github.com/fence-sandbox/fence/policy"
)

// agentConfigGuards are the guards of one run: on Linux alone so far
// (see agentconfigguard_linux.go).
type agentConfigGuards []struct{}

func guardAgentConfigs(*policy.Policy, bool, io.Writer) agentConfigGuards { return nil }

func (agentConfigGuards) check(io.Writer) {}

func (agentConfigGuards) close() {}
