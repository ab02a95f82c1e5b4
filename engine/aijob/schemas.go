package aijob

import (
	"encoding/json"
	"fmt"
)

// The schemas of the replies, by name. Each is sent to the model as response_format and checked
// by Schema.Validate on the way back.
var (
	// SubgoalSchema: exactly eight sub-goals of a goal.
	SubgoalSchema = mustSchema("subgoals", `{"type":"object","additionalProperties":false,"required":["subgoals"],
	 "properties":{"subgoals":{"type":"array","minItems":8,"maxItems":8,"items":{"type":"object","additionalProperties":false,
	  "required":["title","description","background"],"properties":{
	   "title":{"type":"string","minLength":1,"maxLength":60},
	   "description":{"type":"string","minLength":1,"maxLength":500},
	   "background":{"type":"string","maxLength":500}}}}}}`)
	// ActionSchema: exactly eight actions of a sub-goal.
	ActionSchema = mustSchema("actions", `{"type":"object","additionalProperties":false,"required":["actions"],
	 "properties":{"actions":{"type":"array","minItems":8,"maxItems":8,"items":{"type":"object","additionalProperties":false,
	  "required":["title","description","type"],"properties":{
	   "title":{"type":"string","minLength":1,"maxLength":60},
	   "description":{"type":"string","minLength":1,"maxLength":500},
	   "type":{"type":"string","enum":["execution","habit"]}}}}}}`)
	// TaskSchema: the tasks of one action (seed 001's TaskGenerationOutput).
	TaskSchema = mustSchema("tasks", `{"type":"object","additionalProperties":false,"required":["tasks"],
	 "properties":{"tasks":{"type":"array","minItems":1,"maxItems":20,"items":{"type":"object","additionalProperties":false,
	  "required":["title","description","type","estimatedMinutes"],"properties":{
	   "title":{"type":"string","minLength":1,"maxLength":80},
	   "description":{"type":"string","maxLength":500},
	   "type":{"type":"string","enum":["execution","habit"]},
	   "estimatedMinutes":{"type":"integer","minimum":1,"maximum":1440}}}}}}`)
	// CaptionSchema: a Japanese description of an image (seed 002's result).
	CaptionSchema = mustSchema("caption", `{"type":"object","additionalProperties":false,"required":["description"],
	 "properties":{"description":{"type":"string","minLength":1,"maxLength":2000}}}`)
	// EligibilitySchema: the eligibility JSON of seed 003 Job D.
	EligibilitySchema = mustSchema("eligibility", `{"type":"object","additionalProperties":false,
	 "required":["must","need_check","must_not","risk_flags","missing_keys"],"properties":{
	  "must":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["key","text"],"properties":{"key":{"type":"string"},"text":{"type":"string","minLength":1},"source":{"type":"string"}}}},
	  "need_check":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["key","text"],"properties":{"key":{"type":"string"},"text":{"type":"string","minLength":1},"source":{"type":"string"}}}},
	  "must_not":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["key","text"],"properties":{"key":{"type":"string"},"text":{"type":"string","minLength":1},"source":{"type":"string"}}}},
	  "risk_flags":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["key","text"],"properties":{"key":{"type":"string"},"text":{"type":"string","minLength":1},"source":{"type":"string"}}}},
	  "missing_keys":{"type":"array","items":{"type":"string"}}}}`)
)

// NamedSchema is a schema with its name and its JSON text.
type NamedSchema struct {
	Name string
	Raw  json.RawMessage
	*Schema
}

func mustSchema(name, text string) NamedSchema {
	var compact json.RawMessage
	if err := json.Unmarshal([]byte(text), &compact); err != nil {
		panic(fmt.Sprintf("schema %s: %v", name, err))
	}
	s, err := ParseSchema(compact)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(compact)
	return NamedSchema{Name: name, Raw: b, Schema: s}
}
