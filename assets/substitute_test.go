package assets

import (
	"strings"
	"testing"
)

// TestSubstituteNamesEachMissingPlaceholderOnce: a placeholder without a value is an error that
// names it once, however often the workflow uses it; a filled one is replaced everywhere.
func TestSubstituteNamesEachMissingPlaceholderOnce(t *testing.T) {
	def := []byte(`{"A":"${CsvProcessorFunction}","B":"${CsvProcessorFunction}","C":"${Other}"}`)
	_, err := Substitute(def, map[string]string{})
	if err == nil || err.Error() != "no value for ${CsvProcessorFunction}, ${Other}" {
		t.Fatalf("err = %v", err)
	}
	out, err := Substitute(def, map[string]string{"CsvProcessorFunction": "stack-csv-processor", "Other": "x"})
	if err != nil || strings.Count(string(out), "stack-csv-processor") != 2 || strings.Contains(string(out), "${") {
		t.Fatalf("%s %v", out, err)
	}
}

// TestDeviceWorkflowsCallPlainFunctionNames: on the device every shipped workflow is filled,
// its functions by the names the device registers them under.
func TestDeviceWorkflowsCallPlainFunctionNames(t *testing.T) {
	for _, name := range Workflows() {
		def, err := DeviceWorkflow(name, "local", "000000000000")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(def), "${") {
			t.Errorf("%s: a placeholder is left", name)
		}
	}
	csv, err := DeviceWorkflow("csv-processing", "local", "000000000000")
	if err != nil || !strings.Contains(string(csv), `"FunctionName": "csv-processor"`) {
		t.Fatalf("csv-processing on the device does not call csv-processor: %v", err)
	}
}
