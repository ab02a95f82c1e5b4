package app

import "jobdesk/app/family"

// marshalIndent is v as indented JSON without HTML escapes, as people edit settings files by
// hand (family.IndentedJSON).
func marshalIndent(v any) ([]byte, error) { return family.IndentedJSON(v) }
