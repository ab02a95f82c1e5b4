//go:build !unix

package app

func pidAlive(pid int) bool { return true }
