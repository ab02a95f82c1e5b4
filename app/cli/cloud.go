package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"jobdesk/app"
	"jobdesk/sync/cloudconfig"
)

// `jobdesk cloud status`: whether the cloud is configured and reachable, the AWS identity in use,
// the outbox (cloud jobs waiting to go out) and the cloud's jobs by status. Its configuration is
// cloud.json in the data folder (sync/cloudconfig); it never reads or stores a key.

// configOverrideFlags adds cloud.json's overriding flags to a flag set and returns their values.
func configOverrideFlags(fs interface {
	String(name, value, usage string) *string
}) map[string]*string {
	out := map[string]*string{}
	for _, name := range cloudconfig.Flags {
		out[name] = fs.String(name, "", "override cloud.json's "+strings.ReplaceAll(name, "-", "_"))
	}
	return out
}

func flagValues(m map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = *v
	}
	return out
}

// cloudStatus is `jobdesk cloud status`.
func (c *CLI) cloudStatus(args []string) int {
	fs := c.Flags("cloud status")
	asJSON := fs.Bool("json", false, "print JSON")
	overrides := configOverrideFlags(fs)
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) > 0 {
		return c.Usage(fmt.Sprintf("cloud status: unexpected argument %q", pos[0]), fmt.Sprintf("cloud status: 想定外の引数です: %q", pos[0]))
	}
	a, ok := c.Open()
	if !ok {
		return ExitFailed
	}
	st, err := a.CloudStatus(context.Background(), flagValues(overrides))
	if err != nil {
		return c.Fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(st)
		if !st.Online {
			return ExitFailed
		}
		return ExitOK
	}
	c.printCloudStatus(st)
	if !st.Online {
		return ExitFailed
	}
	return ExitOK
}

func (c *CLI) printCloudStatus(st app.CloudStatus) {
	w := c.Stdout
	if st.Configured {
		fmt.Fprintln(w, "configured:  yes (設定済み)")
	} else {
		fmt.Fprintf(w, "configured:  no — cloud.json needs %s (未設定)\n", st.Missing)
	}
	fmt.Fprintf(w, "region:      %s\n", st.Region)
	if st.Profile != "" {
		fmt.Fprintf(w, "profile:     %s\n", st.Profile)
	}
	if st.Identity != "" {
		fmt.Fprintf(w, "identity:    %s (account %s)\n", st.Identity, st.Account)
	}
	if st.Online {
		fmt.Fprintln(w, "network:     online (オンライン)")
	} else {
		fmt.Fprintln(w, "network:     offline or refused (オフライン)")
	}
	for _, p := range st.Probes {
		state := "ok"
		if p.Error != "" {
			state = p.Error
			if !p.Reachable {
				state = "unreachable — " + p.Error
			}
		}
		fmt.Fprintf(w, "  %-15s %s: %s\n", p.Service, p.Resource, state)
	}
	fmt.Fprintf(w, "outbox:      %d waiting to go out (送信待ち %d 件)\n", st.Outbox, st.Outbox)
	statuses := make([]string, 0, len(st.Jobs))
	for s, n := range st.Jobs {
		statuses = append(statuses, fmt.Sprintf("%s %d", s, n))
	}
	sort.Strings(statuses)
	fmt.Fprintf(w, "cloud jobs:  %s\n", strings.Join(statuses, ", "))
	if st.LastSync != nil {
		fmt.Fprintf(w, "last sync:   %s\n", st.LastSync.Local().Format(time.DateTime))
	} else {
		fmt.Fprintln(w, "last sync:   never")
	}
}
