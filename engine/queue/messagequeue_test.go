package queue

import (
	"testing"

	"jobdesk/engine/queueport"
	"jobdesk/engine/queueport/queueporttest"
)

// TestPortContract runs the queue-port contract against the SQLite queue; sync/sqsqueue runs
// the same suite against SQS.
func TestPortContract(t *testing.T) {
	queueporttest.Run(t, func(t *testing.T, c queueporttest.Config) queueport.Port {
		q := openQueue(t, t.TempDir())
		p, err := q.MessageQueue(MessageQueueOptions{Type: "PORT_TEST", MaxReceives: c.MaxReceives})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
}
