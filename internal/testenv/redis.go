package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisURL returns the test Redis's URL from SLUICE_TEST_REDIS_URL,
// skipping (or, under CI=true, failing) the test when there is none.
// scripts/ensure-services.sh sets it (database 15).
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("SLUICE_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SLUICE_TEST_REDIS_URL is not set; CI requires Redis (run the tests through `make test`)")
		}
		t.Skip("SLUICE_TEST_REDIS_URL not set; run `make test` (or source scripts/ensure-services.sh && ensure_services) to test against Redis")
	}
	return u
}

// Redis returns a client of the test Redis and a key prefix unique to the
// test ("sluice-test:<hex>:"). Every key under the prefix is deleted and
// the client closed at cleanup.
func Redis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	opts, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatalf("parse SLUICE_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		t.Fatalf("ping redis: %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "sluice-test:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			_ = c.Del(ctx, iter.Val()).Err()
		}
		_ = c.Close()
	})
	return c, prefix
}
