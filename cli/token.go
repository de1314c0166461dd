package cli

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"
)

const tokenUsage = `knobs token create --name N [--scope read|write] [--expires 30|90|365|never]
       knobs token list
       knobs token revoke ID

create prints the new token's secret once, alone on its line on stdout
(its details go to stderr), so that a script can keep it:
  export KNOBS_TOKEN=$(knobs token create --name ci --scope write)
Making a token needs a token with the write scope.`

func tokenCommand(e *env, args []string) error {
	const name = "knobs token"
	if len(args) == 0 {
		return usagef(name, "give create, list or revoke")
	}
	switch args[0] {
	case "create":
		return tokenCreate(e, args[1:])
	case "list":
		return tokenList(e, args[1:])
	case "revoke":
		return tokenRevoke(e, args[1:])
	case "-h", "-help", "--help":
		fs := flagSet(name, tokenUsage)
		_, err := e.parse(fs, args)
		return err
	}
	return usagef(name, "unknown subcommand %q: give create, list or revoke", args[0])
}

func tokenCreate(e *env, args []string) error {
	const name = "knobs token create"
	fs := flagSet(name, "knobs token create --name N [--scope read|write] [--expires 30|90|365|never]")
	srv := addServerFlags(fs)
	tokenName := fs.String("name", "", "what the token is for, such as the script or machine that uses it (required)")
	scope := fs.String("scope", "read", "read: everything you may see; write: also change it (start runs, push presets)")
	expires := fs.String("expires", "90", "days until it expires: 30, 90, 365, or never")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef(name, "unexpected %q", rest[0])
	}
	if *tokenName == "" {
		return usagef(name, "--name is required")
	}
	if *scope != "read" && *scope != "write" {
		return usagef(name, "--scope %q: want read or write", *scope)
	}
	body := map[string]any{"name": *tokenName, "scope": *scope, "expires_in_days": nil}
	switch *expires {
	case "30", "90", "365":
		body["expires_in_days"], _ = strconv.Atoi(*expires)
	case "never":
	default:
		return usagef(name, "--expires %q: want 30, 90, 365 or never", *expires)
	}
	c, err := srv.client(e)
	if err != nil {
		return err
	}
	var t struct {
		ID        int64      `json:"id"`
		Name      string     `json:"name"`
		Scope     string     `json:"scope"`
		Token     string     `json:"token"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
	if err := c.callJSON(e.ctx, http.MethodPost, "/tokens", body, &t); err != nil {
		return err
	}
	until := "never expires"
	if t.ExpiresAt != nil {
		until = "expires " + t.ExpiresAt.Local().Format(time.DateOnly)
	}
	fmt.Fprintf(e.stderr, "token %d %q (%s, %s); its secret is shown only now:\n", t.ID, t.Name, t.Scope, until)
	_, err = fmt.Fprintln(e.stdout, t.Token)
	return err
}

// maxListPages bounds how many pages a list command reads.
const maxListPages = 100

func tokenList(e *env, args []string) error {
	const name = "knobs token list"
	fs := flagSet(name, "knobs token list")
	srv := addServerFlags(fs)
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef(name, "unexpected %q", rest[0])
	}
	c, err := srv.client(e)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCOPE\tPREFIX\tCREATED\tLAST USED\tEXPIRES")
	cursor := ""
	for range maxListPages {
		var page struct {
			Items []struct {
				ID        int64      `json:"id"`
				Name      string     `json:"name"`
				Scope     string     `json:"scope"`
				Prefix    string     `json:"prefix"`
				CreatedAt time.Time  `json:"created_at"`
				LastUsed  *time.Time `json:"last_used_at"`
				ExpiresAt *time.Time `json:"expires_at"`
			} `json:"items"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := c.callJSON(e.ctx, http.MethodGet, "/tokens?limit=100&cursor="+url.QueryEscape(cursor), nil, &page); err != nil {
			return err
		}
		for _, t := range page.Items {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s…\t%s\t%s\t%s\n", t.ID, t.Name, t.Scope, t.Prefix,
				t.CreatedAt.Local().Format(time.DateOnly), when(t.LastUsed, "never"), when(t.ExpiresAt, "never"))
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			break
		}
		cursor = *page.NextCursor
	}
	return tw.Flush()
}

// when is t as a date and time, or none when it is null.
func when(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.Local().Format("2006-01-02 15:04")
}

func tokenRevoke(e *env, args []string) error {
	const name = "knobs token revoke"
	fs := flagSet(name, "knobs token revoke ID   (the ID that knobs token list shows)")
	srv := addServerFlags(fs)
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef(name, "give one token id")
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || id <= 0 {
		return usagef(name, "%q is not a token id: knobs token list shows them", rest[0])
	}
	c, err := srv.client(e)
	if err != nil {
		return err
	}
	if _, _, err := c.call(e.ctx, http.MethodDelete, "/tokens/"+rest[0], nil); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "revoked token %d\n", id)
	return err
}
