// Command lambda is JobDesk's cloud worker: the `bootstrap` of the one Lambda zip
// (provided.al2023) that backs every function the shipped workflows call. It reads its
// configuration from the environment (JOBDESK_FUNCTION, JOBDESK_BUCKET, JOBDESK_PREFIX,
// JOBDESK_STATUS_QUEUE_URL, JOBDESK_BEDROCK_MODEL, JOBDESK_BEDROCK_REGION; see
// sync/cloudworker) and serves invocations from the same handlers the desktop runs. It links no
// UI, no SQLite and no cgo (checked by architecture_test.go); build it with `make lambda`.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"jobdesk/sync/cloudworker"
)

func main() {
	w, err := cloudworker.New(context.Background(), cloudworker.ConfigFromEnv())
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobdesk worker:", err)
		os.Exit(1)
	}
	lambda.Start(w)
}
