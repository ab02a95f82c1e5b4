//go:build !windows

package main

// useParentConsole does nothing outside Windows: a program started from a terminal already
// prints to it.
func useParentConsole([]string) {}
