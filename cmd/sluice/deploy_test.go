package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
)

// composeFile is the part of deploy/compose.yaml the test reads.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Secrets     []string          `yaml:"secrets"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck struct {
			Test    []string `yaml:"test"`
			Disable bool     `yaml:"disable"`
		} `yaml:"healthcheck"`
		Volumes []string `yaml:"volumes"`
	} `yaml:"services"`
	Secrets map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

// envOnly are the settings read from the environment alone (secrets).
var envOnly = []string{"SLUICE_MASTER_KEY", "SLUICE_MASTER_KEY_PREVIOUS", "SLUICE_ADMIN_TOKEN"}

// checkSluiceArgs reports whether args (after the binary) name a sluice
// subcommand and env names only flags of it (SLUICE_ + the flag name).
func checkSluiceArgs(t *testing.T, where string, args []string, env map[string]string) *cobra.Command {
	t.Helper()
	cmd, rest, err := newRootCmd().Find(args)
	if err != nil || cmd.Parent() == nil {
		t.Errorf("%s: %q is not a sluice command: %v", where, args, err)
		return nil
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: %q: %v", where, args, err)
	}
	for name := range env {
		if !strings.HasPrefix(name, "SLUICE_") || slices.Contains(envOnly, name) {
			continue
		}
		flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "SLUICE_"), "_", "-"))
		if cmd.Flags().Lookup(flag) == nil {
			t.Errorf("%s: %s sets --%s, which sluice %s does not have", where, name, flag, cmd.Name())
		}
	}
	return cmd
}

// TestComposeTopology validates deploy/compose.yaml offline: the
// services of the topology, that every Sluice service runs a real
// subcommand with real flags (environment), has a healthcheck that is a
// real command, reads the master key from a declared secret, and starts
// after the migration; that the load balancer sends /v1 to both proxies
// and the rest to the admin process. With `docker compose` (or podman
// compose) installed, it also checks that the tool accepts the file.
func TestComposeTopology(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "compose.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	// Keys next to a merge (<<) override the merged ones, as in YAML 1.1;
	// goccy/go-yaml calls that a duplicate unless told otherwise.
	if err := yaml.UnmarshalWithOptions(raw, &f, yaml.AllowDuplicateMapKey()); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	for _, name := range []string{"postgres", "redis", "clickhouse", "migrate", "admin", "proxy-1", "proxy-2", "lb"} {
		if _, ok := f.Services[name]; !ok {
			t.Errorf("no service %s", name)
		}
	}
	wantCmd := map[string]string{"migrate": "migrate", "admin": "admin", "proxy-1": "proxy", "proxy-2": "proxy"}
	for name, s := range f.Services {
		for dep := range s.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("%s depends on %s, which is not a service", name, dep)
			}
		}
		if name != "migrate" && !s.Healthcheck.Disable && len(s.Healthcheck.Test) == 0 {
			t.Errorf("%s has no healthcheck", name)
		}
		want, isSluice := wantCmd[name]
		if !isSluice {
			continue
		}
		cmd := checkSluiceArgs(t, name, s.Command, s.Environment)
		if cmd != nil && cmd.Name() != want {
			t.Errorf("%s runs sluice %s, want sluice %s", name, cmd.Name(), want)
		}
		if !strings.Contains(s.Image, "sluice") {
			t.Errorf("%s runs image %q, want the Sluice image", name, s.Image)
		}
		if name != "migrate" {
			if s.DependsOn["migrate"].Condition != "service_completed_successfully" {
				t.Errorf("%s does not wait for the migration to complete", name)
			}
			hc := s.Healthcheck.Test
			if len(hc) < 3 || hc[0] != "CMD" || hc[1] != "/usr/local/bin/sluice" {
				t.Errorf("%s: healthcheck %q, want CMD /usr/local/bin/sluice … (the image has no shell)", name, hc)
			} else {
				checkSluiceArgs(t, name+" healthcheck", hc[2:], nil)
			}
			if s.Environment["SLUICE_DRAIN_DELAY"] == "" {
				t.Errorf("%s has no drain delay: a restart would cut requests the load balancer still sends", name)
			}
		}
		// The master key: from a declared secret's file, never a value.
		if _, ok := s.Environment["SLUICE_MASTER_KEY"]; ok {
			t.Errorf("%s passes the master key in the environment", name)
		}
		file := s.Environment["SLUICE_MASTER_KEY_FILE"]
		secret := strings.TrimPrefix(file, "/run/secrets/")
		if file == secret || !slices.Contains(s.Secrets, secret) {
			t.Errorf("%s: SLUICE_MASTER_KEY_FILE=%q is not one of its secrets %q", name, file, s.Secrets)
		} else if f.Secrets[secret].File == "" {
			t.Errorf("%s: secret %s is not declared at the top level", name, secret)
		}
	}

	// The load balancer: /v1 to both proxies, the rest to the admin.
	conf, err := os.ReadFile(filepath.Join("..", "..", "deploy", "compose", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if vols := f.Services["lb"].Volumes; len(vols) != 1 || !strings.HasPrefix(vols[0], "./compose/nginx.conf:") {
		t.Errorf("lb mounts %q, want ./compose/nginx.conf", vols)
	}
	upstreams := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?s)upstream (\w+) \{(.*?)\}`).FindAllStringSubmatch(string(conf), -1) {
		for _, s := range regexp.MustCompile(`server ([\w.-]+:\d+)`).FindAllStringSubmatch(m[2], -1) {
			upstreams[m[1]] = append(upstreams[m[1]], s[1])
		}
	}
	routes := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)location ([^{]+?) \{[^}]*?proxy_pass http://(\w+);`).FindAllStringSubmatch(string(conf), -1) {
		routes[m[1]] = m[2]
	}
	if got := upstreams[routes["/v1/"]]; !slices.Equal(got, []string{"proxy-1:8080", "proxy-2:8080"}) {
		t.Errorf("/v1/ goes to %q, want proxy-1:8080 and proxy-2:8080", got)
	}
	if got := upstreams[routes["/"]]; !slices.Equal(got, []string{"admin:8080"}) {
		t.Errorf("/ (the admin API and the dashboard) goes to %q, want admin:8080", got)
	}

	if _, err := exec.LookPath("docker"); err == nil {
		if out, err := exec.Command("docker", "compose", "version").CombinedOutput(); err != nil {
			t.Logf("docker compose is not available (%s): the file is checked by this test alone", strings.TrimSpace(string(out)))
			return
		}
		cmd := exec.Command("docker", "compose", "-f", path, "config", "--quiet")
		cmd.Env = append(os.Environ(), "SLUICE_IMAGE=localhost/sluice:test")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("docker compose config: %v\n%s", err, out)
		}
	} else {
		t.Log("docker is not installed: the file is checked by this test alone")
	}
}
