package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const healthUsage = `knobs health [--timeout D] [URL]

Asks the Knobs server at URL whether it is up: GET URL/healthz, which
answers 200 when the server serves and its database answers. Exits 0
when it does within --timeout, else 1 with what went wrong. Without URL,
the server this machine's KNOBS_ADDR names (0.0.0.0 and :: read as
127.0.0.1), so that a container's HEALTHCHECK needs no curl.`

// maxHealthBody caps what is read of /healthz's answer.
const maxHealthBody = 1 << 10

func healthCommand(e *env, args []string) error {
	const name = "knobs health"
	fs := flagSet(name, healthUsage)
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usagef(name, "give at most one URL")
	}
	if *timeout <= 0 {
		return usagef(name, "--timeout must be positive, such as 5s")
	}
	base := ""
	if len(rest) == 1 {
		base = rest[0]
	} else if base, err = localURL(e.getenv("KNOBS_ADDR")); err != nil {
		return err
	}
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef(name, "%q is not a server's address: want http(s)://host:port, such as %s", base, defaultURL)
	}
	target := strings.TrimRight(u.String(), "/") + "/healthz"

	ctx, cancel := context.WithTimeout(e.ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		if ctx.Err() != nil && e.ctx.Err() == nil {
			return fmt.Errorf("%s did not answer within %s", target, *timeout)
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("%s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxHealthBody))
	said := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", target, resp.Status, said)
	}
	_, err = fmt.Fprintf(e.stdout, "%s: %s\n", target, said)
	return err
}

// localURL is the URL of the server listening on addr (KNOBS_ADDR) on
// this machine.
func localURL(addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("KNOBS_ADDR %q is not host:port; give the server's URL instead", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}
