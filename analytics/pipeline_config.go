package analytics

import (
	"errors"
	"log/slog"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Defaults of PipelineConfig.
const (
	DefaultPipelineQueue = 100_000
	// DefaultQueueBytesPerRecord makes the default QueueBytes: twice what
	// a record without bodies takes, so that the byte bound only binds
	// when bodies are logged.
	DefaultQueueBytesPerRecord = 4 << 10
	DefaultBatchSize           = 5_000
	DefaultFlushInterval       = 500 * time.Millisecond
	DefaultMaxSpillBytes       = 1 << 30
	DefaultFsyncInterval       = time.Second
	DefaultStallTimeout        = 5 * time.Second
	DefaultShutdownTimeout     = 5 * time.Second
	DefaultWriteTimeout        = 30 * time.Second
	DefaultMaxBackoff          = 30 * time.Second
)

// PipelineConfig configures a Pipeline. Zero fields take the defaults.
type PipelineConfig struct {
	// Writer stores batches (a backend). Required.
	Writer Writer
	// Dir is the spill directory, e.g. <data-dir>/spool. Required; created
	// with mode 0700 when missing. It belongs to one pipeline: two on one
	// directory would replay (and delete) each other's segments.
	Dir string
	// Queue bounds the in-memory queue in records (default 100,000). A
	// record enqueued while it is full goes to the spill instead.
	Queue int
	// QueueBytes bounds the in-memory queue in bytes, as Record.Size counts
	// them (default DefaultQueueBytesPerRecord per record of Queue: 400
	// MiB for 100,000): logged bodies make records of very different
	// sizes, and 100,000 records of two 64 KiB bodies would be 12 GiB. A record that would pass the bound goes to the spill
	// instead, as when the queue is full. The batch being written was
	// taken from the queue and is held besides it.
	QueueBytes int64
	// BatchSize is the most records one write takes (default 5,000); a full
	// batch is written at once.
	BatchSize int
	// FlushInterval is the longest a record waits for a batch to fill
	// (default 500 ms).
	FlushInterval time.Duration
	// MaxSpillBytes bounds the spill on disk (default 1 GiB). Beyond it new
	// records are dropped and counted in sluice_pipeline_dropped_total.
	MaxSpillBytes int64
	// FsyncInterval is how often the spill is fsync'd (default 1 s): the
	// spilled records a power loss or kernel crash can take.
	FsyncInterval time.Duration
	// StallTimeout is how long a write may run before the writer counts as
	// stalled (default 5 s): from then on, as while it fails, every fsync
	// tick moves the queue to the spill. Longer than the writes of a large
	// batch on a loaded server take, shorter than a SIGKILL should cost.
	StallTimeout time.Duration
	// ShutdownTimeout bounds the final flush when Run's context ends
	// (default 5 s); what is not written by then is spilled.
	ShutdownTimeout time.Duration
	// WriteTimeout bounds one Writer.Write (default 30 s).
	WriteTimeout time.Duration
	// MaxBackoff caps the wait between retries of a failed write (default
	// 30 s; the first wait is 100 ms or MaxBackoff if smaller).
	MaxBackoff time.Duration
	// Metrics receives the pipeline's metrics; nil registers none. One
	// pipeline per set: the names are fixed.
	Metrics *metrics.Set
	Logger  *slog.Logger
	// Now is the clock of the log rate limits (default time.Now).
	Now func() time.Time
}

// Validate fills the defaults of unset fields and reports an invalid one.
func (c *PipelineConfig) Validate() error {
	if c.Writer == nil {
		return errors.New("analytics pipeline: a writer is required")
	}
	if c.Dir == "" {
		return errors.New("analytics pipeline: a spill directory is required")
	}
	if c.Queue < 0 || c.QueueBytes < 0 || c.BatchSize < 0 || c.MaxSpillBytes < 0 || c.FlushInterval < 0 || c.FsyncInterval < 0 ||
		c.StallTimeout < 0 || c.ShutdownTimeout < 0 || c.WriteTimeout < 0 || c.MaxBackoff < 0 {
		return errors.New("analytics pipeline: sizes and durations must not be negative")
	}
	setDefault(&c.Queue, DefaultPipelineQueue)
	setDefault(&c.QueueBytes, int64(c.Queue)*DefaultQueueBytesPerRecord)
	setDefault(&c.BatchSize, DefaultBatchSize)
	setDefault(&c.MaxSpillBytes, DefaultMaxSpillBytes)
	setDefault(&c.FlushInterval, DefaultFlushInterval)
	setDefault(&c.FsyncInterval, DefaultFsyncInterval)
	setDefault(&c.StallTimeout, DefaultStallTimeout)
	setDefault(&c.ShutdownTimeout, DefaultShutdownTimeout)
	setDefault(&c.WriteTimeout, DefaultWriteTimeout)
	setDefault(&c.MaxBackoff, DefaultMaxBackoff)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// PipelineStats are the pipeline's figures, for /healthz.
type PipelineStats struct {
	// Queued is the records in memory: waiting, or in the batch being
	// written.
	Queued int64 `json:"queued"`
	// QueuedBytes is the size of the records waiting in the queue (the
	// batch being written not included), as Record.Size counts them.
	QueuedBytes int64 `json:"queued_bytes"`
	// SpilledBytes is the size of the spill on disk.
	SpilledBytes int64 `json:"spilled_bytes"`
	// SpilledRecords counts the records this process wrote to the spill.
	SpilledRecords int64 `json:"spilled_records"`
	// ReplayedRecords counts the spilled records written since start-up.
	ReplayedRecords int64 `json:"replayed_records"`
	// WrittenRecords counts every record written since start-up, replayed
	// ones included.
	WrittenRecords int64 `json:"written_records"`
	// DroppedRecords counts the records lost: spill budget exhausted, disk
	// full, or a corrupt or torn spill record.
	DroppedRecords int64 `json:"dropped_records"`
	// LastError is the error of the last failed write, "" once a write
	// succeeds again.
	LastError string `json:"last_error,omitempty"`
	// WriterHealthy is false from a failed write to the next success.
	WriterHealthy bool `json:"writer_healthy"`
}
