package sfnapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"jobdesk/engine/flow/sfnapi"
)

// TestTestStateThroughSDK calls TestState with the real SDK client, at each inspection level.
func TestTestStateThroughSDK(t *testing.T) {
	h := newHarness(t, sfnapi.Options{})
	ctx := context.Background()
	out, err := h.c.TestState(ctx, &sfn.TestStateInput{
		Definition: aws.String(`{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:double","InputPath":"$.in","ResultPath":"$.out","Next":"Done"}`),
		RoleArn:    aws.String(role), Input: aws.String(`{"in":{"n":21}}`), InspectionLevel: types.InspectionLevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.TestExecutionStatusSucceeded || aws.ToString(out.NextState) != "Done" || aws.ToString(out.Output) != `{"in":{"n":21},"out":{"n":42}}` {
		t.Fatalf("TestState: %s %s %s", out.Status, aws.ToString(out.NextState), aws.ToString(out.Output))
	}
	d := out.InspectionData
	if d == nil || aws.ToString(d.AfterInputPath) != `{"n":21}` || aws.ToString(d.Result) != `{"n":42}` || aws.ToString(d.AfterResultPath) != `{"in":{"n":21},"out":{"n":42}}` {
		t.Fatalf("inspection data %+v", d)
	}
	out, err = h.c.TestState(ctx, &sfn.TestStateInput{
		Definition: aws.String(`{"QueryLanguage":"JSONata","Type":"Pass","Output":"{% $x & '-' & $states.input.s %}","End":true}`),
		RoleArn:    aws.String(role), Input: aws.String(`{"s":"b"}`), Variables: aws.String(`{"x":"a"}`), InspectionLevel: types.InspectionLevelInfo})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.TestExecutionStatusSucceeded || aws.ToString(out.Output) != `"a-b"` || out.InspectionData != nil {
		t.Fatalf("JSONata TestState: %+v", out)
	}
	out, err = h.c.TestState(ctx, &sfn.TestStateInput{
		Definition: aws.String(`{"Type":"Fail","Error":"E","Cause":"C"}`), RoleArn: aws.String(role), InspectionLevel: types.InspectionLevelTrace})
	if err != nil || out.Status != types.TestExecutionStatusFailed || aws.ToString(out.Error) != "E" || aws.ToString(out.Cause) != "C" {
		t.Fatalf("Fail TestState: %+v %v", out, err)
	}
	_, err = h.c.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(`{"Type":"Pass","Nope":1,"End":true}`), RoleArn: aws.String(role)})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidDefinition" {
		t.Fatalf("bad definition: %v", err)
	}
}
