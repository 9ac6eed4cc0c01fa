// Package bench measures the gateway's overhead against a direct call to
// the mock provider, in one run on one machine: `sluice bench`.
//
// The mock provider runs in this process together with the load
// generator; the gateway runs as a child process (`sluice serve` on a fresh
// embedded store) with GOMAXPROCS=1, pinned to the last CPU when there are
// two or more, while this process is pinned to the others. The gateway is
// configured through the admin REST API the way a user would: a tenant, a
// gateway with body logging on, an OpenAI key whose base URL is the mock,
// and a gateway token.
//
// Every figure is a comparison made in the same run: requests per second
// direct and through the gateway, the gateway's CPU time per request (from
// /proc/<pid>/stat), the latency the gateway adds at a fixed request rate
// for plain and streamed requests, and the gateway's peak RSS. Nothing here
// asserts a speed: the caller prints the figures next to the targets.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"runtime"
	"time"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Defaults of Config.
const (
	DefaultDuration    = 10 * time.Second
	DefaultRate        = 500
	DefaultConcurrency = 32

	// maxWarmup caps the discarded start of each phase: long enough to
	// open the connections and grow the gateway's pools, short enough not
	// to double a short run.
	maxWarmup = time.Second
)

// The wire names the benchmark uses: a tenant and gateway created for the
// run, and the model with its provider prefix as clients send it.
const (
	tenantID    = "bench"
	gatewaySlug = "prod"
	model       = "gpt-4o-mini"
	// streamDirective makes the mock stream its answer in five content
	// chunks, sent without delay: the first one measures the relay's
	// overhead, not the mock's pacing.
	streamDirective = "@chunks=5"
	// upstreamKey is the provider key stored in the gateway; the mock
	// accepts any bearer key.
	upstreamKey = "sk-mock-bench-upstream-0001"
)

// Config configures a run. Only Gateway is required.
type Config struct {
	// Duration is how long each of the nine phases measures (10s).
	Duration time.Duration
	// Warmup is the discarded start of each phase (a tenth of Duration, at
	// most 1s).
	Warmup time.Duration
	// Rate is the request rate of the fixed-rate phases, per second (500).
	Rate int
	// Concurrency is the number of connections of the closed-loop phases
	// and of senders in the fixed-rate phases (32).
	Concurrency int
	// Gateway is the command line that runs the sluice binary, e.g.
	// {"/usr/local/bin/sluice"}; "serve" and its flags are appended.
	Gateway []string
	// GatewayEnv is added to the gateway's environment (after the
	// benchmark's own variables, so it can override them).
	GatewayEnv []string
	// NoPin leaves the processes unpinned; by default the gateway runs on
	// the last CPU and the load generator on the others.
	NoPin bool
	// Baseline also measures a bare fasthttp pass-through (ServePassthrough,
	// run as `<Gateway> bench-passthrough`) on the gateway's CPU: the floor
	// every setup's figures are set against.
	Baseline bool
	// ClickHouseURL, when set, also measures a second gateway logging to
	// ClickHouse at that URL, after the embedded default.
	ClickHouseURL string
	// Progress receives a line as each phase starts; nil discards.
	Progress io.Writer
}

// Validate fills the defaults of unset fields and reports an invalid one.
func (c *Config) Validate() error {
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Warmup == 0 {
		c.Warmup = min(c.Duration/10, maxWarmup)
	}
	switch {
	case c.Duration < 100*time.Millisecond:
		return fmt.Errorf("duration %s is under 100ms", c.Duration)
	case c.Duration > time.Hour:
		return fmt.Errorf("duration %s is over an hour", c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("warmup %s is negative", c.Warmup)
	case c.Rate < 1 || c.Rate > 100000:
		return fmt.Errorf("rate %d/s is outside 1 to 100000", c.Rate)
	case c.Concurrency < 1 || c.Concurrency > 4096:
		return fmt.Errorf("concurrency %d is outside 1 to 4096", c.Concurrency)
	case len(c.Gateway) == 0 || c.Gateway[0] == "":
		return errors.New("no gateway command")
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// startMock validates cfg and starts the mock provider. It returns a
// context that stop ends, the mock's URL, and stop, which closes the mock.
func startMock(ctx context.Context, cfg Config) (context.Context, string, func(), error) {
	if err := cfg.Validate(); err != nil {
		return nil, "", nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, "", nil, err
	}
	return ctx, mockURL, func() { mock.Close(); cancel() }, nil
}

// pinLoad plans the CPUs, pins this process (the load) to its own unless
// cfg.NoPin, and runs it on two Ps at least; restore undoes both.
func pinLoad(cfg Config) (cpus cpuPlan, restore func(), err error) {
	cpus = planCPUs(cfg.NoPin)
	unpin := func() {}
	if len(cpus.load) > 0 {
		if unpin, err = pinSelf(cpus.load); err != nil {
			return cpuPlan{}, nil, err
		}
	}
	// Two Ps even on one CPU: the scheduling goroutine of a fixed-rate
	// phase sleeps in a system call (for a precise wake-up), and the other
	// P keeps reading responses meanwhile.
	prevProcs := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	return cpus, func() {
		runtime.GOMAXPROCS(prevProcs)
		unpin()
	}, nil
}

// Run starts the mock provider and the gateway, measures every phase and
// stops both. It returns early, with ctx's error, when ctx ends.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	ctx, mockURL, stop, err := startMock(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer stop()

	cpus, restore, err := pinLoad(cfg)
	if err != nil {
		return nil, err
	}
	defer restore()

	fmt.Fprintf(cfg.Progress, "bench: starting the gateway (%s serve)\n", cfg.Gateway[0])
	gw, err := startGateway(ctx, gatewayOptions{command: cfg.Gateway, env: cfg.GatewayEnv, cpu: cpus.gateway})
	if err != nil {
		return nil, err
	}
	defer gw.stop()
	token, err := gw.configure(ctx, mockURL+"/v1")
	if err != nil {
		return nil, err
	}

	r := &Report{
		Machine: describeMachine(cpus),
		Settings: Settings{
			DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds(),
			Rate: cfg.Rate, Concurrency: cfg.Concurrency,
			StreamModel: model + streamDirective, RequestBytes: len(chatBody("openai/"+model, false)),
		},
	}
	m := measurer{cfg: cfg, gw: gw, direct: directTargets(mockURL), gateway: gatewayTargets(gw.base, token),
		doors: doorTargets(gw.base, token)}
	if err := m.run(ctx, r); err != nil {
		return nil, err
	}
	if r.Gateway.PeakRSSBytes, err = peakRSS(gw.pid()); err != nil {
		return nil, err
	}
	if err := gw.stop(); err != nil {
		return nil, err
	}
	r.Setups = []Setup{setupFrom(setupEmbedded, r)}
	if cfg.ClickHouseURL != "" {
		if err := m.measureClickHouse(ctx, r, mockURL, cpus.gateway); err != nil {
			return nil, err
		}
	}
	if cfg.Baseline {
		if err := m.measureFloor(ctx, r, mockURL, cpus.gateway); err != nil {
			return nil, err
		}
	}
	r.OtherProcesses.sum()
	r.compareSetups()
	r.judge()
	return r, nil
}

// measurer runs the phases against the two sets of targets.
type measurer struct {
	cfg             Config
	gw              *gateway
	direct, gateway targets
	// doors are the other front doors, measured after the chat door.
	doors []doorTarget
}

// run measures the nine phases into r, in a fixed order: throughput
// (direct, gateway), plain latency (direct, gateway), streamed first chunk
// (direct, gateway), then one phase per other front door (Messages,
// native Responses, compat Responses), compared with the chat door's
// figures. Each phase also records how busy the machine's other
// processes kept it.
func (m *measurer) run(ctx context.Context, r *Report) error {
	c := m.cfg
	phaseLen := c.Warmup + c.Duration
	phase := func(name string, measure func() error) error {
		return m.phase(r, m.gw.pid(), name, phaseLen, measure)
	}
	// The gateway is idle while the direct phases run: its CPU time then
	// is its background cost (timers, the configuration poll).
	var idle []*cpuMeter
	idleMeter := func() *cpuMeter {
		cpu := m.gw.cpuMeter()
		idle = append(idle, cpu)
		return cpu
	}
	var err error
	t := &r.Throughput
	err = phase("throughput direct to the mock", func() (err error) {
		t.Direct, err = closedLoop(ctx, m.direct.plain, c.Concurrency, c.Warmup, c.Duration, idleMeter())
		return err
	})
	if err != nil {
		return err
	}
	cpu := m.gw.cpuMeter()
	err = phase("throughput through the gateway", func() (err error) {
		if t.Gateway, err = closedLoop(ctx, m.gateway.plain, c.Concurrency, c.Warmup, c.Duration, cpu); err != nil {
			return err
		}
		return cpu.drain(ctx)
	})
	if err != nil {
		return err
	}
	t.GatewayCPUS = cpu.seconds()
	t.CPUPerRequestMS = perRequestMS(cpu.seconds(), t.Gateway.Requests)
	t.Ratio = ratio(t.Gateway.PerSecond, t.Direct.PerSecond)

	fixed := func(cmp *Comparison, direct, gateway target, what string) error {
		cmp.Rate = c.Rate
		err := phase(what+" at a fixed rate, direct", func() (err error) {
			cmp.Direct, err = openLoop(ctx, direct, m.openOptions(idleMeter()))
			return err
		})
		if err != nil {
			return err
		}
		cpu := m.gw.cpuMeter()
		err = phase(what+" at a fixed rate, through the gateway", func() (err error) {
			cmp.Gateway, err = openLoop(ctx, gateway, m.openOptions(cpu))
			return err
		})
		if err != nil {
			return err
		}
		cmp.GatewayCPUPerRequestMS = perRequestMS(cpu.seconds(), cmp.Gateway.Requests)
		cmp.Added = cmp.Gateway.minus(cmp.Direct)
		return nil
	}
	if err := fixed(&r.Latency, m.direct.plain, m.gateway.plain, "latency"); err != nil {
		return err
	}
	if err := fixed(&r.Streaming, m.direct.stream, m.gateway.stream, "streamed first chunk"); err != nil {
		return err
	}
	// A door's phase has three parts, each after its own warm-up.
	phaseLen = 3*c.Warmup + c.Duration
	for _, d := range m.doors {
		err := phase("the "+d.name+" door through the gateway", func() error {
			door, err := m.measureDoor(ctx, d, r)
			r.Doors = append(r.Doors, door)
			return err
		})
		if err != nil {
			return err
		}
	}
	var idleS float64
	for _, cpu := range idle {
		idleS += cpu.seconds()
	}
	r.Gateway.IdleCPUShare = idleS / (float64(len(idle)) * c.Duration.Seconds())
	r.Gateway.CPUS, err = m.gw.cpuSeconds()
	return err
}

func (m *measurer) openOptions(cpu *cpuMeter) openOptions {
	return openOptions{rate: m.cfg.Rate, senders: m.cfg.Concurrency, warmup: m.cfg.Warmup, duration: m.cfg.Duration, cpu: cpu}
}

// targets are the plain and the streamed request to one server.
type targets struct{ plain, stream target }

func directTargets(mockURL string) targets {
	auth := "Bearer " + upstreamKey
	url := mockURL + "/v1/chat/completions"
	return targets{
		plain:  target{url: url, auth: auth, body: chatBody(model, false)},
		stream: target{url: url, auth: auth, body: chatBody(model+streamDirective, true), stream: true},
	}
}

func gatewayTargets(base, token string) targets {
	auth := "Bearer " + token
	url := base + "/v1/" + tenantID + "/" + gatewaySlug + "/compat/chat/completions"
	return targets{
		plain:  target{url: url, auth: auth, body: chatBody("openai/"+model, false)},
		stream: target{url: url, auth: auth, body: chatBody("openai/"+model+streamDirective, true), stream: true},
	}
}

// chatBody is a small chat request of the kind an application sends: a
// system and a user message.
func chatBody(model string, stream bool) []byte {
	return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"system","content":"You are a terse assistant."},`+
		`{"role":"user","content":"Say hello to the benchmark in five words."}],"stream":%t}`, model, stream)
}

func perRequestMS(cpuS float64, requests int64) float64 {
	if requests == 0 {
		return 0
	}
	return cpuS * 1000 / float64(requests)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct []byte) bool {
	mt, _, err := mime.ParseMediaType(string(ct))
	return err == nil && mt == "text/event-stream"
}

// envWithout returns env without the variables whose names start with
// prefix: the gateway must not pick up the caller's SLUICE_DATABASE_URL.
func envWithout(env []string, prefix string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if len(kv) >= len(prefix) && kv[:len(prefix)] == prefix {
			continue
		}
		out = append(out, kv)
	}
	return out
}
