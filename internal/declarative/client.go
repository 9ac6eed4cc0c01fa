package declarative

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls the admin API with one user token.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client of the admin API at base (http://host:port)
// that authenticates with token.
func NewClient(base, token string) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server %q: want an http(s) URL such as http://localhost:8080", base)
	}
	if token == "" {
		return nil, errors.New("no token: set SLUICE_TOKEN to a user token")
	}
	return &Client{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Timeout: time.Minute}}, nil
}

// APIError is an error answer of the admin API, carrying the server's
// message (which never holds a secret).
type APIError struct {
	Method, Path string
	Status       int
	Code         string
	Message      string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// isNotFound reports whether err is a 404 of the admin API.
func isNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// isForbidden reports whether err is a 403 of the admin API.
func isForbidden(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusForbidden
}

// do sends one admin request with body (nil: none) and decodes a JSON
// answer into out (nil: discarded).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if res.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		if e.Error.Message == "" {
			e.Error.Message = http.StatusText(res.StatusCode)
		}
		return &APIError{Method: method, Path: path, Status: res.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// get reads one object.
func (c *Client) get(ctx context.Context, path string) (Object, error) {
	var o Object
	if err := c.do(ctx, http.MethodGet, path, nil, &o); err != nil {
		return nil, err
	}
	return o, nil
}

// list reads every page of a list path.
func (c *Client) list(ctx context.Context, path string) ([]Object, error) {
	var all []Object
	cursor := ""
	for {
		q := url.Values{"limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Data       []Object `json:"data"`
			NextCursor *string  `json:"next_cursor"`
		}
		if err := c.do(ctx, http.MethodGet, path+"?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return all, nil
		}
		cursor = *page.NextCursor
	}
}

// onePage reads a list path that answers in one page and takes no limit.
func (c *Client) onePage(ctx context.Context, path string) ([]Object, error) {
	var page struct {
		Data []Object `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, path, nil, &page); err != nil {
		return nil, err
	}
	return page.Data, nil
}

// isOwnToken reports whether a token shown as prefix and last4 is the
// one the client authenticates with.
func (c *Client) isOwnToken(prefix, last4 string) bool {
	return prefix != "" && strings.HasPrefix(c.token, prefix) && strings.HasSuffix(c.token, last4)
}

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }
