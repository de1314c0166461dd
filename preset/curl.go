package preset

import (
	"net/url"
	"strings"

	"knobs/llm"
)

// curlCommand reports whether text is a curl command, and returns it
// without a leading shell prompt ("$ ").
func curlCommand(text string) (string, bool) {
	text = strings.TrimPrefix(text, "$ ")
	first, _, _ := strings.Cut(strings.TrimLeft(text, " \t"), " ")
	first, _, _ = strings.Cut(first, "\t")
	first, _, _ = strings.Cut(first, "\n")
	first = strings.TrimSuffix(first, "\\")
	if first == "curl" || first == "curl.exe" || strings.HasSuffix(first, "/curl") {
		return text, true
	}
	return "", false
}

// shellWords splits a command as a POSIX shell would, without expanding
// anything: single quotes, double quotes (where \ escapes $ ` " \ and a
// newline), $'...' with its backslash escapes, a backslash outside
// quotes, backslash-newline continuations and # comments. An unquoted
// | ; & or > ends the command.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			end()
		case c == '|' || c == ';' || c == '&' || c == '>':
			end()
			return words, nil
		case c == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				if s[i] == '\n' {
					inWord = w.Len() > 0
					continue
				}
				w.WriteByte(s[i])
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, problem("The curl command has a ' quote that is never closed.")
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			inWord = true
			n, err := ansiQuoted(s[i+2:], &w)
			if err != nil {
				return nil, err
			}
			i += n + 1
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				w.WriteByte(s[i])
			}
			if !closed {
				return nil, problem(`The curl command has a " quote that is never closed.`)
			}
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	end()
	return words, nil
}

// ansiQuoted reads the inside of $'...' from s into w and returns how
// many bytes it took, the closing quote included.
func ansiQuoted(s string, w *strings.Builder) (int, error) {
	escapes := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', '\\': '\\', '\'': '\'', '"': '"', '0': 0, 'a': '\a', 'b': '\b', 'e': 0x1b, 'f': '\f', 'v': '\v'}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			return i + 1, nil
		case '\\':
			if i+1 < len(s) {
				i++
				if e, ok := escapes[s[i]]; ok {
					w.WriteByte(e)
				} else {
					w.WriteByte('\\')
					w.WriteByte(s[i])
				}
				continue
			}
		}
		w.WriteByte(s[i])
	}
	return 0, problem("The curl command has a $' quote that is never closed.")
}

// curlValueOptions are the curl options that take a value which is not
// the body, so that the value is not mistaken for the URL. Options not
// listed are taken to have no value.
var curlValueOptions = map[string]bool{
	"-H": true, "--header": true, "-X": true, "--request": true, "-u": true, "--user": true,
	"-o": true, "--output": true, "-A": true, "--user-agent": true, "-e": true, "--referer": true,
	"-b": true, "--cookie": true, "-c": true, "--cookie-jar": true, "-m": true, "--max-time": true,
	"--connect-timeout": true, "-x": true, "--proxy": true, "-w": true, "--write-out": true,
	"--retry": true, "--retry-delay": true, "--retry-max-time": true, "--cacert": true, "--capath": true,
	"-E": true, "--cert": true, "--key": true, "--cert-type": true, "--key-type": true,
	"--oauth2-bearer": true, "--resolve": true, "--connect-to": true, "--interface": true,
	"--limit-rate": true, "--max-filesize": true, "--output-dir": true, "-r": true, "--range": true,
	"-U": true, "--proxy-user": true, "--aws-sigv4": true, "--variable": true, "-K": true, "--config": true,
	"-y": true, "--speed-time": true, "-Y": true, "--speed-limit": true, "-z": true, "--time-cond": true,
	"-C": true, "--continue-at": true, "-Q": true, "--quote": true, "-t": true, "--telnet-option": true,
	"-P": true, "--ftp-port": true, "--url-query": true, "--trace": true, "--trace-ascii": true,
	"--stderr": true, "--dns-servers": true, "--keepalive-time": true, "--expect100-timeout": true,
}

// curlDataOptions send a body; -d and --data-ascii drop CR and LF from
// it as curl does.
var curlDataOptions = map[string]bool{
	"-d": true, "--data": true, "--data-ascii": true, "--data-raw": true, "--data-binary": true, "--json": true,
}

// curlArgs is what importCurl needs of a command line.
type curlArgs struct {
	url     string
	host    string // a Host header, when the URL's host is not the provider's
	body    string
	bodyOpt string // the option the body came with
}

func parseCurl(words []string) (curlArgs, error) {
	var a curlArgs
	var urls []string
	take := func(opt, val string) error {
		switch {
		case opt == "--url":
			urls = append([]string{val}, urls...)
		case opt == "-H" || opt == "--header":
			// Headers are never kept: the Authorization one holds a key.
			if name, v, ok := strings.Cut(val, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "host") {
				a.host = strings.TrimSpace(v)
			}
		case opt == "-F" || opt == "--form" || opt == "--form-string":
			return problem("The curl command sends a form (%s); Knobs imports a JSON body.", opt)
		case opt == "--data-urlencode":
			return problem("The curl command sends URL-encoded data (%s); Knobs imports a JSON body.", opt)
		case curlDataOptions[opt]:
			if a.bodyOpt != "" {
				return problem("The curl command sends more than one body (%s and %s); keep one.", a.bodyOpt, opt)
			}
			if strings.HasPrefix(val, "@") && opt != "--data-raw" {
				return problem("The curl command reads its body from a file (%s %s); paste the body itself instead.", opt, val)
			}
			if opt == "-d" || opt == "--data" || opt == "--data-ascii" {
				val = strings.NewReplacer("\r", "", "\n", "").Replace(val)
			}
			a.body, a.bodyOpt = val, opt
		}
		return nil
	}
	takesValue := func(opt string) bool {
		return curlValueOptions[opt] || curlDataOptions[opt] || opt == "--url" || opt == "-F" || opt == "--form" ||
			opt == "--form-string" || opt == "--data-urlencode"
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			urls = append(urls, words[i+1:]...)
			i = len(words)
		case strings.HasPrefix(w, "--"):
			opt, val, hasVal := strings.Cut(w, "=")
			if !takesValue(opt) {
				continue
			}
			if !hasVal {
				if i+1 >= len(words) {
					return a, problem("The curl command ends before the value of %s.", opt)
				}
				i++
				val = words[i]
			}
			if err := take(opt, val); err != nil {
				return a, err
			}
		case strings.HasPrefix(w, "-") && len(w) > 1:
			// Short options may be grouped (-sSd '{...}' or -d'{...}');
			// the first that takes a value takes the rest of the word or
			// the next one.
			for j := 1; j < len(w); j++ {
				opt := "-" + w[j:j+1]
				if !takesValue(opt) {
					continue
				}
				val := w[j+1:]
				if val == "" {
					if i+1 >= len(words) {
						return a, problem("The curl command ends before the value of %s.", opt)
					}
					i++
					val = words[i]
				}
				if err := take(opt, val); err != nil {
					return a, err
				}
				break
			}
		default:
			urls = append(urls, w)
		}
	}
	// The URL is the first word that looks like one; with options curl has
	// that are not in the lists above, a value may come first.
	for _, u := range urls {
		if strings.Contains(u, "://") || strings.Contains(u, "/") {
			a.url = u
			break
		}
	}
	if a.url == "" && len(urls) > 0 {
		a.url = urls[0]
	}
	return a, nil
}

// providerHosts maps a known provider's API host to its id.
var providerHosts = map[string]string{
	"api.cerebras.ai": "cerebras",
	"api.x.ai":        "xai",
}

// importCurl reads the body of a curl command; the URL gives the
// endpoint and, for a known host, the provider.
func importCurl(cmd string) (File, error) {
	words, err := shellWords(cmd)
	if err != nil {
		return File{}, err
	}
	a, err := parseCurl(words)
	if err != nil {
		return File{}, err
	}
	if a.bodyOpt == "" {
		return File{}, problem("The curl command sends no body: expected -d, --data, --data-raw, --data-binary or --json with the request's JSON.")
	}
	var endpoint llm.Endpoint
	provider := ""
	if a.url != "" {
		raw := a.url
		if !strings.Contains(raw, "://") {
			raw = "https://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil {
			return File{}, problem("The curl command's URL %q cannot be read: %v.", a.url, err)
		}
		host := u.Hostname()
		if a.host != "" {
			if h, _, ok := strings.Cut(a.host, ":"); ok {
				a.host = h
			}
			if _, known := providerHosts[strings.ToLower(host)]; !known {
				host = a.host
			}
		}
		provider = providerHosts[strings.ToLower(host)]
		switch path := strings.TrimRight(u.Path, "/"); {
		case strings.HasSuffix(path, "/chat/completions"):
			endpoint = llm.EndpointChat
		case strings.HasSuffix(path, "/completions"):
			endpoint = llm.EndpointCompletion
		case path == "":
		default:
			return File{}, problem("The curl command posts to %s; Knobs imports requests to /v1/chat/completions and /v1/completions.", u.Path)
		}
	}
	body := []byte(strings.TrimSpace(a.body))
	ms, err := members(body)
	if err != nil {
		e := notJSON(body, err).(*ImportError)
		e.Problem = "The curl command's body" + strings.TrimPrefix(e.Problem, "The file")
		return File{}, e
	}
	return importBody(ms, endpoint, provider)
}
