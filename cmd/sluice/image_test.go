package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestContainerImage builds the image with `make image`'s script
// (scripts/image.sh: the static binary on scratch) and runs it: /healthz
// answers from inside the container, which runs as the non-root user. It
// needs buildah or podman and is skipped, saying so, without either.
// buildah runs the container with chroot isolation, which works where
// podman's runtime may not set rlimits (an unprivileged sandbox).
func TestContainerImage(t *testing.T) {
	builder := ""
	for _, b := range []string{"buildah", "podman"} {
		if _, err := exec.LookPath(b); err == nil {
			builder = b
			break
		}
	}
	if builder == "" {
		t.Skip("neither buildah nor podman is installed (Debian: apt-get install buildah): the image is not built")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	image := "localhost/sluice-test:" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + "-" + time.Now().Format("150405")
	build := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", "scripts", "image.sh"))
	build.Env = append(build.Environ(), "IMAGE="+image, "BUILDER="+builder, "VERSION=image-test")
	var stderr bytes.Buffer
	build.Stderr = &stderr
	out, err := build.Output()
	if err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, stderr.String())
	}
	if got := strings.TrimSpace(string(out)); got != image {
		t.Fatalf("scripts/image.sh printed %q, want %q", got, image)
	}
	t.Cleanup(func() { _ = exec.Command(builder, "rmi", "-f", image).Run() })

	inspect, err := exec.CommandContext(ctx, builder, "inspect", "--type", "image", image).Output()
	if err != nil {
		t.Fatalf("%s inspect: %v", builder, err)
	}
	user := imageUser(t, inspect)
	if user == "" || user == "0" || strings.HasPrefix(user, "0:") || strings.HasPrefix(user, "root") {
		t.Errorf("the image runs as %q, want a non-root user", user)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := []string{"serve", "--listen", addr}
	var run *exec.Cmd
	switch builder {
	case "buildah":
		c, err := exec.CommandContext(ctx, "buildah", "from", image).Output()
		if err != nil {
			t.Fatalf("buildah from: %v", err)
		}
		name := strings.TrimSpace(string(c))
		t.Cleanup(func() { _ = exec.Command("buildah", "rm", name).Run() })
		run = exec.Command("buildah", append([]string{"run", "--isolation", "chroot", "--network", "host", name, "--",
			"/usr/local/bin/sluice"}, args...)...)
	default:
		run = exec.Command("podman", append([]string{"run", "--rm", "--network", "host", image}, args...)...)
	}
	var logs bytes.Buffer
	run.Stdout, run.Stderr = &logs, &logs
	// Its own process group: the cleanup stops the runtime and the server.
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatalf("run the container: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})

	hc := &http.Client{Timeout: 2 * time.Second}
	var h struct {
		Status  string `json:"status"`
		Version string `json:"version"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := hc.Get("http://" + addr + "/healthz")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if err == nil && resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the container exited (%v) before /healthz answered:\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz did not answer 200 within 60 s (last error %v):\n%s", err, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if h.Status != "ok" || h.Version != "image-test" {
		t.Errorf("/healthz from the container = %+v, want status ok and version image-test", h)
	}
}

// imageUser returns the user of `buildah|podman inspect --type image`'s
// output (buildah: OCIv1.config.User; podman: a list of Config.User).
func imageUser(t *testing.T, inspect []byte) string {
	t.Helper()
	var b struct {
		OCIv1 struct {
			Config struct{ User string } `json:"config"`
		}
	}
	if err := json.Unmarshal(inspect, &b); err == nil && b.OCIv1.Config.User != "" {
		return b.OCIv1.Config.User
	}
	var p []struct{ Config struct{ User string } }
	if err := json.Unmarshal(inspect, &p); err == nil && len(p) == 1 {
		return p[0].Config.User
	}
	t.Fatalf("cannot read the user from the inspect output: %.300s", inspect)
	return ""
}
