package app

import (
	"jobdesk/engine/checksum"
	"jobdesk/engine/queue"
)

// The checksum family: SHA-256 of any file. It takes what no other family recognises.
func init() {
	RegisterFamily(Family{
		Name:     "checksum",
		Types:    []string{checksum.Type},
		Priority: -1000,
		Register: func(a *App, w *queue.Worker) {
			w.Handle(checksum.Type, confined(checksum.Handler(DeviceBlobs(a))), queue.TypeOptions{})
		},
		Detect: func(string, []byte) string { return checksum.Type },
	})
}
