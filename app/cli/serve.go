package cli

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"jobdesk/app"
	"jobdesk/engine/flow/sfnapi"
	"jobdesk/engine/job"
)

// `jobdesk serve`: the local AWS Step Functions–compatible API over the workflow engine, so the
// AWS CLI, the AWS SDKs and Step Functions tools can drive the state machines that run on this
// device.

// DefaultServeAddr is where `jobdesk serve` listens without --listen.
const DefaultServeAddr = "127.0.0.1:8083"

var serveCommand = Command{
	Name:  "serve",
	Usage: "serve [--listen 127.0.0.1:8083] [--allow-remote] [--allow-host NAME]... [--access-key ID --secret-key KEY] [--region R] [--workers N] | serve --print-credentials",
	Help: "serve the Step Functions API (AWS JSON 1.0, requests signed with SigV4) on this device and run the engine until SIGINT/SIGTERM; " +
		"--print-credentials prints the key pair to sign with as shell lines",
	Run: (*CLI).cmdServe,
}

// serveSignals is the context that ends `jobdesk serve`: SIGINT or SIGTERM.
var serveSignals = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// The environment variables that give `jobdesk serve` one more key pair to accept (as
// --access-key and --secret-key do), for example the pair of an S3 server beside it, since one
// AWS profile signs both.
const (
	EnvServeAccessKeyID     = "JOBDESK_SERVE_ACCESS_KEY_ID"
	EnvServeSecretAccessKey = "JOBDESK_SERVE_SECRET_ACCESS_KEY"
)

// serveRegion is the region of the engine's own ARNs. A request may be signed for any region
// (the region of the caller's profile), and the ARNs it gets back carry that region; --region
// pins one.
const serveRegion = "local"

// serveKey is the content of app.ServeKeyFile.
type serveKey struct {
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
	Region          string `json:"region"`
}

// ServeCredentials returns the key pair of data folder dir's API, generating it into
// app.ServeKeyFile (0600) the first time. Two processes doing so at once agree on one pair.
func ServeCredentials(dir string) (sfnapi.Credentials, error) {
	path := filepath.Join(dir, app.ServeKeyFile)
	fail := func(err error) (sfnapi.Credentials, error) {
		return sfnapi.Credentials{}, job.Wrap(job.E014, err, fmt.Sprintf("the API key file %s cannot be read or written", path)).
			WithJa(fmt.Sprintf("API のキーファイル %s を読み書きできません。", path))
	}
	for range 2 {
		b, err := os.ReadFile(path)
		if err == nil {
			var k serveKey
			if err := json.Unmarshal(b, &k); err != nil || k.AccessKeyID == "" || k.SecretAccessKey == "" {
				return sfnapi.Credentials{}, job.Errorf(job.E014, "the API key file %s is damaged; delete it and a new key pair is made", path).
					WithJa(fmt.Sprintf("API のキーファイル %s が壊れています。削除すると新しいキーペアが作られます。", path))
			}
			if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
				if err := os.Chmod(path, 0o600); err != nil {
					return fail(err)
				}
			}
			return sfnapi.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
		if err := writeServeKey(dir, path); err != nil && !errors.Is(err, fs.ErrExist) {
			return fail(err)
		}
	}
	return fail(errors.New("the key file vanished while it was made"))
}

// writeServeKey writes a new random key pair to path, never replacing one already there
// (fs.ErrExist then): written to a temporary file first, then linked into place.
func writeServeKey(dir, path string) error {
	id := make([]byte, 10)
	secret := make([]byte, 30)
	rand.Read(id)
	rand.Read(secret)
	k := serveKey{
		AccessKeyID:     "JDLK" + base32.StdEncoding.EncodeToString(id), // 20 characters, as AWS's
		SecretAccessKey: base64.StdEncoding.EncodeToString(secret),      // 40 characters, as AWS's
		Region:          serveRegion,
	}
	b, _ := json.MarshalIndent(k, "", "  ")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+app.ServeKeyFile+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Link(f.Name(), path)
}

// hostList is a flag that may be given several times, each a name or names separated by commas.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			*h = append(*h, name)
		}
	}
	return nil
}

func (c *CLI) cmdServe(args []string) int {
	fs := c.Flags("serve")
	addr := fs.String("listen", DefaultServeAddr, "HOST:PORT to listen on (loopback unless --allow-remote)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback address, so other machines holding the key pair can call the API; Host headers must then be loopback names, IP addresses or names given with --allow-host")
	var allowHosts hostList
	fs.Var(&allowHosts, "allow-host", "a host name clients may use to reach this server besides loopback names and IP addresses (repeat, or separate with commas)")
	accessKey := fs.String("access-key", os.Getenv(EnvServeAccessKeyID), "also accept requests signed with this access key id (or "+EnvServeAccessKeyID+")")
	secretKey := fs.String("secret-key", os.Getenv(EnvServeSecretAccessKey), "the secret key of --access-key (or "+EnvServeSecretAccessKey+")")
	printCreds := fs.Bool("print-credentials", false, "print the key pair of this data folder's API as shell lines (AWS_ACCESS_KEY_ID=…) and exit")
	workers := fs.Int("workers", 0, "jobs at once (default: number of CPUs)")
	region := fs.String("region", "", "accept signatures scoped to this region only (default: any region; the ARNs answered carry the region each request was signed for)")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) > 0 {
		return c.Usage(fmt.Sprintf("serve: unexpected argument %q", pos[0]), fmt.Sprintf("serve: 想定外の引数です: %q", pos[0]))
	}
	if (*accessKey == "") != (*secretKey == "") {
		return c.Usage("serve: give --access-key and --secret-key together (or "+EnvServeAccessKeyID+" and "+EnvServeSecretAccessKey+")",
			"serve: --access-key と --secret-key は両方指定してください。")
	}
	if *printCreds {
		a, ok := c.Open()
		if !ok {
			return ExitFailed
		}
		key, err := ServeCredentials(a.DataDir())
		if err != nil {
			return c.Fail(err)
		}
		r := serveRegion
		if *region != "" {
			r = *region
		}
		fmt.Fprintf(c.Stdout, "AWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\nAWS_REGION=%s\nAWS_DEFAULT_REGION=%s\n",
			key.AccessKeyID, key.SecretAccessKey, r, r)
		return ExitOK
	}
	// Listen before opening anything, so a refused or busy address fails at once.
	ln, err := sfnapi.Listen(*addr, *allowRemote)
	if err != nil {
		return c.Fail(err)
	}
	defer ln.Close()
	a, err := app.Open(app.Config{DataDir: c.dataDir, Workers: *workers, CloudStandIn: true})
	if err != nil {
		return c.Fail(err)
	}
	c.app = a
	key, err := ServeCredentials(a.DataDir())
	if err != nil {
		return c.Fail(err)
	}
	keys := []sfnapi.Credentials{key}
	if *accessKey != "" {
		keys = append(keys, sfnapi.Credentials{AccessKeyID: *accessKey, SecretAccessKey: *secretKey})
	}
	ctx, stop := serveSignals()
	defer stop()
	if err := a.StartEngine(ctx); err != nil {
		return c.Fail(err)
	}
	// Definitions are checked as `jobdesk flow validate` does: a Task naming a function this
	// device does not have is refused when the state machine is created, not when it runs.
	srv := a.StepFunctionsAPI(sfnapi.Options{
		Credentials:   keys,
		Region:        serveRegion,
		AnyRegion:     *region == "",
		SigningRegion: *region,
		AllowRemote:   *allowRemote,
		AllowedHosts:  allowHosts,
		Logf:          func(format string, args ...any) { fmt.Fprintf(c.Stderr, format+"\n", args...) },
	})
	endpoint := "http://" + ln.Addr().String()
	fmt.Fprintln(c.Stdout, endpoint)
	fmt.Fprintf(c.Stderr, "jobdesk serve: Step Functions API on %s, running workflows in %s; Ctrl-C to stop\n", endpoint, a.DataDir())
	signing := "any region"
	if *region != "" {
		signing = "region " + *region
	}
	fmt.Fprintf(c.Stderr, "  requests must be signed (SigV4, %s) with the key pair in %s%s\n", signing,
		filepath.Join(a.DataDir(), app.ServeKeyFile), map[bool]string{true: " or the one given with --access-key", false: ""}[*accessKey != ""])
	fmt.Fprintf(c.Stderr, "  workflows read and write files only in the data folder, the folders listed in %s, and files submitted with `jobdesk run` or the window\n",
		filepath.Join(a.DataDir(), app.FoldersFile))
	dataDirFlag := ""
	if c.dataDir != "" {
		dataDirFlag = " --data-dir " + a.DataDir()
	}
	fmt.Fprintf(c.Stderr, "  try: export $(jobdesk%s serve --print-credentials); aws stepfunctions list-state-machines --endpoint-url %s\n", dataDirFlag, endpoint)
	// The CLI sends StartSyncExecution to "sync-" + host unless told not to.
	fmt.Fprintln(c.Stderr, "  for start-sync-execution, also set AWS_DISABLE_HOST_PREFIX_INJECTION=true")
	if *allowRemote {
		fmt.Fprintln(c.Stderr, "jobdesk serve: --allow-remote: "+remoteNotice(ln.Addr().(*net.TCPAddr), allowHosts))
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return c.Fail(job.Wrap(job.E014, err, "the API server stopped").WithJa("API サーバーが停止しました。"))
	}
	fmt.Fprintln(c.Stderr, "jobdesk serve: stopping; running jobs return to the queue")
	return ExitOK
}

// remoteNotice says exactly what --allow-remote opened: who can connect to the address it
// listens on, and which Host names requests may carry.
func remoteNotice(addr *net.TCPAddr, hosts []string) string {
	var who string
	switch {
	case addr.IP.IsLoopback():
		who = fmt.Sprintf("listening on %s, a loopback address: only programs on this machine can connect", addr)
	case addr.IP.IsUnspecified():
		who = fmt.Sprintf("listening on every network interface (port %d): any machine that can reach this one on that port can call the API with the key pair", addr.Port)
	default:
		who = fmt.Sprintf("listening on %s: any machine that can reach that address can call the API with the key pair", addr)
	}
	names := "loopback names and IP addresses"
	if len(hosts) > 0 {
		names += ", and " + strings.Join(hosts, ", ")
	}
	return who + "; Host headers accepted: " + names + " (any other name is refused, against DNS rebinding)"
}
