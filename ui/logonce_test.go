package ui

import (
	"bytes"
	"errors"
	"log"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
)

// TestDBusErrorLoggedOnce: the toolkit's "Unable to connect to session D-Bus", reported on every
// notification without a session bus, reaches the terminal once, with its cause; other errors
// pass through every time.
func TestDBusErrorLoggedOnce(t *testing.T) {
	var out bytes.Buffer
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(newOnceLog(&out, dbusUnreachable))
	defer func() { log.SetOutput(prevOut); log.SetFlags(prevFlags) }()
	for i := 0; i < 33; i++ {
		fyne.LogError("Unable to connect to session D-Bus", errors.New("dbus: DBUS_SESSION_BUS_ADDRESS not set"))
		if i%10 == 0 {
			fyne.LogError("Failed to load the icon", errors.New("no such file"))
		}
	}
	text := out.String()
	if n := strings.Count(text, "Unable to connect to session D-Bus"); n != 1 {
		t.Fatalf("the D-Bus error was written %d times:\n%s", n, text)
	}
	if n := strings.Count(text, "DBUS_SESSION_BUS_ADDRESS not set"); n != 1 {
		t.Fatalf("its cause was written %d times:\n%s", n, text)
	}
	if n := strings.Count(text, "Failed to load the icon"); n != 4 {
		t.Fatalf("another error was written %d times, want 4:\n%s", n, text)
	}
	if n := strings.Count(text, "no such file"); n != 4 {
		t.Fatalf("another error's cause was written %d times, want 4:\n%s", n, text)
	}
}
