package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// makeRecipe is the commands of a Makefile target that run Go, with
// $(GO) read as go, and without make's @.
func makeRecipe(t *testing.T, makefile, target string) []string {
	t.Helper()
	var out []string
	in := false
	for _, line := range strings.Split(makefile, "\n") {
		if !strings.HasPrefix(line, "\t") {
			in = strings.HasPrefix(line, target+":")
			continue
		}
		cmd := strings.TrimPrefix(strings.TrimSpace(line), "@")
		if in && strings.Contains(cmd, "$(GO) ") {
			out = append(out, strings.ReplaceAll(cmd, "$(GO)", "go"))
		}
	}
	if len(out) == 0 {
		t.Fatalf("the Makefile's %s target runs no Go command", target)
	}
	return out
}

// instruction is one Dockerfile instruction.
type instruction struct{ op, args string }

// dockerfile reads the instructions, continuation lines joined and
// comments dropped.
func dockerfile(t *testing.T) []instruction {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur string
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		cur += trimmed
		op, args, _ := strings.Cut(cur, " ")
		out = append(out, instruction{strings.ToUpper(op), strings.Join(strings.Fields(args), " ")})
		cur = ""
	}
	return out
}

// withoutOutput is a go build command's words without its -o argument,
// which names where the binary goes.
func withoutOutput(cmd string) []string {
	words := strings.Fields(cmd)
	if i := slices.Index(words, "-o"); i >= 0 && i+1 < len(words) {
		words = slices.Delete(words, i, i+2)
	}
	return words
}

// The image cannot be built here (no registry), so its build is held to
// the Makefile's: the Dockerfile runs the same templ generate and the
// same go build (static, CGO_ENABLED=0), in that order, and ships the
// binary on a small base as a non-root user whose HEALTHCHECK is knobs
// health (there is no curl in it).
func TestDockerfileBuildsAsTheMakefileDoes(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	generate := makeRecipe(t, string(mk), "generate")
	build := makeRecipe(t, string(mk), "build")
	if len(generate) != 1 || len(build) != 1 {
		t.Fatalf("want one Go command each in make generate and make build: %q %q", generate, build)
	}
	if !strings.Contains(build[0], "CGO_ENABLED=0") {
		t.Errorf("make build is not static: %q", build[0])
	}

	ins := dockerfile(t)
	var runs []string
	var stages []string
	var user, health, entrypoint string
	for _, in := range ins {
		switch in.op {
		case "RUN":
			runs = append(runs, in.args)
		case "FROM":
			stages = append(stages, in.args)
			user, health, entrypoint = "", "", "" // these count in the last stage
		case "USER":
			user = in.args
		case "HEALTHCHECK":
			health = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		}
	}
	gen := slices.Index(runs, generate[0])
	if gen < 0 {
		t.Errorf("the Dockerfile does not run make generate's %q; it runs %q", generate[0], runs)
	}
	bld := slices.IndexFunc(runs, func(r string) bool { return slices.Equal(withoutOutput(r), withoutOutput(build[0])) })
	if bld < 0 {
		t.Errorf("the Dockerfile does not run make build's %q (the output path aside); it runs %q", build[0], runs)
	}
	if gen >= 0 && bld >= 0 && gen > bld {
		t.Error("the Dockerfile builds before it generates the templ code")
	}

	if len(stages) < 2 {
		t.Fatalf("want a build stage and a small final stage: %q", stages)
	}
	final := stages[len(stages)-1]
	if !strings.HasPrefix(final, "gcr.io/distroless/static") && final != "scratch" {
		t.Errorf("the final stage is %q, want distroless static or scratch", final)
	}
	if uid, _, _ := strings.Cut(user, ":"); user == "" || uid == "root" || uid == "0" {
		t.Errorf("the image runs as %q, want a non-root user", user)
	}
	if !strings.Contains(health, `CMD ["/usr/local/bin/knobs", "health"]`) {
		t.Errorf("HEALTHCHECK %q does not run knobs health", health)
	}
	if entrypoint != `["/usr/local/bin/knobs"]` {
		t.Errorf("ENTRYPOINT %q", entrypoint)
	}
}

// The compose file and the Litestream example agree with the image: the
// database Litestream replicates is the one Knobs writes, on the volume
// both mount.
func TestComposeAndLitestreamAgreeWithTheImage(t *testing.T) {
	var env string
	for _, in := range dockerfile(t) {
		if in.op == "ENV" {
			env += " " + in.args
		}
	}
	if !strings.Contains(env, "KNOBS_DB=/data/knobs.db") {
		t.Fatalf("the image's ENV %q does not put the database at /data/knobs.db", env)
	}
	var compose struct {
		Services map[string]struct {
			Volumes     []string          `json:"volumes"`
			EnvFile     any               `json:"env_file"`
			Environment map[string]string `json:"environment"`
			Profiles    []string          `json:"profiles"`
		} `json:"services"`
	}
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	knobs, lite := compose.Services["knobs"], compose.Services["litestream"]
	if !slices.Contains(knobs.Volumes, "knobs-data:/data") || !slices.Contains(lite.Volumes, "knobs-data:/data") {
		t.Errorf("knobs and litestream do not share the data volume: %q %q", knobs.Volumes, lite.Volumes)
	}
	if knobs.EnvFile == nil {
		t.Error("knobs takes no env file (its secret)")
	}
	if _, ok := knobs.Environment["KNOBS_SECRET"]; ok {
		t.Error("the compose file holds the secret; it belongs in the env file")
	}
	if !slices.Contains(lite.Profiles, "litestream") {
		t.Error("the Litestream sidecar is not optional (no profile)")
	}
	var ls struct {
		DBs []struct {
			Path string `json:"path"`
		} `json:"dbs"`
	}
	b, err = os.ReadFile("litestream.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &ls); err != nil {
		t.Fatalf("litestream.yml: %v", err)
	}
	if len(ls.DBs) != 1 || ls.DBs[0].Path != "/data/knobs.db" {
		t.Errorf("litestream.yml replicates %+v, want /data/knobs.db", ls.DBs)
	}
}
