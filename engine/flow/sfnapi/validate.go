package sfnapi

import "jobdesk/engine/flow"

// defaultValidate checks definitions when Options.Validate is nil: the language only, as
// ValidateStateMachineDefinition does on AWS (resources are not looked up).
var defaultValidate = func(definition []byte) []flow.Diagnostic { return flow.Validate(definition, nil) }

// The real engine is a Backend.
var _ Backend = (*flow.Engine)(nil)
