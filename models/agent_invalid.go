package models

import (
	"errors"

	"github.com/gpubook/gpubook/models/wire"
)

// AgentInvalid is the portal's answer to an agent body that breaks the
// protocol: one EINVALID field error, whose English problem one translation
// key carries (agents, not people, read it).
func AgentInvalid(field, problem string) error {
	return FieldErrors{field: agentProblem(problem)}.Err()
}

// agentProblem wraps an English problem description in a Msg. Agents, not
// people, read these (in logs), so one translation key covers them all.
func agentProblem(problem string) Msg { return M("err.agent_invalid", "Problem", problem) }

// AgentError turns the wire package's *wire.Invalid into AgentInvalid and
// leaves every other error (and nil) as it is.
func AgentError(err error) error {
	var inv *wire.Invalid
	if errors.As(err, &inv) {
		return AgentInvalid(inv.Field, inv.Problem)
	}
	return err
}
