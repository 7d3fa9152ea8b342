// Command fence runs a command inside a kernel-enforced sandbox described
// by a fence.jsonc policy.
package main

import "github.com/fence-sandbox/fence/cmd"

func main() { cmd.Execute() }
