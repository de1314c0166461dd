package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"knobs/preset"
)

const presetsUsage = `knobs presets list [--query Q] [--json]
       knobs presets pull NAME [--label L | --version N] > file.json
       knobs presets push file.json [--base-version N] [--visibility private|team]
       knobs presets render NAME [--label L | --version N] [--var k=v ...] [--set param=json ...]

NAME is a preset's name or id. pull writes the preset file exactly as the
preset page exports it (by default the version its production label points
at, else the latest); push creates the preset named in the file, or adds a
version to it when its content changed; render prints the request Knobs
would send upstream: {"provider", "endpoint", "body"}.`

func presetsCommand(e *env, args []string) error {
	const name = "knobs presets"
	if len(args) == 0 {
		return usagef(name, "give list, pull, push or render")
	}
	switch args[0] {
	case "list":
		return presetsList(e, args[1:])
	case "pull":
		return presetsPull(e, args[1:])
	case "push":
		return presetsPush(e, args[1:])
	case "render":
		return presetsRender(e, args[1:])
	case "-h", "-help", "--help":
		_, err := e.parse(flagSet(name, presetsUsage), args)
		return err
	}
	return usagef(name, "unknown subcommand %q: give list, pull, push or render", args[0])
}

// presetPath is /presets/{ref}, ref a name or an id.
func presetPath(ref string) string { return "/presets/" + url.PathEscape(ref) }

// versionFlags are --label and --version, which choose a preset's version.
type versionFlags struct {
	label   *string
	version *int
}

func addVersionFlags(fs *flag.FlagSet) versionFlags {
	return versionFlags{
		label:   fs.String("label", "", "the version this label points at, such as production or staging"),
		version: fs.Int("version", 0, "this version number"),
	}
}

func (v versionFlags) check(cmd string) error {
	if *v.label != "" && *v.version != 0 {
		return usagef(cmd, "give --label or --version, not both")
	}
	if *v.version < 0 {
		return usagef(cmd, "--version %d: versions count from 1", *v.version)
	}
	return nil
}

func presetsPull(e *env, args []string) error {
	const name = "knobs presets pull"
	fs := flagSet(name, "knobs presets pull NAME [--label L | --version N] > file.json")
	srv := addServerFlags(fs)
	vf := addVersionFlags(fs)
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef(name, "give one preset name or id")
	}
	if err := vf.check(name); err != nil {
		return err
	}
	c, err := srv.client(e)
	if err != nil {
		return err
	}
	q := url.Values{}
	if *vf.label != "" {
		q.Set("label", *vf.label)
	}
	if *vf.version != 0 {
		q.Set("version", strconv.Itoa(*vf.version))
	}
	path := presetPath(rest[0])
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	raw, _, err := c.call(e.ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(raw)
	return err
}

// presetSummary is what POST and PUT /presets answer, and the list holds.
type presetSummary struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Visibility  string   `json:"visibility"`
	Owner       string   `json:"owner"`
	Version     int      `json:"version"`
	Labels      []struct {
		Name      string `json:"name"`
		Version   int    `json:"version"`
		Protected bool   `json:"protected"`
	} `json:"labels"`
	UpdatedAt string `json:"updated_at"`
}

func presetsPush(e *env, args []string) error {
	const name = "knobs presets push"
	fs := flagSet(name, "knobs presets push file.json [--base-version N] [--visibility private|team]")
	srv := addServerFlags(fs)
	base := fs.Int("base-version", 0, "the version your file was pulled from (default: the latest); Knobs refuses the push when a newer one was saved since")
	visibility := fs.String("visibility", "", "who sees the preset: private (a new preset's default) or team")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef(name, "give one preset file")
	}
	if *visibility != "" && *visibility != "private" && *visibility != "team" {
		return usagef(name, "--visibility %q: want private or team", *visibility)
	}
	if *base < 0 {
		return usagef(name, "--base-version %d: versions count from 1", *base)
	}
	file, presetName, err := readPresetFile(rest[0])
	if err != nil {
		return err
	}
	c, err := srv.client(e)
	if err != nil {
		return err
	}

	_, hdr, err := c.call(e.ctx, http.MethodGet, presetPath(presetName), nil)
	if statusIs(err, http.StatusNotFound) {
		body := file
		if *visibility != "" {
			body = withMember(file, "visibility", *visibility)
		}
		var s presetSummary
		if err := c.callJSON(e.ctx, http.MethodPost, "/presets", body, &s); err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "created preset %d version %d\n", s.ID, s.Version)
		return err
	}
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(hdr.Get("X-Knobs-Preset-Id"), 10, 64)
	if err != nil {
		return fmt.Errorf("Knobs answered preset %q without its id (X-Knobs-Preset-Id); is the server older than this knobs?", presetName)
	}
	if *base == 0 {
		if *base, err = c.latestVersion(e, id, presetName); err != nil {
			return err
		}
	}
	body := withMember(file, "base_version", *base)
	if *visibility != "" {
		body = withMember(body, "visibility", *visibility)
	}
	var s presetSummary
	err = c.callJSON(e.ctx, http.MethodPut, "/presets/"+strconv.FormatInt(id, 10), body, &s)
	if statusIs(err, http.StatusConflict) {
		return fmt.Errorf("preset %d has a newer version than %d, which your file is based on: pull it, bring your changes over and push again\n(%w)", id, *base, err)
	}
	if err != nil {
		return err
	}
	if s.Version == *base {
		_, err = fmt.Fprintf(e.stdout, "preset %d: unchanged (version %d)\n", s.ID, s.Version)
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "preset %d: version %d\n", s.ID, s.Version)
	return err
}

// readPresetFile reads a preset file and the name it holds.
func readPresetFile(path string) ([]byte, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, preset.MaxSize+1))
	if err != nil {
		return nil, "", fmt.Errorf("unable to read %s: %w", path, err)
	}
	if len(raw) > preset.MaxSize {
		return nil, "", fmt.Errorf("%s is larger than a preset file may be (%d KiB)", path, preset.MaxSize>>10)
	}
	var head struct {
		Format string `json:"format"`
		Name   string `json:"name"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, "", fmt.Errorf("%s is not a preset file (JSON as knobs presets pull writes it): %w", path, err)
	}
	if head.Format != preset.FormatName || strings.TrimSpace(head.Name) == "" {
		return nil, "", fmt.Errorf("%s is not a preset file: it needs \"format\": %q and a \"name\", as knobs presets pull writes it", path, preset.FormatName)
	}
	return raw, head.Name, nil
}

// withMember returns the JSON object obj with "key": value added at its
// end, the rest of its bytes as they were.
func withMember(obj []byte, key string, value any) []byte {
	trimmed := bytes.TrimRight(obj, " \t\r\n")
	v, _ := json.Marshal(value)
	k, _ := json.Marshal(key)
	out := make([]byte, 0, len(trimmed)+len(k)+len(v)+3)
	out = append(out, trimmed[:len(trimmed)-1]...) // readPresetFile made sure it is an object
	out = append(out, ',')
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, v...)
	return append(out, '}')
}

// latestVersion is preset id's latest version number, from the list:
// GET /presets/{name} answers the production label's version by default.
func (c *client) latestVersion(e *env, id int64, name string) (int, error) {
	found := 0
	err := c.eachPreset(e, name, func(s presetSummary) bool {
		if s.ID == id {
			found = s.Version
			return false
		}
		return true
	})
	if err == nil && found == 0 {
		err = fmt.Errorf("preset %d is not in the presets list; give --base-version", id)
	}
	return found, err
}

// eachPreset calls fn with each preset the list gives for query, until fn
// returns false or the list ends.
func (c *client) eachPreset(e *env, query string, fn func(presetSummary) bool) error {
	cursor := ""
	for range maxListPages {
		var page struct {
			Items      []presetSummary `json:"items"`
			NextCursor *string         `json:"next_cursor"`
		}
		q := url.Values{"limit": {"100"}}
		if query != "" {
			q.Set("q", query)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		if err := c.callJSON(e.ctx, http.MethodGet, "/presets?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		for _, s := range page.Items {
			if !fn(s) {
				return nil
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return nil
		}
		cursor = *page.NextCursor
	}
	return nil
}

func presetsRender(e *env, args []string) error {
	const name = "knobs presets render"
	fs := flagSet(name, "knobs presets render NAME [--label L | --version N] [--var k=v ...] [--set param=json ...]")
	srv := addServerFlags(fs)
	vf := addVersionFlags(fs)
	body := map[string]any{}
	var vars, sets listFlag
	fs.Var(&vars, "var", "a value for a {{placeholder}}: name=value (repeatable)")
	fs.Var(&sets, "set", "a request body parameter over the preset's: name=JSON, such as temperature=0.2 (repeatable)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef(name, "give one preset name or id")
	}
	if err := vf.check(name); err != nil {
		return err
	}
	variables, err := pairs(name, "var", vars)
	if err != nil {
		return err
	}
	overrides, err := jsonPairs(name, sets)
	if err != nil {
		return err
	}
	if len(overrides) > 0 {
		body["overrides"] = overrides
	}
	if *vf.label != "" {
		body["label"] = *vf.label
	}
	if *vf.version != 0 {
		body["version"] = *vf.version
	}
	if variables != nil {
		body["variables"] = variables
	}
	c, err := srv.client(e)
	if err != nil {
		return err
	}
	raw, _, err := c.call(e.ctx, http.MethodPost, presetPath(rest[0])+"/render", body)
	if err != nil {
		return err
	}
	// The body's bytes are what a run sends: printed as they came.
	if !bytes.HasSuffix(raw, []byte("\n")) {
		raw = append(raw, '\n')
	}
	_, err = e.stdout.Write(raw)
	return err
}

func presetsList(e *env, args []string) error {
	const name = "knobs presets list"
	fs := flagSet(name, "knobs presets list [--query Q] [--json]")
	srv := addServerFlags(fs)
	query := fs.String("query", "", "only the presets this search finds")
	asJSON := fs.Bool("json", false, "print the list as a JSON array")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef(name, "unexpected %q (search with --query)", rest[0])
	}
	c, err := srv.client(e)
	if err != nil {
		return err
	}
	var all []presetSummary
	if err := c.eachPreset(e, *query, func(s presetSummary) bool { all = append(all, s); return true }); err != nil {
		return err
	}
	if *asJSON {
		if all == nil {
			all = []presetSummary{}
		}
		b, err := json.MarshalIndent(all, "", "  ")
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(append(b, '\n'))
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tVERSION\tLABELS\tVISIBILITY\tUPDATED")
	for _, s := range all {
		var labels []string
		for _, l := range s.Labels {
			labels = append(labels, l.Name+"→"+strconv.Itoa(l.Version))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\n", s.ID, s.Name, s.Version, strings.Join(labels, " "), s.Visibility, s.UpdatedAt)
	}
	return tw.Flush()
}
