package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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

// k8sObject is the part of a rendered Kubernetes object the test reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Replicas     int              `yaml:"replicas"`
		MinAvailable int              `yaml:"minAvailable"`
		Selector     k8sSelector      `yaml:"selector"`
		Template     k8sPodTemplate   `yaml:"template"`
		Ports        []k8sServicePort `yaml:"ports"`
	} `yaml:"spec"`
}

// k8sSelector is a Deployment's or PodDisruptionBudget's selector
// ({matchLabels: …}) or a Service's (the labels themselves).
type k8sSelector map[string]any

// labels returns the labels the selector requires.
func (s k8sSelector) labels() map[string]string {
	m, ok := s["matchLabels"].(map[string]any)
	if !ok {
		m = s
	}
	out := map[string]string{}
	for k, v := range m {
		if v, ok := v.(string); ok {
			out[k] = v
		}
	}
	return out
}

type k8sServicePort struct {
	Port       int    `yaml:"port"`
	TargetPort string `yaml:"targetPort"`
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type k8sPodTemplate struct {
	Metadata struct {
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               struct {
			RunAsNonRoot bool `yaml:"runAsNonRoot"`
			RunAsUser    int  `yaml:"runAsUser"`
		} `yaml:"securityContext"`
		Containers []struct {
			Name    string   `yaml:"name"`
			Image   string   `yaml:"image"`
			Args    []string `yaml:"args"`
			EnvFrom []struct {
				ConfigMapRef struct {
					Name string `yaml:"name"`
				} `yaml:"configMapRef"`
			} `yaml:"envFrom"`
			Ports []struct {
				Name          string `yaml:"name"`
				ContainerPort int    `yaml:"containerPort"`
			} `yaml:"ports"`
			ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
			LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
			Resources      struct {
				Requests map[string]string `yaml:"requests"`
			} `yaml:"resources"`
			VolumeMounts []struct {
				Name      string `yaml:"name"`
				MountPath string `yaml:"mountPath"`
			} `yaml:"volumeMounts"`
		} `yaml:"containers"`
		Volumes []struct {
			Name   string `yaml:"name"`
			Secret *struct {
				SecretName string `yaml:"secretName"`
			} `yaml:"secret"`
		} `yaml:"volumes"`
	} `yaml:"spec"`
}

// TestKubernetesBase renders deploy/k8s with `kubectl kustomize` (offline)
// and checks the objects: separate proxy and admin Deployments running
// real subcommands with real settings, Services selecting their pods, a
// PodDisruptionBudget for the proxies, readiness and liveness probes on
// /healthz at the listen port, resource requests, a non-root user, the
// master key from a Secret mounted where SLUICE_MASTER_KEY_FILE points,
// and a termination grace that covers the drain delay and the shutdown
// grace. Skipped, saying so, without kubectl.
func TestKubernetesBase(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed: the Kustomize base is not rendered")
	}
	out, err := exec.Command("kubectl", "kustomize", filepath.Join("..", "..", "deploy", "k8s")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize deploy/k8s: %v", err)
	}
	objs := map[string]k8sObject{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var o k8sObject
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("parse the rendered output: %v\n%s", err, doc)
		}
		objs[o.Kind+"/"+o.Metadata.Name] = o
	}
	cfg, ok := objs["ConfigMap/sluice-config"]
	if !ok {
		t.Fatalf("no ConfigMap sluice-config in %v", slices.Sorted(maps.Keys(objs)))
	}
	secret, ok := objs["Secret/sluice-master-key"]
	if !ok || secret.StringData["master_key"] == "" && secret.Data["master_key"] == "" {
		t.Fatal("no Secret sluice-master-key with a master_key entry")
	}
	drain, err1 := time.ParseDuration(cfg.Data["SLUICE_DRAIN_DELAY"])
	grace, err2 := time.ParseDuration(cfg.Data["SLUICE_SHUTDOWN_GRACE"])
	if err1 != nil || err2 != nil || drain <= 0 {
		t.Fatalf("SLUICE_DRAIN_DELAY %q and SLUICE_SHUTDOWN_GRACE %q: want durations, a drain delay above 0",
			cfg.Data["SLUICE_DRAIN_DELAY"], cfg.Data["SLUICE_SHUTDOWN_GRACE"])
	}
	listenPort := strings.TrimPrefix(cfg.Data["SLUICE_LISTEN"], ":")

	pods := map[string]k8sPodTemplate{"Job/sluice-migrate": objs["Job/sluice-migrate"].Spec.Template}
	for _, comp := range []string{"proxy", "admin"} {
		d, ok := objs["Deployment/sluice-"+comp]
		if !ok {
			t.Errorf("no Deployment sluice-%s", comp)
			continue
		}
		pods["Deployment/sluice-"+comp] = d.Spec.Template
		for k, v := range d.Spec.Selector.labels() {
			if d.Spec.Template.Metadata.Labels[k] != v {
				t.Errorf("sluice-%s: the selector %s=%s does not match its pods", comp, k, v)
			}
		}
		if d.Spec.Template.Spec.Containers[0].Args[0] != comp {
			t.Errorf("sluice-%s runs %q", comp, d.Spec.Template.Spec.Containers[0].Args)
		}
		if got := time.Duration(d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second; got <= drain+grace {
			t.Errorf("sluice-%s: terminationGracePeriodSeconds %s, want more than the drain delay and the grace (%s)", comp, got, drain+grace)
		}
		svc, ok := objs["Service/sluice-"+comp]
		if !ok {
			t.Errorf("no Service sluice-%s", comp)
			continue
		}
		for k, v := range svc.Spec.Selector.labels() {
			if d.Spec.Template.Metadata.Labels[k] != v {
				t.Errorf("Service sluice-%s selects %s=%s, which its pods do not carry", comp, k, v)
			}
		}
		if len(svc.Spec.Selector.labels()) == 0 {
			t.Errorf("Service sluice-%s selects nothing", comp)
		}
	}
	if d := objs["Deployment/sluice-proxy"]; d.Spec.Replicas < 2 {
		t.Errorf("sluice-proxy has %d replicas, want at least 2", d.Spec.Replicas)
	}
	pdb, ok := objs["PodDisruptionBudget/sluice-proxy"]
	if !ok || pdb.Spec.MinAvailable < 1 {
		t.Error("no PodDisruptionBudget keeping a proxy available")
	} else {
		for k, v := range pdb.Spec.Selector.labels() {
			if objs["Deployment/sluice-proxy"].Spec.Template.Metadata.Labels[k] != v {
				t.Errorf("the PodDisruptionBudget selects %s=%s, which the proxy pods do not carry", k, v)
			}
		}
	}

	for name, pod := range pods {
		if !pod.Spec.SecurityContext.RunAsNonRoot || pod.Spec.SecurityContext.RunAsUser == 0 {
			t.Errorf("%s does not run as a non-root user", name)
		}
		if len(pod.Spec.Containers) != 1 {
			t.Fatalf("%s has %d containers, want 1", name, len(pod.Spec.Containers))
		}
		c := pod.Spec.Containers[0]
		if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef.Name != "sluice-config" {
			t.Errorf("%s does not take its settings from sluice-config", name)
		}
		checkSluiceArgs(t, name, c.Args, cfg.Data)
		if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" {
			t.Errorf("%s requests %v, want cpu and memory", name, c.Resources.Requests)
		}
		// The master key file lies in the mount of the Secret's volume.
		keyFile := cfg.Data["SLUICE_MASTER_KEY_FILE"]
		found := false
		for _, m := range c.VolumeMounts {
			for _, v := range pod.Spec.Volumes {
				if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == "sluice-master-key" &&
					keyFile == m.MountPath+"/master_key" {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: SLUICE_MASTER_KEY_FILE %q is not the master_key of a mounted sluice-master-key", name, keyFile)
		}
		if name == "Job/sluice-migrate" {
			continue
		}
		port := ""
		for _, p := range c.Ports {
			if strconv.Itoa(p.ContainerPort) == listenPort {
				port = p.Name
			}
		}
		if port == "" {
			t.Errorf("%s exposes no port %s (SLUICE_LISTEN)", name, listenPort)
		}
		for kind, p := range map[string]*k8sProbe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
			if p == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port != port {
				t.Errorf("%s: %s probe %+v, want GET /healthz on port %q", name, kind, p, port)
			}
		}
	}
}
